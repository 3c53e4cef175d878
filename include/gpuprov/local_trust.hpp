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

/// What the last component of a checked path must be.
enum class TrustedKind {
    file,      ///< a regular file: a profile, a program
    directory, ///< a directory: where root is about to put a program, or python's site-packages
};

/// Why someone other than root could have written `path` (absolute), or nullopt when only root
/// could: the file and every directory above it (links followed, each link checked too) are
/// owned by root and writable by no group or other user, except that a directory above it with
/// the sticky bit (/tmp) may be, since there only an entry's owner can rename or remove it. The
/// path itself must be a regular file (or, for TrustedKind::directory, a directory that no
/// group or other user can write, sticky or not: they could add entries to it). The reason
/// names the path, its owner and mode, and the fix.
[[nodiscard]] std::optional<std::string> untrusted_reason(const System& sys,
                                                          const std::filesystem::path& path,
                                                          TrustedKind kind = TrustedKind::file);

/// Throws HostError unless untrusted_reason() is empty: "refusing the <what> <reason>; ... or
/// pass --allow-untrusted".
void require_trusted(const System& sys, const std::filesystem::path& path, std::string_view what,
                     TrustedKind kind = TrustedKind::file);

} // namespace gpuprov
