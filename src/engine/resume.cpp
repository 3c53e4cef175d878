#include "resume.hpp"

#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/local_trust.hpp>
#include <gpuprov/strings.hpp>
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

// The only things a unit may run at boot: gpuprov's installed binary (the package's or its own
// copy) and a built-in profile or the copy apply installed under /etc/gpuprov/resume/; never the
// build tree or /tmp file the operator ran, which may be gone or changed by then.
bool installed_binary(const std::string& path) {
    return path == "/usr/bin/gpuprov" || path == "/usr/local/bin/gpuprov";
}

bool installed_profile(const std::string& profile) {
    return profile.find('/') == std::string::npos ||
           (profile.rfind(kInstalledProfileDir, 0) == 0 &&
            profile.find('/', std::string_view(kInstalledProfileDir).size()) == std::string::npos);
}

} // namespace

std::string resume_exec_start(const ResumeCommand& cmd) {
    if (cmd.rollback) {
        if (!plain_path(cmd.gpuprov_path) || !installed_binary(cmd.gpuprov_path)) {
            throw HostError(fmt::format("cannot set up resume after reboot: the unit would run "
                                        "{}, not the installed /usr/bin/gpuprov or "
                                        "/usr/local/bin/gpuprov",
                                        cmd.gpuprov_path));
        }
        return fmt::format("{} rollback --yes --reboot {}", cmd.gpuprov_path,
                           cmd.reboot_if_needed ? "if-needed" : "never");
    }
    for (const auto* word : {&cmd.gpuprov_path, &cmd.profile}) {
        if (!plain_path(*word)) {
            throw HostError(fmt::format(
                "cannot set up resume after reboot: '{}' has characters other than letters, "
                "digits, '.', '_', '/', '-'; move the profile or binary to a plain path",
                *word));
        }
    }
    if (!installed_binary(cmd.gpuprov_path)) {
        throw HostError(fmt::format("cannot set up resume after reboot: the unit would run {}, "
                                    "not the installed /usr/bin/gpuprov or /usr/local/bin/gpuprov",
                                    cmd.gpuprov_path));
    }
    if (!installed_profile(cmd.profile) || cmd.profile.find("..") != std::string::npos) {
        throw HostError(fmt::format("cannot set up resume after reboot: the unit would read the "
                                    "profile {}, not a built-in one or the copy under {}",
                                    cmd.profile, kInstalledProfileDir));
    }
    // The filters and the reboot policy travel with the run: a resumed `apply --skip
    // monitoring --reboot never` must not install monitoring or reboot by itself.
    auto line = fmt::format("{} {} {} --yes --reboot {}", cmd.gpuprov_path,
                            cmd.upgrade ? "upgrade" : "apply", cmd.profile,
                            cmd.reboot_if_needed ? "if-needed" : "never");
    for (const auto& [flag, ids] :
         {std::pair{"--only", &cmd.only}, std::pair{"--skip", &cmd.skip}}) {
        if (ids->empty()) {
            continue;
        }
        std::string list;
        for (const auto& id : *ids) {
            if (!plain_path(id)) {
                throw HostError(fmt::format("cannot set up resume after reboot: step id '{}'", id));
            }
            list += (list.empty() ? "" : ",") + id;
        }
        line += fmt::format(" {} {}", flag, list);
    }
    if (cmd.allow_remove) {
        line += " --allow-remove";
    }
    if (!cmd.bundle_dir.empty() || !cmd.bundle_key.empty()) {
        // An air-gapped host has nothing but the bundle after the reboot too; the resumed run
        // opens and checks it again (key, signed manifest, every file's hash) before it uses it.
        check_resume_bundle(cmd.bundle_dir, cmd.bundle_key);
        line += fmt::format(" --from-bundle {} --bundle-key {}", cmd.bundle_dir, cmd.bundle_key);
    }
    return line;
}

void check_resume_bundle(const std::string& dir, const std::string& key) {
    if (!plain_path(dir) || dir.front() != '/' || dir.find("..") != std::string::npos) {
        throw HostError(fmt::format(
            "a resume after a reboot could not name the bundle directory '{}': use a bundle at "
            "an absolute path of letters, digits, '.', '_', '/', '-' (or its FILE.tar, whose "
            "extracted copy is one); nothing was changed",
            dir));
    }
    if (key.size() != 40 || key.find_first_not_of("0123456789ABCDEF") != std::string::npos) {
        throw HostError(fmt::format("a resume after a reboot could not name bundle key '{}': "
                                    "not a 40-digit upper-case fingerprint; nothing was changed",
                                    key));
    }
}

void install_resume_unit(System& sys, const ResumeCommand& cmd) {
    const auto exec_start = resume_exec_start(cmd);
    // What runs as root at every boot until the run finishes: only root may have written it.
    // (A missing file is apply's to install; the unit would then fail, not run a stranger's.)
    if (sys.exists(cmd.gpuprov_path)) {
        require_trusted(sys, cmd.gpuprov_path, "binary the resume unit would run");
    }
    if (cmd.profile.find('/') != std::string::npos && sys.exists(cmd.profile)) {
        require_trusted(sys, cmd.profile, "profile the resume unit would read");
    }
    const auto unit =
        fmt::format("{}[Unit]\n"
                    "Description=Finish gpuprov provisioning after the reboot the driver needed\n"
                    "Wants=network-online.target\n"
                    "After=network-online.target\n"
                    // cloud-init's final stage (its per-boot scripts) waits for the resumed
                    // run, so `cloud-init status --wait` reports it (docs/cloud-init.md).
                    "Before=cloud-final.service\n\n"
                    "[Service]\n"
                    "Type=oneshot\n"
                    "ExecStart={}\n"
                    "StandardOutput=journal+console\n\n"
                    "[Install]\n"
                    "WantedBy=multi-user.target\n",
                    steps::kManagedHeader, exec_start);
    sys.write_file_atomic(kResumeUnitPath, unit, 0644);
    if (steps::have_systemctl(sys)) {
        (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
    }
    steps::enable_unit(sys, kResumeUnit, false);
}

std::string retire_resume_unit(System& sys) {
    const auto unit = sys.read_file(kResumeUnitPath);
    if (!unit) {
        return {};
    }
    std::string command;
    for (const auto& line : lines(*unit)) {
        if (starts_with(line, "ExecStart=")) {
            command = std::string(line.substr(std::string_view("ExecStart=").size()));
        }
    }
    remove_resume_unit(sys);
    if (command.empty()) {
        return fmt::format("{} was removed (it named no command)", kResumeUnit);
    }
    return fmt::format("{} was removed so that a failed run does not repeat at every boot; "
                       "once the cause is fixed, resume by hand: sudo {}",
                       kResumeUnit, command);
}

std::string install_resume_profile(System& sys, const std::string& name, const std::string& text,
                                   const std::string& profile_arg) {
    const auto path = installed_profile_path(name);
    if (path == profile_arg) {
        return path; // the resumed run itself: its copy is already there
    }
    const auto wanted =
        starts_with(text, kResumeProfileHeader) ? text : kResumeProfileHeader + text;
    const auto current = sys.read_file(path);
    if (current == wanted) {
        return path;
    }
    if (current && !starts_with(*current, kResumeProfileHeader)) {
        throw HostError(fmt::format(
            "cannot set up resume after reboot: {} is in the way and gpuprov did not write it "
            "(its first line is not gpuprov's header); move it elsewhere, then run apply again",
            path));
    }
    sys.write_file_atomic(path, wanted, 0644);
    return path;
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
