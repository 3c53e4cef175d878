#include "resume.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/units.hpp>

namespace gpuprov::detail {

namespace {

// The unit's ExecStart is parsed by systemd, not a shell; still, only plain path characters
// are let through so nothing in a profile path can change the command.
bool plain_path(const std::string& s) {
    return !s.empty() &&
           s.find_first_not_of(
               "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") ==
               std::string::npos;
}

} // namespace

void install_resume_unit(System& sys, const std::string& gpuprov_path,
                         const std::string& profile_arg) {
    if (!plain_path(gpuprov_path) || !plain_path(profile_arg)) {
        throw HostError(fmt::format(
            "cannot set up resume after reboot: profile path '{}' has characters other than "
            "letters, digits, '.', '_', '/', '-'; move the profile to a plain path",
            profile_arg));
    }
    const auto unit =
        fmt::format("{}[Unit]\n"
                    "Description=Finish gpuprov provisioning after the reboot the driver needed\n"
                    "Wants=network-online.target\n"
                    "After=network-online.target\n\n"
                    "[Service]\n"
                    "Type=oneshot\n"
                    "ExecStart={} apply {} --yes --reboot if-needed\n"
                    "StandardOutput=journal+console\n\n"
                    "[Install]\n"
                    "WantedBy=multi-user.target\n",
                    steps::kManagedHeader, gpuprov_path, profile_arg);
    sys.write_file_atomic(kResumeUnitPath, unit, 0644);
    if (steps::have_systemctl(sys)) {
        (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
    }
    steps::enable_unit(sys, kResumeUnit, false);
}

void remove_resume_unit(System& sys) {
    if (!sys.exists(kResumeUnitPath)) {
        return;
    }
    steps::disable_unit(sys, kResumeUnit);
    sys.remove_file(kResumeUnitPath);
    if (steps::have_systemctl(sys)) {
        (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
    }
}

} // namespace gpuprov::detail
