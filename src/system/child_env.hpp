#pragma once
// The environment and executable a child gets: the same, whoever runs gpuprov.
#include <gpuprov/system.hpp>
#include <string>
#include <vector>

namespace gpuprov::detail {

/// What every child starts with: sudo's secure_path, so a PATH from whoever started gpuprov
/// never decides which apt, dpkg or modprobe runs.
inline constexpr const char* kChildPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The child's environment as NAME=VALUE strings: PATH=kChildPath, HOME, the allow-listed
/// variables of gpuprov's own environment (`parent`, NAME=VALUE strings), then Command::env on
/// top. `euid` decides HOME: root's home for root, the caller's own HOME otherwise.
[[nodiscard]] std::vector<std::string>
child_environment(const Command& cmd, const std::vector<std::string>& parent, unsigned euid);

/// Whether a variable of gpuprov's environment reaches children.
[[nodiscard]] bool inherited_by_children(const std::string& name);

/// argv[0] as it will be executed: a name with a slash as given, otherwise the first
/// executable regular file of that name in the child's PATH (the PATH entry of `env`);
/// empty when there is none.
[[nodiscard]] std::string find_executable(const std::string& name,
                                          const std::vector<std::string>& env);

} // namespace gpuprov::detail
