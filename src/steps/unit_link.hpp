#pragma once
// Whether a systemd unit is really enabled: judged by the wants link systemd follows at boot,
// not by the link's mere presence.
#include <gpuprov/system.hpp>
#include <string>
#include <string_view>

namespace gpuprov::steps {

/// Empty when `unit` is enabled for `target` the way systemctl enables it: a symbolic link in
/// /etc/systemd/system/<target>.wants/ to the unit file systemd loads (/etc/systemd/system's
/// copy when there is one, else the packaged one under /lib or /usr/lib), which exists.
/// Otherwise what is wrong, in a few words ("no wants link", "the link points at ...").
[[nodiscard]] std::string unit_link_problem(const System& sys, std::string_view unit,
                                            std::string_view target = "multi-user.target");

/// Enables `unit` unless unit_link_problem says it already is; a wrong link is removed first,
/// since `systemctl enable` refuses to replace a link it did not make.
void ensure_unit_enabled(System& sys, std::string_view unit, bool start,
                         std::string_view target = "multi-user.target");

} // namespace gpuprov::steps
