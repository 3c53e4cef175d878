#pragma once
// Verification with the real tools (nvidia-smi, nvcc, the cuDNN header, ldconfig, dpkg-query,
// nvidia-ctk). Each function returns one CheckOutcome per fact it checked; none change the host.
#include <gpuprov/check.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>

#include <vector>

namespace gpuprov {

struct VerifyInput {
    const Profile& profile;
    const HostFacts& facts;
    const Matrix& matrix;
};

/// Driver loaded, of the profile's branch, nvidia-smi answers, /proc/driver/nvidia/version
/// agrees with userspace, new enough for the profile's CUDA.
[[nodiscard]] std::vector<CheckOutcome> check_driver(const VerifyInput&, const System&);
/// GPU count / model / memory against host.gpus, NVLink topology when asked.
[[nodiscard]] std::vector<CheckOutcome> check_gpus(const VerifyInput&, const System&);
/// nvcc release and version.json of /usr/local/cuda-X.Y.
[[nodiscard]] std::vector<CheckOutcome> check_cuda_toolkit(const VerifyInput&, const System&);
/// cudnn_version.h and `ldconfig -p`.
[[nodiscard]] std::vector<CheckOutcome> check_cudnn(const VerifyInput&, const System&);
[[nodiscard]] std::vector<CheckOutcome> check_nccl(const VerifyInput&, const System&);
/// nvidia-ctk present, docker/containerd configured with the nvidia runtime.
[[nodiscard]] std::vector<CheckOutcome> check_container_toolkit(const VerifyInput&, const System&);
[[nodiscard]] std::vector<CheckOutcome> check_fabric_manager(const VerifyInput&, const System&);
[[nodiscard]] std::vector<CheckOutcome> check_persistence(const VerifyInput&, const System&);
/// Every check the profile implies, in step order (what `gpuprov verify` prints).
[[nodiscard]] std::vector<CheckOutcome> verify_profile(const VerifyInput&, const System&);

} // namespace gpuprov
