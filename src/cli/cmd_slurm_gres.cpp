// `gpuprov slurm-gres PROFILE [--gres-only]`: gres.conf and the Gres= value of this node's
// NodeName line for the GPUs nvidia-smi finds (src/nvidia/slurm_gres.cpp, docs/slurm.md).
#include "cli_common.hpp"

#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/slurm_gres.hpp>
#include <iostream>

namespace gpuprov::cli {

void add_slurm_gres_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "slurm-gres", "print gres.conf (AutoDetect=nvml) and this node's Gres= value for the GPUs "
                      "found, with types as slurmd's NVML autodetection names them");
    static std::string profile_arg;
    static bool gres_only = false;
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file")
        ->type_name(kProfileValue)
        ->required();
    cmd->add_flag("--gres-only", gres_only,
                  "print only the value of Gres= (gpu:TYPE:N,...), for scripts");
    cmd->callback([&opts, &exit_code] {
        const auto profile = load_profile(profile_arg, Matrix::builtin());
        const auto gres = slurm_gres(profile, host_system(opts));
        std::cout << (gres_only ? gres.node_gres + "\n" : gres.text);
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
