#pragma once
// Checks for strings that end up in files written on the host or in argv. Each throws a
// ProfileError at `at` naming the key (`what`), what was expected and how to fix it.
#include "internal.hpp"

#include <string>
#include <string_view>

namespace gpuprov::profile_detail {

/// No control characters, whitespace, non-ASCII bytes or shell metacharacters. gpuprov never
/// uses a shell, but these values reach file contents and argv of tools that might.
void check_safe(std::string_view value, const SourcePos& at, const std::string& what);
/// Free text (description): anything printable on one line.
void check_one_line(std::string_view value, const SourcePos& at, const std::string& what);
/// https:// (http:// only when `allow_insecure`), a host, {distro} {arch} {pkgarch} templates.
void check_url(std::string_view value, bool allow_insecure, const SourcePos& at,
               const std::string& what);
/// An absolute path without `..` components.
void check_abs_path(std::string_view value, const SourcePos& at, const std::string& what);
/// A node of an IMEX domain: an IPv4 or IPv6 address, or a host name (RFC 1123 labels).
void check_node_address(std::string_view value, const SourcePos& at, const std::string& what);
/// 40 hex digits, spaces allowed; returns them upper case without spaces.
[[nodiscard]] std::string normalise_fingerprint(std::string_view value, const SourcePos& at,
                                                const std::string& what);

} // namespace gpuprov::profile_detail
