// gpuprov: turn a fresh machine into a working, verified NVIDIA GPU server.
#include "bundle_use.hpp"
#include "cli_common.hpp"
#include "cmd_forecast.hpp"

#include <algorithm>
#include <chrono>
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

/// The global options that take a value (the next word is not the command).
bool global_takes_value(std::string_view word) {
    return word == "--log-level" || word == "--log-file" || word == "--root";
}

/// The index in argv of the command: the first word that is neither a global option nor its
/// value; 0 when there is none (a bare `gpuprov`, or only global options).
int command_index(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view word = argv[i];
        if (word == "--") {
            return 0;
        }
        if (word.starts_with("-")) {
            i += global_takes_value(word) ? 1 : 0;
            continue;
        }
        return i;
    }
    return 0;
}

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) {
        names.push_back(sub->get_name());
    }
    return names;
}

/// "unknown command 'plna'; did you mean 'plan'? (commands: ...)": CLI11 would only say "A
/// subcommand is required" or that an argument was not expected.
std::string unknown_command_message(const CLI::App& app, std::string_view word) {
    const auto names = command_names(app);
    const auto best = gpuprov::nearest(word, names);
    return fmt::format("unknown command '{}'{} (commands: {})", word,
                       best.empty() ? "" : fmt::format("; did you mean '{}'?", best),
                       fmt::join(names, ", "));
}

/// Every "--long" and "-s" name of `cmd`'s options, and which of them take a value.
struct OptionNames {
    std::vector<std::string> names;
    std::set<std::string> with_value;
};
void collect_options(const CLI::App& cmd, OptionNames& out) {
    for (const auto* opt : cmd.get_options()) {
        const bool takes_value = opt->get_type_size() != 0;
        for (const auto& l : opt->get_lnames()) {
            out.names.push_back("--" + l);
            if (takes_value) {
                out.with_value.insert("--" + l);
            }
        }
        for (const auto& s : opt->get_snames()) {
            out.names.push_back("-" + s);
            if (takes_value) {
                out.with_value.insert("-" + s);
            }
        }
    }
}

/// The first word of argv[from, to) that looks like an option and is not one of `known`, as
/// "unknown option '--jsn'{for}; did you mean '--json'? {usage}"; nullopt when there is none.
/// `--` ends the options.
std::optional<std::string> unknown_option(const OptionNames& known, int from, int to, char** argv,
                                          std::string_view where, std::string_view usage) {
    for (int i = from; i < to; ++i) {
        std::string word = argv[i];
        if (word == "--") {
            return std::nullopt;
        }
        if (!word.starts_with("-") || word == "-") {
            continue;
        }
        word = word.substr(0, word.find('='));
        if (known.with_value.count(word) != 0) {
            ++i; // its value, whatever it looks like
            continue;
        }
        if (std::find(known.names.begin(), known.names.end(), word) == known.names.end()) {
            const auto best = gpuprov::nearest(word, known.names);
            return fmt::format("unknown option '{}'{}{} {}", word, where,
                               best.empty() ? "." : fmt::format("; did you mean '{}'?", best),
                               usage);
        }
    }
    return std::nullopt;
}

/// A CLI11 parse error as gpuprov says errors: "unknown option '--jsn' for 'gpuprov plan'; did
/// you mean '--json'?" (CLI11: "The following argument was not expected: --jsn"), and where to
/// read the command's usage.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e, int argc,
                                char** argv) {
    const int at = command_index(argc, argv);
    const CLI::App* cmd = nullptr;
    if (at > 0) {
        for (const auto* sub : app.get_subcommands({})) {
            if (sub->get_name() == argv[at]) {
                cmd = sub;
            }
        }
    }
    const std::string name = cmd == nullptr ? "gpuprov" : "gpuprov " + cmd->get_name();
    const std::string usage = fmt::format("Run '{} --help' for usage.", name);
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        OptionNames known;
        collect_options(app, known); // global options are accepted after the command too
        if (cmd != nullptr) {
            collect_options(*cmd, known);
        }
        if (auto message =
                unknown_option(known, at + 1, argc, argv, fmt::format(" for '{}'", name), usage)) {
            return *message;
        }
    }
    return fmt::format("{}. {}", e.what(), usage);
}

/// The first word before argv[end] that looks like an option and is none of gpuprov's global
/// ones, as "unknown option '--log-levl'; did you mean '--log-level'?"; nullopt when none.
std::optional<std::string> unknown_global_option(const CLI::App& app, int end, char** argv) {
    OptionNames known;
    collect_options(app, known);
    return unknown_option(known, 1, end, argv, "", "Run 'gpuprov --help' for usage.");
}

/// `gpuprov help [COMMAND]`: the help of gpuprov or of one command, on stdout, exit 0.
void add_help_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("help", "show the help of gpuprov or of one command");
    static std::string topic;
    cmd->add_option("COMMAND", topic, "the command to explain");
    cmd->callback([&app] {
        if (topic.empty()) {
            // Not app.help(): once a subcommand is parsed it answers with that one's help.
            std::cout << app.get_formatter()->make_help(&app, app.get_name(),
                                                        CLI::AppFormatMode::Normal);
            return;
        }
        for (const auto* sub : app.get_subcommands({})) {
            if (sub->get_name() == topic) {
                std::cout << sub->help(app.get_name()); // "Usage: gpuprov plan ...", as --help
                return;
            }
        }
        throw gpuprov::UsageError(unknown_command_message(app, topic));
    });
}

