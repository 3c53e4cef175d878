#pragma once
// Parsers for the outputs of the NVIDIA and system tools that verify and doctor read:
// nvidia-smi (query CSV, default table, errors, topo -m), nvcc, dkms, ldconfig, dpkg --audit.
// Each is a pure function over one real format (samples under tests/fixtures/cmd/).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// The --query-gpu field list gpuprov asks for, in this order (parse_smi_query expects it).
inline constexpr std::string_view kSmiQueryFields =
    "index,uuid,name,pci.bus_id,driver_version,memory.total,memory.used,utilization.gpu,"
    "temperature.gpu,power.draw,power.limit,persistence_mode,mig.mode.current";

/// `nvidia-smi --query-gpu=<kSmiQueryFields> --format=csv,noheader,nounits`.
[[nodiscard]] std::vector<std::string> smi_query_argv();

/// One row of the query. Values nvidia-smi reports as `[N/A]`, `[Not Supported]`,
/// `[Insufficient Permissions]` or `N/A` are absent.
struct SmiGpu {
    int index = 0;
    std::string uuid;           ///< "GPU-34319582-d595-d1c7-d1d2-179bcfa61660"
    std::string name;           ///< "NVIDIA A100-SXM4-80GB"
    std::string bus_id;         ///< "00000000:10:1C.0"
    std::string driver_version; ///< "580.126.09"
    std::optional<std::uint64_t> memory_total_mib;
    std::optional<std::uint64_t> memory_used_mib;
    std::optional<double> utilization_percent;
    std::optional<double> temperature_c;
    std::optional<double> power_draw_w;
    std::optional<double> power_limit_w;
    std::optional<bool> persistence_mode;
    std::optional<bool> mig_enabled;
    std::string compute_cap; ///< "10.3"; only from a query with a header that names compute_cap
};

/// Rows of `--format=csv,noheader,nounits` output for kSmiQueryFields, or of any
/// `--format=csv` output with its header (columns mapped by name, units such as "143771 MiB"
/// dropped, rows without an index column numbered in order). Rows with the wrong number of
/// fields or a non-numeric index are skipped (a warning line, a truncated capture).
[[nodiscard]] std::vector<SmiGpu> parse_smi_query(std::string_view csv);

/// The versions in the default `nvidia-smi` table's first box.
struct SmiBanner {
    std::string smi_version;    ///< "NVIDIA-SMI 535.129.03"
    std::string driver_version; ///< "Driver Version:" or, from R610, "KMD Version:"
    std::string cuda_version;   ///< "CUDA Version:" or "CUDA UMD Version:": the newest CUDA
                                ///< the driver supports, not the installed toolkit
};
[[nodiscard]] std::optional<SmiBanner> parse_smi_banner(std::string_view table);

/// One GPU of the default `nvidia-smi` table's GPU box: two rows per GPU (legacy layout) or
/// three (R470+, with the MIG mode). "N/A" cells are absent values.
struct SmiTableGpu {
    int index = 0;
    std::string name;            ///< as printed: "NVIDIA B300 SXM6 AC", "NVIDIA GH200 480GB"
    bool name_truncated = false; ///< nvidia-smi cut a long name and ended it with "..."
    std::optional<bool> persistence_mode;
    std::string bus_id; ///< "00000009:01:00.0" (the domain is not always 0 on Grace hosts)
    std::optional<bool> display_active;
    std::string volatile_ecc; ///< "0" (uncorrected errors), "Off" (ECC off), "On" (MIG), or ""
    std::optional<double> fan_percent;
    std::optional<double> temperature_c;
    std::string perf_state; ///< "P0"
    std::optional<double> power_draw_w;
    std::optional<double> power_cap_w;
    std::optional<std::uint64_t> memory_used_mib;
    std::optional<std::uint64_t> memory_total_mib;
    std::optional<double> utilization_percent; ///< "N/A" while MIG is enabled
    std::string compute_mode;                  ///< "Default", "E. Process"
    std::optional<bool> mig_enabled;           ///< absent in the legacy layout and for "N/A"
};
/// The GPU rows of the default table. The MIG devices and processes boxes below it are not
/// GPUs; a table cut inside a GPU's rows yields what it shows of that GPU.
[[nodiscard]] std::vector<SmiTableGpu> parse_smi_table(std::string_view table);

enum class SmiFailure {
    none,              ///< not one of the known failure texts
    driver_not_loaded, ///< "NVIDIA-SMI has failed because it couldn't communicate ..."
    version_mismatch,  ///< "Failed to initialize NVML: Driver/library version mismatch"
};
/// Classifies nvidia-smi's output (stdout and stderr together) when it failed.
[[nodiscard]] SmiFailure classify_smi_failure(std::string_view output);

/// The GPU×GPU part of `nvidia-smi topo -m`.
struct TopoMatrix {
    std::vector<std::string> gpus;               ///< "GPU0", "GPU1", ...
    std::vector<std::vector<std::string>> links; ///< links[i][j]: "X", "NV18", "PIX", "SYS", ...
};
/// nullopt when no GPU header row is found. NIC columns, affinity columns and the legend
/// are ignored; both the old (no NUMA columns) and new layouts parse, with TABs as nvidia-smi
/// prints them or with spaces as pasted from a terminal.
[[nodiscard]] std::optional<TopoMatrix> parse_topo_matrix(std::string_view output);
/// Whether every pair of distinct GPUs is joined by NVLink (an `NV#` cell).
[[nodiscard]] bool all_pairs_nvlink(const TopoMatrix& topo);
/// Whether some pair of distinct GPUs has a peer-to-peer path: NVLink, PIX or PXB. SYS, NODE
/// and PHB go through the CPU's host bridge or interconnect.
[[nodiscard]] bool any_p2p_path(const TopoMatrix& topo);

struct NvccVersion {
    std::string release; ///< "12.2"
    std::string version; ///< "12.2.140"
};
/// From "Cuda compilation tools, release 12.2, V12.2.140"; the Build line is optional.
[[nodiscard]] std::optional<NvccVersion> parse_nvcc_version(std::string_view output);

struct DkmsEntry {
    std::string module;  ///< "nvidia", "nvidia-current"
    std::string version; ///< "535.129.03"
    std::string kernel;  ///< empty for a module that is only "added"
    std::string arch;
    std::string state; ///< "installed", "built", "added", with any trailing note kept
};
/// `dkms status` lines, both `nvidia/535.x, kernel, arch: installed` (dkms ≥ 2.8) and the
/// older `nvidia, 535.x, kernel, arch: installed`.
[[nodiscard]] std::vector<DkmsEntry> parse_dkms_status(std::string_view output);

struct LdconfigEntry {
    std::string soname; ///< "libnccl.so.2"
    std::string path;   ///< "/lib/x86_64-linux-gnu/libnccl.so.2"
};
/// `ldconfig -p` entries (the "N libs found in cache" header is skipped).
[[nodiscard]] std::vector<LdconfigEntry> parse_ldconfig(std::string_view output);
/// First entry whose soname starts with `prefix` ("libcudnn.so.9"), if any.
[[nodiscard]] const LdconfigEntry* find_library(const std::vector<LdconfigEntry>& entries,
                                                std::string_view prefix);

struct DpkgAuditProblem {
    std::string package;
    std::string state; ///< "unpacked", "half-configured", "half-installed", "triggers", "other"
};
/// Packages `dpkg --audit` complains about; empty output means a consistent database.
[[nodiscard]] std::vector<DpkgAuditProblem> parse_dpkg_audit(std::string_view output);

} // namespace gpuprov
