#pragma once
// `verify --smoke`: code that runs on the GPUs (docs/verify.md#smoke-tests). A CUDA program
// compiled with the host's nvcc, nccl-tests' all_reduce_perf, and a PyTorch matmul. Each test
// passed, failed or was skipped, always with what ran and why; a skipped test never counts as
// passed.
#include <gpuprov/facts.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

enum class SmokeStatus { passed, failed, skipped };
/// "passed", "failed", "skipped".
[[nodiscard]] std::string_view smoke_status_name(SmokeStatus s);

struct SmokeOutcome {
    std::string id; ///< "smoke.cuda", "smoke.nccl", "smoke.pytorch", "smoke.dcgm"
    SmokeStatus status = SmokeStatus::skipped;
    std::string command; ///< what ran (display form); empty when nothing could run
    std::string excerpt; ///< the relevant lines of its output
    std::string found;   ///< what it showed when it ran: "2 GPUs added 1048576 floats right"
    std::string reason;  ///< why it failed or was skipped; empty when passed
    std::string fix;     ///< what to do; empty when passed
};

struct SmokeInput {
    const Profile& profile;
    const HostFacts& facts;
    /// A private directory (mode 0700) the caller made and removes afterwards: the CUDA source
    /// and its binary are written here, nowhere else.
    std::string work_dir;
    /// Directories searched for all_reduce_perf before the known install locations (the
    /// invoking user's PATH).
    std::vector<std::string> search_path;
};

/// Runs every smoke test in order: smoke.cuda, smoke.nccl, smoke.pytorch, and smoke.dcgm
/// (`dcgmi diag -r 1`) where DCGM is installed or the profile asks for it. Without a usable GPU
/// (no NVIDIA GPU on PCI, or nvidia-smi lists none) each is skipped with that reason.
[[nodiscard]] std::vector<SmokeOutcome> run_smoke(const SmokeInput& in, System& sys);

// ---- the programs and the parsers of what they print (tests/fixtures/cmd/smoke/) ----

/// The CUDA program's source (src/nvidia/smoke/gpuprov_smoke.cu, compiled in).
[[nodiscard]] std::string_view cuda_smoke_source();
/// The PyTorch probe's source (src/nvidia/smoke/gpuprov_smoke_torch.py, compiled in).
[[nodiscard]] std::string_view torch_smoke_source();

struct CudaSmokeDevice {
    int index = -1;
    std::string name;
    std::string compute_capability; ///< "9.0"
    long long memory_mib = 0;
    std::optional<long long> elements; ///< set once the vector add ran
    std::optional<long long> wrong;    ///< sums that differ from the host's
};

struct CudaSmokeError {
    int device = -1; ///< -1: before any device (cudaGetDeviceCount)
    std::string call;
    int code = 0; ///< cudaError_t
    std::string text;
};

struct CudaSmokeReport {
    std::optional<int> runtime_version; ///< 12040 is CUDA 12.4
    std::optional<int> driver_version;  ///< 0 when no driver library was found
    std::optional<int> device_count;
    std::vector<CudaSmokeDevice> devices;
    std::vector<CudaSmokeError> errors;
};
/// Reads the "gpuprov-smoke ..." lines the CUDA program prints; other lines are ignored.
[[nodiscard]] CudaSmokeReport parse_cuda_smoke(std::string_view out);

struct AllReduceReport {
    std::optional<int> gpus;                 ///< "nGpus 2" of the header
    std::optional<long long> out_of_bounds;  ///< "Out of bounds values : 0 OK"
    std::optional<double> avg_bus_bandwidth; ///< GB/s, "Avg bus bandwidth    : 2.05774"
    std::optional<long long> wrong_rows;     ///< result rows with a non-zero #wrong column
};
/// nccl-tests' output (any *_perf; "#"-prefixed summary lines and the older form without "#").
[[nodiscard]] AllReduceReport parse_all_reduce_perf(std::string_view out);

struct TorchSmokeReport {
    bool torch_missing = false;
    std::string missing_text; ///< the ImportError
    std::string version;      ///< torch.__version__: "2.4.1+cu124"
    std::string cuda;         ///< torch.version.cuda: "12.4"; "None" on CPU-only builds
    std::optional<bool> cuda_available;
    std::optional<int> device_count;
    std::optional<long long> matmul_elements;
    std::optional<long long> matmul_wrong;
    std::string error; ///< an exception raised while using the GPU
};
[[nodiscard]] TorchSmokeReport parse_torch_smoke(std::string_view out);

/// One test row of `dcgmi diag`'s result table: DCGM 3 names each check ("Denylist", "PCIe"),
/// DCGM 4 each plugin ("software", "memory") with a "GPU0: Pass" line per GPU under it.
struct DcgmDiagRow {
    std::string category; ///< "Deployment", "Hardware", "Integration", "Stress"
    std::string name;     ///< "Persistence Mode", "software"
    std::string result;   ///< "Pass", "Fail", "Skip", "Warn" (the first word of the cell)
    /// Its "Error"/"Warning"/"Info" text (DCGM wraps it over several rows; joined back) and, on
    /// DCGM 4, the per-GPU results ("GPU0: Pass").
    std::vector<std::string> details;
};

struct DcgmDiagReport {
    std::string dcgm_version; ///< the Metadata row "DCGM Version"; empty on DCGM before 3.1
    std::string driver;       ///< "Driver Version Detected"
    std::vector<DcgmDiagRow> rows;
    [[nodiscard]] std::vector<const DcgmDiagRow*> failed() const;
};
/// `dcgmi diag -r N`'s table (NVIDIA's DCGM guide, "Run Levels"; tests/fixtures/cmd/smoke/
/// dcgmi-diag-*.txt). Lines outside the table are ignored.
[[nodiscard]] DcgmDiagReport parse_dcgm_diag(std::string_view out);

} // namespace gpuprov