/// The log's first and last line of each run: what ran (argv, pid, uid) and how it ended (the
/// exit code and the time), so one run can be found and judged in a shared log.
class RunLines {
public:
    RunLines(int argc, char** argv) : m_argv(argv, argv + argc) {}
    RunLines(const RunLines&) = delete;
    RunLines& operator=(const RunLines&) = delete;
    /// Called once the log is set up (before, nothing would reach the file).
    void started() {
        m_logging = true;
        spdlog::info("start: {} (pid {}, uid {})", gpuprov::display_argv(m_argv), ::getpid(),
                     ::geteuid());
    }
    int ended(int code) const {
        if (m_logging) {
            const auto secs =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
            spdlog::info("end: exit {} in {:.3f} s", code, secs);
        }
        return code;
    }

private:
    std::vector<std::string> m_argv;
    std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
    bool m_logging = false;
};

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
    accept_only(app.add_option("--log-level", opts.log_level,
                               "what reaches stderr: trace, debug, info, warn, error, critical "
                               "or off"),
                {"trace", "debug", "info", "warn", "error", "critical", "off"})
        ->type_name("LEVEL")
        ->capture_default_str();
    app.add_option("--log-file", opts.log_file,
                   "also log here (default /var/log/gpuprov.log as root; '-' for none)")
        ->type_name(kFileValue);
    app.add_flag("--no-color", opts.no_color, "plain output (also NO_COLOR=1)");
    app.add_option("--root", opts.root,
                   "read host files under this directory (inspect a mounted image or a fixture)")
        ->type_name(kDirValue)
        ->capture_default_str();
    RunLines run_lines(argc, argv);
    app.parse_complete_callback([&] {
        setup_logging(opts);
        run_lines.started();
    });

    add_profiles_command(app, opts, exit_code);
    add_facts_command(app, opts, exit_code);
    add_plan_command(app, opts, exit_code);
    add_apply_command(app, opts, exit_code);
    add_rollback_command(app, opts, exit_code);
    add_verify_command(app, opts, exit_code);
    add_status_command(app, opts, exit_code);
    add_doctor_command(app, opts, exit_code);
    add_metrics_command(app, opts, exit_code);
    add_forecast_command(app, opts, exit_code);
    add_cloud_init_command(app, opts, exit_code);
    add_k8s_manifests_command(app, opts, exit_code);
    add_bundle_command(app, opts, exit_code);
    add_slurm_gres_command(app, opts, exit_code);
    add_upgrade_command(app, opts, exit_code);

    add_help_command(app);
    add_completion_command(app);

    // An unknown option before the command: named with the nearest one, and never taken for
    // the command's place (`--log-levl info facts` is not the command "info").
    const int at = command_index(argc, argv);
    if (const auto unknown = unknown_global_option(app, at == 0 ? argc : at, argv)) {
        std::cerr << "error: " << *unknown << "\n";
        return kExitUsage;
    }
    if (at > 0) {
        const auto names = command_names(app);
        if (std::find(names.begin(), names.end(), argv[at]) == names.end()) {
            std::cerr << "error: " << unknown_command_message(app, argv[at]) << "\n";
            return kExitUsage;
        }
    } else if (std::none_of(argv + 1, argv + argc, [](std::string_view w) {
                   return w == "--help" || w == "-h" || w == "--version";
               })) {
        // A bare `gpuprov` (or only global options): what it can do, as `git` and `apt` show,
        // rather than CLI11's "A subcommand is required". Still a usage error for scripts.
        std::cout << app.help();
        return kExitUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" that exit 0; every real one is a usage error.
        if (e.get_exit_code() == 0) {
            return run_lines.ended(app.exit(e));
        }
        std::cerr << "error: " << parse_error_message(app, e, argc, argv) << "\n";
        return run_lines.ended(kExitUsage);
    } catch (const gpuprov::UsageError& e) {
        // Usage errors exit 64, EX_USAGE (a flag value that cannot work: --root naming no
        // directory, apply --root, an unknown step id, apply off a terminal without --yes).
        std::cerr << "error: " << e.describe() << "\n";
        return run_lines.ended(kExitUsage);
    } catch (const gpuprov::ProfileError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return run_lines.ended(kExitFailed);
    } catch (const gpuprov::Error& e) {
        std::cerr << "error: " << e.describe() << "\n";
        return run_lines.ended(kExitFailed);
    } catch (const std::exception& e) {
        // Nothing aborts: whatever escaped still ends as one clean error line and exit 1.
        std::cerr << "error: internal: " << e.what() << "\n";
        return run_lines.ended(kExitFailed);
    } catch (...) {
        std::cerr << "error: internal: unknown exception\n";
        return run_lines.ended(kExitFailed);
    }
    return run_lines.ended(exit_code);
}
