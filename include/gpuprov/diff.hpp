#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov {

/// A unified diff (`--- a/path`, `+++ b/path`, hunks with 3 lines of context) from `before`
/// (nullopt: the file does not exist yet) to `after`. Empty when they are equal.
[[nodiscard]] std::string unified_diff(std::string_view path,
                                       const std::optional<std::string>& before,
                                       std::string_view after);

} // namespace gpuprov
