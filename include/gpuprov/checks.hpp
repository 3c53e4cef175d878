#pragma once
// Verification with the real tools (nvidia-smi, nvcc, the cuDNN header, ldconfig, dpkg-query,
// nvidia-ctk). Each function returns one CheckOutcome per fact it checked; none change the host.
#include <gpuprov/check.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>
#include <string_view>
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
/// libnvinfer.so.<major> in `ldconfig -p`, the libnvinfer package's build (TensorRT version and
/// +cuda major), and the version `trtexec` reports where libnvinfer-bin put it.
[[nodiscard]] std::vector<CheckOutcome> check_tensorrt(const VerifyInput&, const System&);
/// nvidia-ctk present, docker/containerd configured with the nvidia runtime.
[[nodiscard]] std::vector<CheckOutcome> check_container_toolkit(const VerifyInput&, const System&);
[[nodiscard]] std::vector<CheckOutcome> check_fabric_manager(const VerifyInput&, const System&);
/// fabric-manager.fabric-state: every GPU's `nvidia-smi -q` Fabric State Completed / Status
/// Success, naming each GPU that is not; skipped where no GPU reports one (before Hopper),
/// except on an NVLink 5 host.
[[nodiscard]] CheckOutcome check_fabric_state(const HostFacts& facts, const System& sys);
/// fabric.imex: fabric-manager.imex (nvidia-imex active) and fabric-manager.imex-ready
/// (`nvidia-imex-ctl -q` prints READY where config.cfg turns the command service on); skipped
/// without fabric.imex_nodes, where gpuprov does not run the service. check_fabric_manager
/// includes them.
[[nodiscard]] std::vector<CheckOutcome> check_imex(const VerifyInput&, const System&);
/// Whether an IMEX config.cfg turns the command service on (IMEX_CMD_ENABLED=1).
[[nodiscard]] bool imex_command_service_on(std::string_view config_cfg);
[[nodiscard]] std::vector<CheckOutcome> check_persistence(const VerifyInput&, const System&);
/// HCAs with RDMA devices, InfiniBand ports ACTIVE at the profile's rate, `ibv_devinfo -l`,
/// GPUDirect RDMA (DMA-BUF prerequisites or nvidia_peermem loaded), /etc/nccl.conf.
[[nodiscard]] std::vector<CheckOutcome> check_infiniband(const VerifyInput&, const System&);
/// "mlx5_0:1" for every port whose link layer is InfiniBand (not RoCE), in device order: what
/// NCCL_IB_HCA names.
[[nodiscard]] std::vector<std::string> infiniband_ports_for_nccl(const HostFacts& facts);
/// DMA-BUF GPUDirect RDMA works here: the loaded module is the open one, on Linux 5.12+.
[[nodiscard]] bool dmabuf_possible(const HostFacts& facts);
/// The profile's GPUDirect RDMA mode with `auto` decided for this host.
[[nodiscard]] GpuDirectMode gpudirect_mode(const Profile& profile, const HostFacts& facts);
/// Device names from rdma-core's `ibv_devinfo -l` ("2 HCAs found:" then one name per line).
[[nodiscard]] std::vector<std::string> parse_ibv_devinfo_list(std::string_view out);
/// Every check the profile implies, in step order (what `gpuprov verify` prints). Checks of
/// steps in the profile's `steps.skip` are left out.
[[nodiscard]] std::vector<CheckOutcome> verify_profile(const VerifyInput&, const System&);

/// Whether an nvidia-smi GPU name is of a profile model: "NVIDIA A100-SXM4-80GB" is an "A100",
/// "Tesla T4" a "T4"; "NVIDIA A100 80GB PCIe" is not an "A10". Case-insensitive word match.
[[nodiscard]] bool gpu_name_matches_model(std::string_view smi_name, std::string_view model);
/// Fabric manager is wanted: `enabled`, or `auto` on a host with NVSwitch bridges.
[[nodiscard]] bool fabric_manager_wanted(const Profile& profile, const HostFacts& facts);

} // namespace gpuprov
