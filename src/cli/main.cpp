// gpuprov: turn a fresh machine into a working, verified NVIDIA GPU server.
#include "cli_common.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/interrupt.hpp>
#include <iostream>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace {

void setup_logging(const gpuprov::cli::GlobalOptions& opts) {
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
        opts.color() ? spdlog::color_mode::automatic : spdlog::color_mode::never);
    console->set_pattern("%^%l%$: %v");
    std::vector<spdlog::sink_ptr> sinks{console};
    auto log_file = opts.log_file;
    if (log_file.empty() && ::geteuid() == 0) {
        log_file = "/var/log/gpuprov.log";
    }
    if (!log_file.empty() && log_file != "-") {
        try {
            auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file);
            file->set_pattern("%Y-%m-%dT%H:%M:%S%z [%l] %v");
            file->set_level(spdlog::level::debug);
            sinks.push_back(file);
        } catch (const spdlog::spdlog_ex&) {
            // A read-only /var/log must not stop a plan; the console still gets everything.
        }
    }
    auto logger = std::make_shared<spdlog::logger>("gpuprov", sinks.begin(), sinks.end());
    const auto level = spdlog::level::from_str(opts.log_level);
    console->set_level(level);
    logger->set_level(spdlog::level::debug);
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
}

} // namespace

int main(int argc, char** argv) {
    // First: Ctrl-C, SIGTERM and SIGHUP become a clean stop from here on (gpuprov/interrupt.hpp).
    gpuprov::install_stop_handlers();
    using namespace gpuprov::cli;
    GlobalOptions opts;
    int exit_code = kExitOk;

    CLI::App app{"gpuprov: provision and verify NVIDIA GPU hosts from YAML profiles.\n\n"
                 "  gpuprov plan cv-train        what would change on this host (no root needed)\n"
                 "  sudo gpuprov apply cv-train  make the changes, verify, resume after reboot\n"
                 "  gpuprov verify cv-train      prove the host matches the profile\n"
                 "  gpuprov doctor               diagnose a broken driver/CUDA setup\n\n"
                 "Exit codes: 0 ok, 1 failed/blocked/invalid, 2 changes pending "
                 "(plan --detailed-exitcode) or a usage error, 3 reboot required, 130/143 "
                 "apply stopped by SIGINT/SIGTERM.",
                 "gpuprov"};
    app.set_version_flag("--version", "gpuprov " GPUPROV_VERSION);
    app.require_subcommand(1);
    app.fallthrough();
    app.add_option("--log-level", opts.log_level, "trace|debug|info|warn|error (stderr)")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
        ->capture_default_str();
    app.add_option("--log-file", opts.log_file,
                   "also log here (default /var/log/gpuprov.log as root; '-' for none)");
    app.add_flag("--no-color", opts.no_color, "plain output (also NO_COLOR=1)");
    app.add_option("--root", opts.root,
                   "read host files under this directory (inspect a mounted image or a fixture)")
        ->capture_default_str();
    app.parse_complete_callback([&] { setup_logging(opts); });

    add_profiles_command(app, opts, exit_code);
    add_facts_command(app, opts, exit_code);
    add_plan_command(app, opts, exit_code);
    add_apply_command(app, opts, exit_code);
    add_verify_command(app, opts, exit_code);
    add_status_command(app, opts, exit_code);
    add_doctor_command(app, opts, exit_code);
    add_metrics_command(app, opts, exit_code);
    add_cloud_init_command(app, opts, exit_code);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" that exit 0; every real one is a usage error.
        return app.exit(e) == 0 ? kExitOk : kExitUsage;
    } catch (const gpuprov::UsageError& e) {
        // design.md: usage errors exit 2 (a flag value that cannot work: --root naming no
        // directory, apply --root, an unknown step id, apply off a terminal without --yes).
        std::cerr << "error: " << e.describe() << "\n";
        return kExitUsage;
    } catch (const gpuprov::ProfileError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return kExitFailed;
    } catch (const gpuprov::Error& e) {
        std::cerr << "error: " << e.describe() << "\n";
        return kExitFailed;
    } catch (const std::exception& e) {
        // Nothing aborts: whatever escaped still ends as one clean error line and exit 1.
        std::cerr << "error: internal: " << e.what() << "\n";
        return kExitFailed;
    } catch (...) {
        std::cerr << "error: internal: unknown exception\n";
        return kExitFailed;
    }
    return exit_code;
}
