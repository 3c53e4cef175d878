// `gpuprov k8s-manifests PROFILE [--output FILE]`: the nvidia RuntimeClass and NVIDIA's device
// plugin DaemonSet for the Kubernetes nodes PROFILE provisions (src/engine/k8s_manifests.cpp).
#include "cli_common.hpp"

#include <filesystem>
#include <gpuprov/k8s_manifests.hpp>
#include <gpuprov/local_system.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <iostream>

namespace gpuprov::cli {

void add_k8s_manifests_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "k8s-manifests",
        "print the nvidia RuntimeClass and NVIDIA's device plugin DaemonSet for PROFILE's "
        "Kubernetes nodes (kubectl apply -f)");
    static std::string profile_arg;
    static std::string output;
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file with kubernetes.node: true")
        ->type_name(kProfileValue)
        ->required();
    cmd->add_option("--output", output, "write the manifests to FILE (mode 0644) instead of stdout")
        ->type_name(kFileValue);
    cmd->callback([&exit_code] {
        const auto profile = load_profile(profile_arg, Matrix::builtin());
        const auto manifests = k8s_manifests(profile, Matrix::builtin());
        if (output.empty()) {
            std::cout << manifests.yaml;
        } else {
            // The user's file on this machine, relative to the working directory: never under
            // --root, which names a host image to inspect, not where output goes.
            LocalSystem here;
            here.write_file_atomic(std::filesystem::absolute(output), manifests.yaml, 0644);
        }
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
