#pragma once
// systemd units and files gpuprov manages, shared by the steps and the engine's resume unit.
#include <gpuprov/system.hpp>
#include <string_view>

namespace gpuprov::steps {

/// First line of every file gpuprov writes and owns.
inline constexpr const char* kManagedHeader = "# Managed by gpuprov; local edits are replaced.\n";

/// systemd: whether `unit` is enabled for `target` (its WantedBy=), i.e. the wants link exists.
[[nodiscard]] bool unit_enabled(const System& sys, std::string_view unit,
                                std::string_view target = "multi-user.target");
/// Enables (and with `start`, starts) a unit with systemctl; where systemd is not installed
/// (containers, chroots) the wants link is made directly so the next boot still starts it.
void enable_unit(System& sys, std::string_view unit, bool start,
                 std::string_view target = "multi-user.target");
void disable_unit(System& sys, std::string_view unit,
                  std::string_view target = "multi-user.target");
[[nodiscard]] bool have_systemctl(const System& sys);

} // namespace gpuprov::steps
