#pragma once
// Local trust: gpuprov runs as root, and a profile picks the repository URL and the key
// fingerprint, so whoever can write the profile picks what root installs. As root, a profile,
// its extends: parents and the binary the units run are accepted only when no one but root
// could have written them (the rule OpenSSH's StrictModes and sudo apply to their files).
#include <filesystem>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov {

/// Why someone other than root could have written `path` (absolute), or nullopt when only root
/// could: the file and every directory above it (links followed, each link checked too) are
/// owned by root and writable by no group or other user, except that a directory with the
/// sticky bit (/tmp) may be, since there only an entry's owner can rename or remove it. The
/// file must be a regular file. The reason names the path, its owner and mode, and the fix.
[[nodiscard]] std::optional<std::string> untrusted_reason(const System& sys,
                                                          const std::filesystem::path& path);

/// Throws HostError unless untrusted_reason() is empty: "refusing the <what> <reason>; ... or
/// pass --allow-untrusted".
void require_trusted(const System& sys, const std::filesystem::path& path, std::string_view what);

} // namespace gpuprov
