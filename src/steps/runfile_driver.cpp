#include "runfile_driver.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

using namespace std::chrono_literals;

// The .run file installs nvidia-installer as /usr/bin/nvidia-installer "which may be used at
// some later time to uninstall drivers", with /usr/bin/nvidia-uninstall as its uninstall entry
// point (NVIDIA's README, chapter "Installing the NVIDIA Driver",
// https://download.nvidia.com/XFree86/Linux-x86_64/<version>/README/installdriver.html).
// `nvidia-installer --help`: `--uninstall` removes the installed driver, `-s, --silent` runs
// without questions (errors still printed); the uninstall is logged to
// /var/log/nvidia-uninstall.log.
constexpr const char* kInstaller = "/usr/bin/nvidia-installer";
constexpr const char* kUninstall = "/usr/bin/nvidia-uninstall";
constexpr const char* kUninstallLog = "/var/log/nvidia-uninstall.log";

/// The fix a human runs: the installer on the host, or the same .run file.
std::string manual_uninstall(const StepContext& ctx, const RunfileDriver& run, bool installer) {
    return installer ? std::string("sudo nvidia-installer --uninstall")
                     : fmt::format("sudo sh NVIDIA-Linux-{}-{}.run --uninstall",
                                   ctx.facts.arch.empty() ? "x86_64" : ctx.facts.arch,
                                   run.version.empty() ? "<version>" : run.version);
}

std::string driver_words(const RunfileDriver& run) {
    return run.version.empty() ? std::string("a driver") : "a driver " + run.version;
}

} // namespace

std::optional<Command> runfile_uninstall_command(const StepContext& ctx, const System& sys) {
    if (!ctx.facts.runfile_driver || !ctx.profile.driver || !ctx.profile.driver->replace_runfile) {
        return std::nullopt;
    }
    // The uninstall may rebuild the initramfs and restore the files the installer backed up;
    // killed half way it would leave a driver neither it nor the packages own, so it finishes
    // on a stop request, as a package transaction does.
    Command cmd{.timeout = 600s, .finish_on_stop = true};
    if (sys.exists(kInstaller)) {
        cmd.argv = {kInstaller, "--uninstall", "--silent"};
    } else if (sys.exists(kUninstall)) {
        cmd.argv = {kUninstall, "--silent"};
    } else {
        return std::nullopt;
    }
    return cmd;
}

bool block_on_runfile_driver(const StepContext& ctx, const System& sys, CheckResult& r) {
    if (!ctx.facts.runfile_driver) {
        return false;
    }
    const auto& run = *ctx.facts.runfile_driver;
    if (const auto cmd = runfile_uninstall_command(ctx, sys)) {
        r.changes.insert(
            r.changes.begin(),
            Change{.kind = Change::Kind::command,
                   .target = display_argv(cmd->argv),
                   .detail = fmt::format("driver.replace_runfile: remove {} that "
                                         "NVIDIA's .run installer put here ({}) "
                                         "before the driver packages are installed",
                                         driver_words(run), join(run.evidence, "; "))});
        r.status = StepStatus::pending;
        r.reason =
            fmt::format("replaces the runfile-installed {} with the packages", driver_words(run));
        return false;
    }
    const bool installer = sys.exists(kInstaller) || sys.exists(kUninstall);
    const bool replace = ctx.profile.driver && ctx.profile.driver->replace_runfile;
    r.status = StepStatus::blocked;
    r.reason = fmt::format(
        "{} installed with NVIDIA's .run installer is on this host ({}); installing the "
        "driver packages over it makes them overwrite each other's libraries and kernel module. "
        "{}Remove it first: {}, reboot, then run gpuprov apply {} again{}",
        driver_words(run), join(run.evidence, "; "),
        replace ? "driver.replace_runfile is set, but the .run installer's own uninstaller "
                  "(/usr/bin/nvidia-installer, /usr/bin/nvidia-uninstall) is not on this host, "
                  "and gpuprov cannot tell which files are the runfile's: it cannot remove them "
                  "safely. "
                : "",
        manual_uninstall(ctx, run, installer), ctx.profile.name,
        replace || !installer ? ""
                              : " (or set driver.replace_runfile: true and apply runs the "
                                "runfile's uninstaller before installing the packages)");
    return true;
}

void remove_runfile_driver(const StepContext& ctx, System& sys) {
    const auto cmd = runfile_uninstall_command(ctx, sys);
    if (!cmd) {
        return;
    }
    const auto result = sys.run(*cmd);
    if (!result.ok()) {
        const auto log = sys.read_file(kUninstallLog);
        const auto output = std::string(trim(tail_lines(result.err + result.out, 8)));
        throw HostError(fmt::format(
            "`{}` {}; no driver package was installed{}{}{}. Fix what it reports, or remove the "
            "runfile driver by hand ({}), then run apply again",
            display_argv(cmd->argv),
            result.not_found   ? std::string("could not be started")
            : result.timed_out ? fmt::format("timed out after {} s", cmd->timeout.count() / 1000)
                               : fmt::format("exited {}", result.exit_code),
            output.empty() ? "" : ":\n" + output,
            log ? fmt::format("\n{} ends:\n", kUninstallLog) : std::string(),
            log ? std::string(trim(tail_lines(*log, 8))) : std::string(),
            manual_uninstall(ctx, *ctx.facts.runfile_driver, true)));
    }
    if (const auto left = detect_runfile_driver(sys, ctx.facts.packages)) {
        throw HostError(fmt::format(
            "`{}` ran but left the runfile driver behind: {}; no driver package was installed. "
            "Remove what is left by hand (or with the .run file: {}), then run apply again",
            display_argv(cmd->argv), join(left->evidence, "; "),
            manual_uninstall(ctx, *ctx.facts.runfile_driver, false)));
    }
}

} // namespace gpuprov::steps
