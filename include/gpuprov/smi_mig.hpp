#pragma once
// Parsers for what nvidia-smi prints about MIG: `nvidia-smi -L` (the GPUs and their MIG
// devices) and the "MIG devices" box of the default table. Each is a pure function over one
// real format (samples under tests/fixtures/cmd/nvidia-smi/, sources in its README).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// A MIG device line of `nvidia-smi -L`: "  MIG 1c.3g.71gb  Device  0: (UUID: MIG-...)".
struct SmiListMig {
    int device = 0;      ///< the MIG device index on its GPU ("MIG Dev" in the table)
    std::string profile; ///< "1g.10gb", or "1c.3g.71gb" for a compute instance smaller than its GI
    std::string uuid;    ///< "MIG-..."
};

/// A GPU line of `nvidia-smi -L`: "GPU 0: NVIDIA H200 (UUID: GPU-...)", with its MIG devices.
struct SmiListGpu {
    int index = 0;
    std::string name; ///< "NVIDIA H100 80GB HBM3", as NVML names it (nvmlDeviceGetName)
    std::string uuid;
    std::vector<SmiListMig> migs;
};

/// Lines that are neither GPU nor MIG lines (a warning, a blank line) are skipped.
[[nodiscard]] std::vector<SmiListGpu> parse_smi_list(std::string_view output);

/// One MIG device of the default table's "MIG devices" box.
struct SmiTableMig {
    int gpu = 0;
    int gi = 0;                                    ///< GPU instance id
    int ci = 0;                                    ///< compute instance id
    int device = 0;                                ///< "MIG Dev"
    std::optional<std::uint64_t> memory_total_mib; ///< "22MiB / 71424MiB" → 71424
};
/// The rows of the "MIG devices" box (empty when the table has none).
[[nodiscard]] std::vector<SmiTableMig> parse_smi_mig_devices(std::string_view table);

/// The GPU-instance slices of a MIG profile name: "1g.10gb" → 1, "1c.3g.71gb" → 3 (the CI's own
/// count comes first), "1g.10gb+me" → 1; nullopt for anything else.
[[nodiscard]] std::optional<int> mig_profile_slices(std::string_view profile);

/// One row of `nvidia-smi mig -lgi`: "|   0  MIG 1g.5gb       19        7          0:1     |".
struct SmiGpuInstance {
    int gpu = 0;
    std::string profile; ///< "1g.5gb"
    int profile_id = 0;  ///< 19
    int id = 0;          ///< the GPU instance id, 7
    int start = 0;       ///< placement start slot
    int size = 0;        ///< placement size in memory slices
};
/// The GPU instances of `nvidia-smi mig -lgi` (empty for "No GPU instances found: Not Found").
[[nodiscard]] std::vector<SmiGpuInstance> parse_mig_lgi(std::string_view output);

} // namespace gpuprov
