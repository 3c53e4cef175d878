// Kubernetes node mode: nvidia as the CRI runtime's default (src/steps/kubernetes_node.hpp).
#include "kubernetes_node.hpp"

#include <gpuprov/strings.hpp>
#include <optional>
#include <utility>

namespace gpuprov::steps {

namespace {

/// True when `toml` sets `key` to "nvidia" on a line of its own (not in a comment).
bool sets_nvidia(const std::string& toml, std::string_view key) {
    for (const auto& raw : lines(toml)) {
        const auto line = trim(raw);
        const auto eq = line.find('=');
        if (line.empty() || line.front() == '#' || eq == std::string_view::npos) {
            continue;
        }
        auto value = trim(line.substr(eq + 1));
        if (const auto hash = value.find('#'); hash != std::string_view::npos) {
            value = trim(value.substr(0, hash));
        }
        if (trim(line.substr(0, eq)) == key && (value == "\"nvidia\"" || value == "'nvidia'")) {
            return true;
        }
    }
    return false;
}

/// The drop-in `nvidia-ctk runtime configure` writes for a CRI runtime and the key that names
/// its default runtime there (NVIDIA container toolkit install guide, "Configuring containerd",
/// "Configuring CRI-O"; the container-toolkit step looks for the same drop-ins).
std::pair<std::string, std::string_view> default_setting(const std::string& runtime) {
    if (runtime == "containerd") {
        return {"/etc/containerd/conf.d/99-nvidia.toml", "default_runtime_name"};
    }
    if (runtime == "crio") {
        return {"/etc/crio/conf.d/99-nvidia.toml", "default_runtime"};
    }
    return {};
}

} // namespace

std::vector<std::string> kubernetes_configure_flags(const Profile& profile) {
    if (profile.kubernetes && profile.kubernetes->nvidia_default()) {
        return {"--set-as-default"};
    }
    return {};
}

bool nvidia_is_default_runtime(const System& sys, const std::string& runtime) {
    const auto [path, key] = default_setting(runtime);
    const auto text = path.empty() ? std::nullopt : sys.read_file(path);
    return text && sets_nvidia(*text, key);
}

std::vector<CheckOutcome> check_kubernetes_node(const Profile& profile, const System& sys) {
    if (!profile.kubernetes || !profile.kubernetes->nvidia_default() || !profile.container) {
        return {};
    }
    const auto& runtime = profile.container->runtime;
    const auto [path, key] = default_setting(runtime);
    CheckOutcome c{.id = "kubernetes.default-runtime",
                   .step = "container-toolkit",
                   .passed = nvidia_is_default_runtime(sys, runtime),
                   .command = path,
                   .excerpt = {},
                   .expected = std::string(key) + " = \"nvidia\"",
                   .found = {},
                   .fix = {}};
    c.found = c.passed ? c.expected : "no uncommented " + std::string(key) + " = \"nvidia\"";
    if (!c.passed) {
        c.fix = "sudo nvidia-ctk runtime configure --runtime=" + runtime +
                " --set-as-default && sudo systemctl restart " + runtime +
                " (or gpuprov apply; kubernetes.runtime_class: nvidia uses a RuntimeClass instead)";
    }
    return {c};
}

} // namespace gpuprov::steps
