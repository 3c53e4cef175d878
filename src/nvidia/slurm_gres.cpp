// `gpuprov slurm-gres`: gres.conf and the node's Gres= value for the GPUs nvidia-smi sees.
// Slurm's side (https://slurm.schedmd.com/gres.conf.html, AutoDetect; gres.html, "MIG
// Management"): with `AutoDetect=nvml` slurmd reads the GPUs, their device files, CPU affinity
// and NVLinks from NVML itself, and slurm.conf still declares `GresTypes=gpu` and each node's
// `Gres=gpu:<type>:<count>`, which must match what slurmd detects or the node is drained. The
// type names follow SchedMD/slurm src/plugins/gpu/nvml/gpu_nvml.c (slurm_gpu_type below).
#include "probe.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/slurm_gres.hpp>
#include <gpuprov/strings.hpp>
#include <map>

namespace gpuprov {

std::string slurm_gpu_type(std::string_view nvml_name) {
    std::string out = to_lower(nvml_name);
    for (auto& c : out) {
        if (c == ' ') {
            c = '_';
        }
    }
    return out;
}

std::string slurm_mig_type(std::string_view nvml_name, int slices, std::uint64_t memory_mib) {
    auto base = slurm_gpu_type(nvml_name);
    if (const auto dash = base.find('-'); dash != std::string::npos) {
        base.resize(dash);
    }
    // roundl: halves away from zero, as Slurm does (33280 MiB → 32.5 → 33).
    const auto gb =
        static_cast<unsigned long>(std::roundl(static_cast<long double>(memory_mib) / 1024.0L));
    return fmt::format("{}_{}g.{}gb", base, slices, gb);
}

namespace {

const SmiTableMig* table_row(const std::vector<SmiTableMig>& rows, int gpu, int device) {
    for (const auto& r : rows) {
        if (r.gpu == gpu && r.device == device) {
            return &r;
        }
    }
    return nullptr;
}

std::optional<bool> mig_mode(const std::vector<SmiGpu>& query, int index) {
    for (const auto& g : query) {
        if (g.index == index) {
            return g.mig_enabled;
        }
    }
    return std::nullopt;
}

} // namespace

SlurmGres slurm_gres_from(const Profile& profile, const std::vector<SmiListGpu>& gpus,
                          const std::vector<SmiGpu>& query,
                          const std::vector<SmiTableMig>& mig_table) {
    if (gpus.empty()) {
        throw Error("nvidia-smi -L lists no GPU on this node, so Slurm has no GPU to schedule. "
                    "Run gpuprov doctor");
    }
    SlurmGres g;
    std::map<std::string, int> counts;
    std::vector<std::string> lines; // one comment line per GPU: what was found
    for (const auto& gpu : gpus) {
        if (gpu.migs.empty()) {
            if (mig_mode(query, gpu.index).value_or(false)) {
                throw Error(fmt::format(
                    "GPU {} ({}) has MIG enabled but no MIG device, and slurmd refuses to start "
                    "with AutoDetect=nvml then. Create the profile's MIG layout (gpuprov apply "
                    "--only mig) or disable MIG (docs/mig.md)",
                    gpu.index, gpu.name));
            }
            const auto type = slurm_gpu_type(gpu.name);
            ++counts["gpu:" + type];
            ++g.gpus;
            lines.push_back(fmt::format("#   GPU {}: {} -> {}", gpu.index, gpu.name, type));
            continue;
        }
        for (const auto& mig : gpu.migs) {
            const auto slices = mig_profile_slices(mig.profile);
            const auto* row = table_row(mig_table, gpu.index, mig.device);
            if (!slices || row == nullptr || !row->memory_total_mib) {
                throw Error(fmt::format(
                    "cannot tell the memory of MIG device {} on GPU {} ({}) from nvidia-smi's "
                    "table, which Slurm's type name needs",
                    mig.device, gpu.index, mig.profile));
            }
            const auto type = slurm_mig_type(gpu.name, *slices, *row->memory_total_mib);
            ++counts["gpu:" + type];
            ++g.mig_devices;
            lines.push_back(fmt::format("#   GPU {} MIG device {}: {} ({} MiB) -> {}", gpu.index,
                                        mig.device, mig.profile, *row->memory_total_mib, type));
        }
    }
    std::vector<std::string> parts;
    for (const auto& [type, n] : counts) {
        parts.push_back(fmt::format("{}:{}", type, n));
    }
    g.node_gres = join(parts, ",");
    g.gres_conf = "AutoDetect=nvml\n";

    g.text = fmt::format(
        "# gpuprov slurm-gres {}: the Slurm GRES of the GPUs nvidia-smi finds on this node.\n"
        "# gres.conf (beside slurm.conf on this node). slurmd reads the GPUs, device files, CPU\n"
        "# affinity and NVLinks from NVML itself; it must be built with NVML support:\n",
        profile.name);
    g.text += g.gres_conf;
    g.text += "# slurm.conf needs GresTypes=gpu, and on this node's NodeName line the value "
              "below;\n# types as slurmd's NVML autodetection names them (jobs ask "
              "--gres=gpu:TYPE:N):\n";
    g.text += join(lines, "\n") + "\n";
    g.text += "Gres=" + g.node_gres + "\n";
    return g;
}

SlurmGres slurm_gres(const Profile& profile, const System& sys) {
    using namespace nvidia_detail;
    const auto list = probe(sys, {"nvidia-smi", "-L"});
    if (!list.ok()) {
        throw Error(fmt::format("nvidia-smi -L failed ({}): {}. slurm-gres reports the GPUs "
                                "the driver sees; run gpuprov doctor",
                                failure_text(list), head_lines(output_of(list), 2)));
    }
    const auto gpus = parse_smi_list(list.out);
    const auto query = query_gpus(sys);
    std::vector<SmiTableMig> table;
    const bool any_mig =
        std::any_of(gpus.begin(), gpus.end(), [](const SmiListGpu& g) { return !g.migs.empty(); });
    if (any_mig) {
        const auto t = probe(sys, {"nvidia-smi"});
        if (t.ok()) {
            table = parse_smi_mig_devices(t.out);
        }
    }
    return slurm_gres_from(profile, gpus, query.gpus, table);
}

} // namespace gpuprov
