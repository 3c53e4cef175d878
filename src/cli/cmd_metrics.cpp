#include "cli_common.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/forecast.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/metrics.hpp>
#include <iostream>

namespace gpuprov::cli {

void add_metrics_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("metrics", "GPU and provisioning metrics in Prometheus text "
                                              "format");
    static std::string textfile_dir;
    static int temperature_alert_c = 0;
    cmd->add_option("--temperature-alert-c", temperature_alert_c,
                    "export this GPU temperature alert threshold (the profile's "
                    "monitoring.temperature_alert_c) for the alert rules")
        ->type_name("C")
        ->check(CLI::Range(30, 120));
    cmd->add_option("--textfile", textfile_dir,
                    "write DIR/gpuprov.prom atomically (node_exporter textfile collector)")
        ->type_name(kDirValue);
    cmd->callback([&opts, &exit_code] {
        auto& sys = host_system(opts);
        auto snapshot = collect_metrics(sys);
        // File reads only (no command): the PCI GPUs and the loaded module, for the alerts that
        // tell "GPU missing" from "driver not loaded".
        const auto facts = detect_facts(sys, Matrix::builtin());
        snapshot.gpus_on_pci = static_cast<int>(facts.gpus.size());
        snapshot.driver_loaded = facts.driver.has_value();
        if (!facts.gpus.empty()) {
            // What is installed decides the next boot; the upgrade look-ahead (a simulation)
            // is left to `gpuprov forecast`, not run every minute. No GPUs: nothing to forecast.
            ForecastOptions fo;
            fo.look_ahead = false;
            const auto forecast = forecast_next_boot(sys, facts, fo);
            snapshot.next_boot = MetricsSnapshot::NextBoot{.ready = forecast.ready,
                                                           .kernel = forecast.next_boot.kernel};
        }
        if (temperature_alert_c != 0) {
            snapshot.temperature_alert_c = temperature_alert_c;
        }
        const auto text = render_metrics(snapshot);
        if (textfile_dir.empty()) {
            std::cout << text;
        } else {
            write_textfile(sys, textfile_dir, text);
        }
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
