#pragma once
// Kubernetes node mode (profile `kubernetes:`): what it asks of the container runtime the
// container-toolkit step configures. NVIDIA's device plugin needs the nvidia runtime as the
// runtime's default, or a RuntimeClass naming it (NVIDIA/k8s-device-plugin README, "Preparing
// your GPU Nodes": "the --set-as-default argument must also be included ... If this is not done, a
// RuntimeClass needs to be defined").
#include <gpuprov/check.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>
#include <string>
#include <vector>

namespace gpuprov::steps {

/// What node mode adds to `nvidia-ctk runtime configure --runtime=<runtime>`: `--set-as-default`
/// when the profile is a Kubernetes node whose pods get the nvidia runtime by default; nothing
/// otherwise.
[[nodiscard]] std::vector<std::string> kubernetes_configure_flags(const Profile& profile);

/// True when containerd's or CRI-O's configuration, as nvidia-ctk writes it, makes nvidia the
/// default runtime: an uncommented `default_runtime_name = "nvidia"` in containerd's
/// conf.d/99-nvidia.toml, or `default_runtime = "nvidia"` in CRI-O's. False for docker.
[[nodiscard]] bool nvidia_is_default_runtime(const System& sys, const std::string& runtime);

/// verify: on a Kubernetes node that wants it, nvidia is the runtime's default
/// (`kubernetes.default-runtime`); nothing otherwise.
[[nodiscard]] std::vector<CheckOutcome> check_kubernetes_node(const Profile& profile,
                                                              const System& sys);

} // namespace gpuprov::steps
