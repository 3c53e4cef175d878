#pragma once
// `gpuprov k8s-manifests PROFILE`: the Kubernetes objects a cluster needs for the GPU nodes a
// node-mode profile (`kubernetes: {node: true}`) provisions: the `nvidia` RuntimeClass and
// NVIDIA's device plugin DaemonSet, pinned from the version matrix (docs/kubernetes.md).
#include <string>

namespace gpuprov {

class Matrix;
struct Profile;

/// The label that marks a GPU node: the one NVIDIA's GPU Feature Discovery sets, put on by
/// hand (`kubectl label node NAME nvidia.com/gpu.present=true`) where GFD does not run.
inline constexpr const char* kGpuNodeLabel = "nvidia.com/gpu.present";

struct K8sManifests {
    std::string yaml;  ///< comment header, then one YAML document per object
    std::string image; ///< "nvcr.io/nvidia/k8s-device-plugin:v0.19.0"
    /// False when no device plugin release in the matrix was validated with the profile's
    /// driver branch (the newest is used; the header says so).
    bool validated = false;
};

/// Throws ProfileError (at the profile's `kubernetes` key, or its start) with the fix when the
/// profile does not make a Kubernetes node, and Error when the matrix has no device plugin.
[[nodiscard]] K8sManifests k8s_manifests(const Profile& profile, const Matrix& matrix);

} // namespace gpuprov
