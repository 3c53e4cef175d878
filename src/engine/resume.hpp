#pragma once
#include <gpuprov/system.hpp>
#include <string>

namespace gpuprov::detail {

inline constexpr const char* kResumeUnit = "gpuprov-resume.service";
inline constexpr const char* kResumeUnitPath = "/etc/systemd/system/gpuprov-resume.service";

/// Installs and enables the oneshot unit that re-runs apply on the next boot.
void install_resume_unit(System& sys, const std::string& gpuprov_path,
                         const std::string& profile_arg);
/// Disables and removes it (after a run that finished); no-op when absent.
void remove_resume_unit(System& sys);

} // namespace gpuprov::detail
