#include "runfile_driver.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

bool block_on_runfile_driver(const StepContext& ctx, CheckResult& r) {
    if (!ctx.facts.runfile_driver) {
        return false;
    }
    const auto& run = *ctx.facts.runfile_driver;
    const bool has_installer =
        std::any_of(run.evidence.begin(), run.evidence.end(),
                    [](const std::string& e) { return starts_with(e, "/usr/bin/nvidia-"); });
    // The .run file's own uninstaller removes what it installed; without it on the host, the
    // same .run file does (NVIDIA-Linux-<arch>-<version>.run --uninstall).
    const auto uninstall = has_installer
                               ? std::string("sudo nvidia-installer --uninstall")
                               : fmt::format("sudo sh NVIDIA-Linux-{}-{}.run --uninstall",
                                             ctx.facts.arch.empty() ? "x86_64" : ctx.facts.arch,
                                             run.version.empty() ? "<version>" : run.version);
    r.status = StepStatus::blocked;
    r.reason = fmt::format(
        "a driver{} installed with NVIDIA's .run installer is on this host ({}); installing the "
        "driver packages over it makes them overwrite each other's libraries and kernel module. "
        "Remove it first: {}, reboot, then run gpuprov apply {} again",
        run.version.empty() ? "" : " " + run.version, join(run.evidence, "; "), uninstall,
        ctx.profile.name);
    return true;
}

} // namespace gpuprov::steps
