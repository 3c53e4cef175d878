#pragma once
// `gpuprov slurm-gres PROFILE`: the Slurm GRES configuration of the GPUs this node has:
// gres.conf (`AutoDetect=nvml`) and the `Gres=` value of the node's NodeName line in
// slurm.conf, with GPU types named as slurmd's NVML autodetection names them (docs/slurm.md).
#include <cstdint>
#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/smi_mig.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct Profile;
class System;

/// Slurm's type for a whole GPU: NVML's name lower-cased with spaces turned into underscores
/// ("NVIDIA H100 80GB HBM3" → "nvidia_h100_80gb_hbm3"); SchedMD/slurm
/// src/plugins/gpu/nvml/gpu_nvml.c `_nvml_get_device_name` → gpu_common.c
/// `gpu_common_underscorify_tolower`.
[[nodiscard]] std::string slurm_gpu_type(std::string_view nvml_name);

/// Slurm's type for a MIG device: the GPU's type cut at its first '-', then
/// `_<GI slices>g.<memory MiB / 1024, rounded>gb` (gpu_nvml.c, `_handle_mig`:
/// gpuInstanceSliceCount and roundl(memorySizeMB / 1024)). So an A100-SXM4-80GB's 3g.40gb
/// (40192 MiB) is "nvidia_a100_3g.39gb", not NVIDIA's profile name.
[[nodiscard]] std::string slurm_mig_type(std::string_view nvml_name, int slices,
                                         std::uint64_t memory_mib);

struct SlurmGres {
    std::string gres_conf; ///< the gres.conf lines: "AutoDetect=nvml\n"
    std::string node_gres; ///< "gpu:nvidia_h100_80gb_hbm3:8" (the value of Gres=)
    int gpus = 0;          ///< whole GPUs found
    int mig_devices = 0;   ///< MIG devices found (each one GRES)
    std::string text;      ///< what `gpuprov slurm-gres` prints: comments, gres.conf, Gres=
};

/// Pure: from `nvidia-smi -L`, the --query-gpu rows (their MIG mode by index) and the default
/// table's MIG devices box. Throws Error with the fix when a GPU has MIG enabled but
/// no MIG device (slurmd refuses to start then, gpu_nvml.c) or a MIG device's memory is unknown.
[[nodiscard]] SlurmGres slurm_gres_from(const Profile& profile, const std::vector<SmiListGpu>& gpus,
                                        const std::vector<SmiGpu>& query,
                                        const std::vector<SmiTableMig>& mig_table);

/// Reads the GPUs through `sys`: `nvidia-smi -L`, the --query-gpu for MIG mode, and the
/// default table when MIG devices exist. Throws Error (with the fix) when nvidia-smi fails or
/// finds no GPU.
[[nodiscard]] SlurmGres slurm_gres(const Profile& profile, const System& sys);

} // namespace gpuprov
