#pragma once
#include <string>
#include <string_view>

namespace gpuprov {

/// "sha256:<lower-case hex>" of `data`: how gpuprov names a content it compares later (a saved
/// plan's profile and signed indexes).
[[nodiscard]] std::string content_digest(std::string_view data);
/// SHA-256 of `data` as lower-case hex, as apt's indexes, dnf's primary.xml and a bundle's
/// manifest write it.
[[nodiscard]] std::string sha256_hex(std::string_view data);

} // namespace gpuprov
