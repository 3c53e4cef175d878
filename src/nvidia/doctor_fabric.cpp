// Fabric findings: fabric manager refusing the loaded driver. Its version must equal the
// driver's exactly (fabric manager user guide); after a driver upgrade without a reboot, or an FM
// from another archive than the driver's, it logs the mismatch and exits, and every CUDA call on
// the NVSwitch host then fails with error 802 while nvidia-smi looks healthy.
#include "doctor_parts.hpp"

#include <fmt/format.h>
#include <gpuprov/smi_fabric.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

/// Fabric manager installed (any of NVIDIA's names for it): only then is its journal read.
bool fabric_manager_installed(const HostFacts& facts) {
    for (const auto& [name, version] : facts.packages) {
        if (starts_with(name, "nvidia-fabricmanager") ||
            starts_with(name, "nvidia-fabric-manager") ||
            starts_with(name, "cuda-drivers-fabricmanager")) {
            return true;
        }
    }
    return false;
}

} // namespace

void diagnose_fabric(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!fabric_manager_installed(ctx.facts)) {
        return;
    }
    // This boot's lines only (-b): a mismatch before the last reboot says nothing now.
    const std::vector<std::string> argv = {
        "journalctl", "-u", "nvidia-fabricmanager", "-b", "--no-pager", "-n", "200"};
    const auto r = probe(ctx.sys, argv);
    if (!r.ok()) {
        return; // no journal, or no such unit: nothing to say
    }
    const auto m = parse_fm_version_mismatch(r.out);
    if (!m) {
        return;
    }
    // Started since (a reboot into the matching module, FM reinstalled): the line is history.
    const auto active = probe(ctx.sys, {"systemctl", "is-active", "nvidia-fabricmanager"});
    if (trim(active.out) == "active") {
        return;
    }
    Finding f{.id = "fabric-manager-version-skew", .severity = "error"};
    f.summary =
        fmt::format("fabric manager {} refuses the loaded driver {}: its version must equal "
                    "the driver's, so it is not running and the NVSwitch GPUs never join "
                    "the fabric (CUDA error 802)",
                    m->fabric_manager, m->driver);
    f.evidence.push_back({display_argv(argv), m->line});
    const bool module_is_older = ctx.facts.driver && ctx.facts.driver->version == m->driver;
    f.fix = fmt::format(
        "if the driver on disk is already {0} (a driver upgrade without a reboot), reboot or "
        "reload the nvidia modules so {0} is loaded; otherwise install fabric manager at exactly "
        "the driver's version ({1}): {2}",
        m->fabric_manager, m->driver, apply_hint(ctx.options, "fabric-manager"));
    if (module_is_older) {
        f.evidence.push_back({"/proc/driver/nvidia/version", "loaded: " + m->driver});
    }
    out.push_back(std::move(f));
}

} // namespace gpuprov::nvidia_detail
