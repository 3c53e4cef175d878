#pragma once
// Whitespace-column splitting shared by the parsers of nvidia-smi's tables and os-release.
// Kept out of strings.hpp, which nearly every file includes: only these parsers need it.
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// The space-separated words of `s`, each trimmed, empty ones dropped: the columns of
/// nvidia-smi's tables, ID_LIKE's list.
[[nodiscard]] std::vector<std::string> split_words(std::string_view s);

} // namespace gpuprov
