#pragma once
// verify's container checks beyond the runtime config: the engine is there, the CDI spec lists
// the GPUs, and a container really sees them (docs/containers.md).
#include <gpuprov/check.hpp>
#include <gpuprov/checks.hpp>
#include <gpuprov/system.hpp>

namespace gpuprov::nvidia_detail {

/// container.engine: the runtime's daemon answers `--version` (dockerd, containerd, crio).
[[nodiscard]] CheckOutcome container_engine_check(const VerifyInput& in, const System& sys);
/// container.cdi: /etc/cdi/nvidia.yaml exists and `nvidia-ctk cdi list` names nvidia.com/gpu.
[[nodiscard]] CheckOutcome container_cdi_check(const System& sys);
/// container.gpu-run: `docker run --rm --gpus all IMAGE nvidia-smi -L` lists the GPUs, IMAGE
/// being container.test_image or a local nvidia/cuda image; never pulls. Without a GPU or an
/// image, or without the engine (`engine` is container.engine's outcome, which already fails),
/// the outcome says "skipped: why" (and counts as passed: nothing could be run).
[[nodiscard]] CheckOutcome container_gpu_run_check(const VerifyInput& in, const System& sys,
                                                   const CheckOutcome& engine);

} // namespace gpuprov::nvidia_detail
