// Kubernetes manifests for node-mode profiles: the nvidia RuntimeClass and NVIDIA's device plugin
// DaemonSet. Emitted with yaml-cpp, one document per object, so no value can break the
// structure; tests/cli/k8s_manifests.sh reads them back as Kubernetes objects.
// The device plugin's needs (NVIDIA/k8s-device-plugin README): the kubelet's device-plugins
// directory mounted, the nvidia runtime (the default, or RuntimeClass `nvidia` with handler
// `nvidia`), the `nvidia.com/gpu` taint tolerated, system-node-critical priority.
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/k8s_manifests.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <optional>
#include <yaml-cpp/yaml.h>

namespace gpuprov {

namespace {

constexpr const char* kRuntimeClass = "nvidia";
constexpr const char* kAppLabel = "app.kubernetes.io/name";
constexpr const char* kAppName = "nvidia-device-plugin";
constexpr const char* kDevicePluginDir = "/var/lib/kubelet/device-plugins";

void labels(YAML::Emitter& out, bool managed) {
    out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << kAppLabel << YAML::Value << kAppName;
    if (managed) {
        out << YAML::Key << "app.kubernetes.io/managed-by" << YAML::Value << "gpuprov";
    }
    out << YAML::EndMap;
}

void gpu_node_selector(YAML::Emitter& out) {
    out << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << kGpuNodeLabel << YAML::Value << YAML::DoubleQuoted << "true";
    out << YAML::EndMap;
}

/// GPU nodes are often tainted nvidia.com/gpu:NoSchedule so that only GPU work lands there.
void gpu_toleration(YAML::Emitter& out) {
    out << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "key" << YAML::Value << "nvidia.com/gpu";
    out << YAML::Key << "operator" << YAML::Value << "Exists";
    out << YAML::Key << "effect" << YAML::Value << "NoSchedule";
    out << YAML::EndMap << YAML::EndSeq;
}

void runtime_class(YAML::Emitter& out) {
    out << YAML::BeginDoc << YAML::BeginMap;
    out << YAML::Key << "apiVersion" << YAML::Value << "node.k8s.io/v1";
    out << YAML::Key << "kind" << YAML::Value << "RuntimeClass";
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << kRuntimeClass;
    labels(out, true);
    out << YAML::EndMap;
    // The runtime handler nvidia-ctk adds to containerd / CRI-O.
    out << YAML::Key << "handler" << YAML::Value << kRuntimeClass;
    // Pods that ask for it only fit on GPU nodes, whose taint they then tolerate.
    out << YAML::Key << "scheduling" << YAML::Value << YAML::BeginMap;
    gpu_node_selector(out);
    gpu_toleration(out);
    out << YAML::EndMap;
    out << YAML::EndMap << YAML::EndDoc;
}

void device_plugin(YAML::Emitter& out, const std::string& image, bool use_runtime_class) {
    out << YAML::BeginDoc << YAML::BeginMap;
    out << YAML::Key << "apiVersion" << YAML::Value << "apps/v1";
    out << YAML::Key << "kind" << YAML::Value << "DaemonSet";
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "nvidia-device-plugin-daemonset";
    out << YAML::Key << "namespace" << YAML::Value << "kube-system";
    labels(out, true);
    out << YAML::EndMap;

    out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "selector" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "matchLabels" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << kAppLabel << YAML::Value << kAppName;
    out << YAML::EndMap << YAML::EndMap;
    out << YAML::Key << "updateStrategy" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value << "RollingUpdate";
    out << YAML::EndMap;

    out << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
    labels(out, false); // the selector's labels, exactly
    out << YAML::EndMap;
    out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    if (use_runtime_class) {
        // Without nvidia as the default runtime the plugin itself needs it to see the GPUs.
        out << YAML::Key << "runtimeClassName" << YAML::Value << kRuntimeClass;
    }
    gpu_node_selector(out);
    gpu_toleration(out);
    out << YAML::Key << "priorityClassName" << YAML::Value << "system-node-critical";
    out << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "nvidia-device-plugin-ctr";
    out << YAML::Key << "image" << YAML::Value << image;
    // Scheduled on GPU nodes only, so a plugin that finds no GPU is a real fault: fail visibly
    // (the plugin's own default) instead of blocking quietly.
    out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "FAIL_ON_INIT_ERROR";
    out << YAML::Key << "value" << YAML::Value << YAML::DoubleQuoted << "true";
    out << YAML::EndMap << YAML::EndSeq;
    out << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "allowPrivilegeEscalation" << YAML::Value << false;
    out << YAML::Key << "capabilities" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "drop" << YAML::Value << YAML::Flow << YAML::BeginSeq << "ALL"
        << YAML::EndSeq;
    out << YAML::EndMap << YAML::EndMap;
    out << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "kubelet-device-plugins";
    out << YAML::Key << "mountPath" << YAML::Value << kDevicePluginDir;
    out << YAML::EndMap << YAML::EndSeq;
    out << YAML::EndMap << YAML::EndSeq; // containers
    out << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << "kubelet-device-plugins";
    out << YAML::Key << "hostPath" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "path" << YAML::Value << kDevicePluginDir;
    out << YAML::Key << "type" << YAML::Value << "Directory";
    out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
    out << YAML::EndMap;                 // template.spec
    out << YAML::EndMap;                 // template
    out << YAML::EndMap;                 // spec
    out << YAML::EndMap << YAML::EndDoc; // the DaemonSet
}

std::string header(const Profile& p, const DevicePluginPick& pick, const std::optional<int>& branch,
                   const std::string& image) {
    const auto& k = *p.kubernetes;
    const auto& runtime = p.container->runtime;
    std::string out = fmt::format(
        "# gpuprov k8s-manifests {}: the nvidia RuntimeClass and NVIDIA's device plugin for the\n"
        "# GPU nodes this profile provisions. Apply once per cluster: kubectl apply -f FILE\n",
        p.name);
    if (pick.validated) {
        out += fmt::format("# {}: NVIDIA GPU Operator {} ships it and supports driver branch {} "
                           "(gpuprov's version matrix).\n",
                           image, pick.release->gpu_operator, *branch);
    } else {
        out += fmt::format(
            "# {}: the newest device plugin gpuprov knows; NVIDIA validated no release with "
            "{} (GPU Operator component matrix in gpuprov's version matrix).\n",
            image, branch ? fmt::format("driver branch {}", *branch) : "a driver branch");
    }
    out += fmt::format(
        "# Nodes: {} with {} ({}).\n", runtime,
        k.nvidia_default() ? "nvidia as its default runtime"
                           : "the nvidia runtime for pods with runtimeClassName: nvidia",
        k.nvidia_default()
            ? fmt::format("nvidia-ctk runtime configure --runtime={} --set-as-default", runtime)
            : fmt::format("nvidia-ctk runtime configure --runtime={}", runtime));
    out += fmt::format("# The plugin runs on nodes labelled {}=true (NVIDIA GPU Feature Discovery "
                       "sets it;\n# without GFD: kubectl label node NAME {}=true).\n",
                       kGpuNodeLabel, kGpuNodeLabel);
    return out;
}

} // namespace

K8sManifests k8s_manifests(const Profile& profile, const Matrix& matrix) {
    if (!profile.kubernetes || !profile.kubernetes->node) {
        const auto at = profile.pos(profile.kubernetes ? "kubernetes.node" : "kubernetes");
        throw ProfileError(
            at.file, at.line, at.col,
            "profile " + profile.name +
                " does not make a Kubernetes node, so its hosts have no nvidia "
                "runtime for the device plugin. Add kubernetes: {node: true} and "
                "container: {toolkit: true, runtime: containerd} (docs/kubernetes.md)");
    }
    std::optional<int> branch;
    if (const auto b = profile.driver ? parse_int(profile.driver->branch) : std::nullopt) {
        branch = static_cast<int>(*b);
    }
    const auto pick = matrix.device_plugin_for(branch);
    if (pick.release == nullptr) {
        throw Error("gpuprov's version matrix names no NVIDIA device plugin release");
    }
    K8sManifests m;
    m.image = matrix.device_plugin_image() + ":" + pick.release->version;
    m.validated = pick.validated;
    YAML::Emitter out;
    runtime_class(out);
    device_plugin(out, m.image, !profile.kubernetes->nvidia_default());
    if (!out.good()) {
        throw BugError(std::string("could not emit the Kubernetes manifests: ") +
                       out.GetLastError());
    }
    m.yaml = header(profile, pick, branch, m.image) + out.c_str() + "\n";
    return m;
}

} // namespace gpuprov
