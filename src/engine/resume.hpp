#pragma once
#include <gpuprov/system.hpp>
#include <set>
#include <string>

namespace gpuprov::detail {

inline constexpr const char* kResumeUnit = "gpuprov-resume.service";
inline constexpr const char* kResumeUnitPath = "/etc/systemd/system/gpuprov-resume.service";
/// Where apply installs the profile file the resume unit reads (installed_profile_path()).
inline constexpr const char* kInstalledProfileDir = "/etc/gpuprov/";

/// What the resume unit runs after the reboot: the same apply as the run that asked for it.
struct ResumeCommand {
    std::string gpuprov_path; ///< units_gpuprov_path(): never ./build/gpuprov or /proc/self/exe
    std::string profile;      ///< a built-in name or the profile installed under /etc/gpuprov/
    std::set<std::string> only;
    std::set<std::string> skip;
    bool reboot_if_needed = false;
    bool allow_remove = false;
};

/// The unit's ExecStart= value, e.g. `/usr/local/bin/gpuprov apply /etc/gpuprov/x.yaml --yes
/// --reboot never --skip monitoring`. Throws HostError when a path or id has characters other
/// than [A-Za-z0-9._/-] (systemd would split or expand them), when the binary is not
/// /usr/bin/gpuprov or /usr/local/bin/gpuprov, or the profile neither a built-in name nor a
/// file directly under /etc/gpuprov/.
[[nodiscard]] std::string resume_exec_start(const ResumeCommand& cmd);

/// Installs and enables the oneshot unit that re-runs apply on the next boot; throws HostError
/// (require_trusted) when someone other than root could have written its binary or profile.
void install_resume_unit(System& sys, const ResumeCommand& cmd);
/// Disables and removes it (after a run that finished); no-op when absent.
void remove_resume_unit(System& sys);

} // namespace gpuprov::detail
