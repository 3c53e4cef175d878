#pragma once
#include <string>
#include <string_view>

namespace gpuprov {

/// "sha256:<lower-case hex>" of `data`: how gpuprov names a content it compares later (a saved
/// plan's profile and signed indexes).
[[nodiscard]] std::string content_digest(std::string_view data);

} // namespace gpuprov
