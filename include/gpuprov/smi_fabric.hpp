#pragma once
// The Fabric section of `nvidia-smi -q`: whether each GPU has registered with the NVLink fabric
// (fabric manager, and NVLSM on NVLink 5, do it). Until it has, CUDA fails with 802 "system not
// yet initialized" although nvidia-smi otherwise looks healthy. Samples under
// tests/fixtures/cmd/nvidia-smi/q/ (README there says where each comes from).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// One GPU's Fabric section, values as printed ("Completed", "Success", "N/A").
struct SmiFabric {
    std::string gpu;            ///< "00000000:18:00.0" from the `GPU ...` header; empty in an
                                ///< excerpt without one (`nvidia-smi -q | grep -A2 Fabric`)
    std::string product;        ///< "NVIDIA H100 80GB HBM3"; empty when not printed
    std::string state;          ///< "Completed", "In Progress", "Not Started", "N/A"
    std::string status;         ///< "Success", an error name, "N/A"
    std::string clique_id;      ///< "0", "2"; "N/A"
    std::string cluster_uuid;   ///< "00000000-0000-0000-0000-000000000000"
    std::string health_summary; ///< Health → Summary ("Healthy", "Unhealthy"); newer drivers only
};

/// Every Fabric section in `nvidia-smi -q` output (or an excerpt of it), in order. Lines are
/// matched by their trimmed "Key : value" text under the `Fabric` heading, so the column width
/// and a trailing CR do not matter; the section ends at the first line indented no deeper than
/// the heading.
[[nodiscard]] std::vector<SmiFabric> parse_smi_fabric(std::string_view q_output);

enum class FabricVerdict {
    not_reported, ///< "N/A" / "Not Supported": a GPU without fabric state (before Hopper, PCIe)
    registered,   ///< State Completed, Status Success, health not "Unhealthy"
    pending,      ///< "In Progress" / "Not Started": fabric manager (or NVLSM) has not done it
    failed,       ///< Completed with an error status, Unhealthy, or a state nobody documents
};
[[nodiscard]] FabricVerdict judge_fabric(const SmiFabric& f);
/// "State In Progress, Status N/A": what verify prints as found.
[[nodiscard]] std::string describe_fabric(const SmiFabric& f);

/// Fabric manager refusing the loaded driver, from its journal: "fabric manager NVIDIA GPU driver
/// interface version 595.71.05 don't match with driver version 590.48.01. ..." (FM's
/// FMGpuDriverVersionCheck). The last such line wins.
struct FmVersionMismatch {
    std::string fabric_manager; ///< "595.71.05": the version fabric manager was built for
    std::string driver;         ///< "590.48.01": the loaded kernel module's
    std::string line;           ///< the journal line, trimmed
};
[[nodiscard]] std::optional<FmVersionMismatch> parse_fm_version_mismatch(std::string_view journal);

} // namespace gpuprov
