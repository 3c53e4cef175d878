#include "cli_common.hpp"

#include <gpuprov/metrics.hpp>
#include <iostream>

namespace gpuprov::cli {

void add_metrics_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("metrics", "GPU and provisioning metrics in Prometheus text "
                                              "format");
    static std::string textfile_dir;
    cmd->add_option("--textfile", textfile_dir,
                    "write DIR/gpuprov.prom atomically (node_exporter textfile collector)");
    cmd->callback([&opts, &exit_code] {
        auto& sys = host_system(opts);
        const auto text = render_metrics(collect_metrics(sys));
        if (textfile_dir.empty()) {
            std::cout << text;
        } else {
            write_textfile(sys, textfile_dir, text);
        }
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
