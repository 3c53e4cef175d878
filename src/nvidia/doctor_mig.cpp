// MIG findings: a GPU whose MIG mode is pending. `nvidia-smi -i N -mig 1` on an A100 (and on
// any GPU in use) only sets the pending mode, which takes effect at a GPU reset or a reboot
// (NVIDIA MIG user guide); until then no GPU instance can be made and the profile's layout
// (docs/mig.md) is missing.
#include "doctor_parts.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

void diagnose_mig(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!ctx.smi.result.ok()) {
        return; // the driver findings say why nvidia-smi does not answer
    }
    const std::vector<std::string> argv = {"nvidia-smi",
                                           "--query-gpu=index,mig.mode.current,mig.mode.pending",
                                           "--format=csv,noheader"};
    const auto r = probe(ctx.sys, argv);
    if (!r.ok()) {
        return;
    }
    for (const auto& line : split(r.out, '\n')) {
        const auto f = split(line, ',');
        if (f.size() != 3) {
            continue;
        }
        const auto index = trim(f[0]);
        const auto current = trim(f[1]);
        const auto pending = trim(f[2]);
        if ((current != "Enabled" && current != "Disabled") || current == pending) {
            continue; // [N/A]: no MIG on this GPU
        }
        Finding finding{.id = "mig-mode-pending", .severity = "warning"};
        finding.summary = fmt::format(
            "GPU {}: MIG mode is {} but {} is pending until the GPU is reset or the host "
            "reboots, so no MIG layout can be made on it now",
            index, to_lower(current), to_lower(pending));
        finding.evidence.push_back({display_argv(argv), std::string(trim(line))});
        finding.fix = fmt::format(
            "stop what uses GPU {0} and reset it (sudo nvidia-smi -i {0} -r), or reboot; "
            "gpuprov-mig.service then creates the profile's layout (docs/mig.md)",
            index);
        out.push_back(std::move(finding));
    }
}

} // namespace gpuprov::nvidia_detail
