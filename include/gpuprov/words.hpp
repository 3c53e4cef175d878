#pragma once
// Whitespace-column splitting shared by the parsers of nvidia-smi's tables, os-release,
// nccl-tests' results and apt's one-line sources.
// Kept out of strings.hpp, which nearly every file includes: only these parsers need it.
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// The words of `s` between spaces and tabs, each trimmed, empty ones dropped: the columns of
/// nvidia-smi's tables and of nccl-tests' results, ID_LIKE's list, a sources.list line.
[[nodiscard]] std::vector<std::string> split_words(std::string_view s);

} // namespace gpuprov
