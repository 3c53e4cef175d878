#pragma once
// The smoke tests, one file each (smoke_cuda.cpp, smoke_nccl.cpp, smoke_torch.cpp); smoke.cpp
// runs them in order behind the GPU gate.
#include <chrono>
#include <gpuprov/local_trust.hpp>
#include <gpuprov/smoke.hpp>
#include <string>

namespace gpuprov::smoke_detail {

// Deadlines: nvcc on a cold page cache takes ~20 s for this file; CUDA initialises in a few
// seconds per GPU; import torch plus CUDA initialisation can take tens of seconds.
inline constexpr std::chrono::seconds kCompileTimeout{180};
inline constexpr std::chrono::seconds kRunTimeout{60};
inline constexpr std::chrono::seconds kNcclTimeout{120};
inline constexpr std::chrono::seconds kTorchTimeout{180};
// dcgmi diag -r 1 runs DCGM's deployment checks only: seconds (NVIDIA's diagnostics guide).
inline constexpr std::chrono::seconds kDcgmTimeout{120};
/// Where NVIDIA's datacenter-gpu-manager-4-core installs dcgmi.
inline constexpr const char* kDcgmi = "/usr/bin/dcgmi";

/// What the GPU gate found: how many GPUs nvidia-smi lists (0 when it was not asked).
struct GpuGate {
    int gpus = 0;
};

[[nodiscard]] SmokeOutcome smoke_cuda(const SmokeInput& in, System& sys, const GpuGate& gate);
[[nodiscard]] SmokeOutcome smoke_nccl(const SmokeInput& in, System& sys, const GpuGate& gate);
[[nodiscard]] SmokeOutcome smoke_torch(const SmokeInput& in, System& sys, const GpuGate& gate);
[[nodiscard]] SmokeOutcome smoke_dcgm(const SmokeInput& in, System& sys, const GpuGate& gate);
/// Whether smoke.dcgm runs at all: DCGM installed, or the profile asking for it.
[[nodiscard]] bool dcgm_smoke_wanted(const SmokeInput& in, const System& sys);

/// Where every smoke program starts (Command::cwd): root's own directory, never the caller's,
/// which may hold a torch.py someone planted there.
inline constexpr const char* kSmokeCwd = "/";

/// As root, whether `program` (or, for TrustedKind::directory, a directory it loads code from)
/// could have been written by someone other than root (gpuprov/local_trust.hpp): then `o` is
/// failed with that reason and the fix, and true is returned; nothing is run. Always false for
/// other users, who can only hurt themselves.
[[nodiscard]] bool refuse_untrusted(SmokeOutcome& o, const System& sys, const std::string& program,
                                    TrustedKind kind = TrustedKind::file);

/// Sets status, reason and fix (reason and fix cleared when it passed).
void settle(SmokeOutcome& o, SmokeStatus status, std::string reason = {}, std::string fix = {});
/// "timed out after 60 s" / "not found" / "exit status 2" / "killed by signal 11".
[[nodiscard]] std::string run_failure(const CommandResult& r, std::chrono::seconds deadline);

} // namespace gpuprov::smoke_detail
