// gpuprov: turn a fresh machine into a working, verified NVIDIA GPU server.
#include "cli_common.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gpuprov/error.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/log_file.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

/// Eight hex digits naming this invocation on every log line, so one run's lines can be told
/// from another's in a shared log (the resume unit's run after a reboot, a cron'd verify).
std::string new_run_id() {
    std::random_device rd;
    return fmt::format("{:08x}", rd());
}

void setup_logging(const gpuprov::cli::GlobalOptions& opts) {
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
        opts.color() ? spdlog::color_mode::automatic : spdlog::color_mode::never);
    console->set_pattern("%^%l%$: %v");
    std::vector<spdlog::sink_ptr> sinks{console};
    auto log_file = opts.log_file;
    if (log_file.empty() && ::geteuid() == 0) {
        log_file = "/var/log/gpuprov.log";
    }
    const auto level = spdlog::level::from_str(opts.log_level);
    console->set_level(level);
    auto logger_level = level;
    if (!log_file.empty() && log_file != "-") {
        try {
            auto file = gpuprov::make_log_file_sink(log_file);
            file->set_pattern(
                fmt::format("%Y-%m-%dT%H:%M:%S.%e%z gpuprov[%P] run={} %l: %v", new_run_id()));
            file->set_level(spdlog::level::debug);
            sinks.push_back(file);
            logger_level = spdlog::level::debug;
        } catch (const gpuprov::Error& e) {
            // A read-only /var/log, or something planted there, must not stop a run: the
            // console still gets everything (gpuprov/log_file.hpp).
            console->log(
                spdlog::details::log_msg("gpuprov", spdlog::level::warn,
                                         fmt::format("not logging to {}: {}", log_file, e.what())));
        }
    }
    auto logger = std::make_shared<spdlog::logger>("gpuprov", sinks.begin(), sinks.end());
    // Only as verbose as some sink wants: every command's output is formatted only when a log
    // file will keep it.
    logger->set_level(logger_level);
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
}

/// The first word that is neither a global option nor its value, when it names no command:
/// CLI11 would only say "A subcommand is required".
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
    static const std::set<std::string_view> takes_value = {"--log-level", "--log-file", "--root"};
    for (int i = 1; i < argc; ++i) {
        const std::string_view word = argv[i];
        if (word == "--") {
            return std::nullopt;
        }
        if (word.starts_with("-")) {
            if (takes_value.count(word) != 0) {
                ++i;
            }
            continue;
        }
        for (const auto* sub : app.get_subcommands({})) {
            if (sub->get_name() == word) {
                return std::nullopt;
            }
        }
        std::vector<std::string> names;
        for (const auto* sub : app.get_subcommands({})) {
            names.push_back(sub->get_name());
        }
        const auto best = gpuprov::nearest(word, names);
        return fmt::format("unknown command '{}'{} (commands: {})", word,
                           best.empty() ? "" : fmt::format("; did you mean '{}'?", best),
                           fmt::join(names, ", "));
    }
    return std::nullopt;
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
                 "(plan --detailed-exitcode), 3 reboot required, 4 a run is in progress "
                 "(status), 64 usage error, 130/143 apply stopped by SIGINT/SIGTERM.",
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
    add_k8s_manifests_command(app, opts, exit_code);

    if (const auto unknown = unknown_command(app, argc, argv)) {
        std::cerr << "error: " << *unknown << "\n";
        return kExitUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" that exit 0; every real one is a usage error.
        return app.exit(e) == 0 ? kExitOk : kExitUsage;
    } catch (const gpuprov::UsageError& e) {
        // Usage errors exit 64, EX_USAGE (a flag value that cannot work: --root naming no
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
