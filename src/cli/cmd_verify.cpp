#include "bundle_use.hpp"
#include "cli_common.hpp"
#include "render.hpp"
#include "verify_smoke.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <spdlog/spdlog.h>

namespace gpuprov::cli {

namespace {

std::string xml_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            // XML 1.0 forbids most control characters even escaped; tool output can carry them.
            if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
                out += '?';
            } else {
                out += c;
            }
        }
    }
    return out;
}

std::string junit_xml(const std::string& profile, const std::vector<CheckOutcome>& checks,
                      const std::vector<SmokeOutcome>& smoke) {
    std::size_t failures = 0;
    std::size_t skipped = 0;
    for (const auto& c : checks) {
        failures += failed(c) ? 1 : 0;
        skipped += c.skipped ? 1 : 0;
    }
    for (const auto& s : smoke) {
        failures += s.status == SmokeStatus::failed ? 1 : 0;
        skipped += s.status == SmokeStatus::skipped ? 1 : 0;
    }
    const auto tests = checks.size() + smoke.size();
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    const auto skipped_attr =
        smoke.empty() && skipped == 0 ? std::string() : fmt::format(" skipped=\"{}\"", skipped);
    xml += fmt::format("<testsuites name=\"gpuprov verify\" tests=\"{}\" failures=\"{}\"{}>\n",
                       tests, failures, skipped_attr);
    xml += fmt::format("  <testsuite name=\"gpuprov.verify.{}\" tests=\"{}\" failures=\"{}\"{}>\n",
                       xml_escape(profile), tests, failures, skipped_attr);
    for (const auto& c : checks) {
        xml += fmt::format("    <testcase classname=\"gpuprov.{}\" name=\"{}\">",
                           xml_escape(c.step), xml_escape(c.id));
        if (c.skipped) {
            xml += fmt::format("<skipped message=\"{}\"/>", xml_escape(c.found));
        } else if (!c.passed) {
            xml += fmt::format(
                "\n      <failure type=\"check\" message=\"{}\">{}</failure>\n    ",
                xml_escape("expected " + c.expected + ", found " + c.found),
                xml_escape("command: " + c.command + "\n" + c.excerpt + "\nfix: " + c.fix));
        }
        xml += "</testcase>\n";
    }
    xml += smoke_junit_cases(smoke, xml_escape);
    xml += "  </testsuite>\n</testsuites>\n";
    return xml;
}

nlohmann::json to_json(const std::string& profile, const std::vector<CheckOutcome>& checks) {
    auto list = nlohmann::json::array();
    std::size_t n_failed = 0;
    std::size_t n_skipped = 0;
    for (const auto& c : checks) {
        n_failed += failed(c) ? 1 : 0;
        n_skipped += c.skipped ? 1 : 0;
        list.push_back({{"id", c.id},
                        {"step", c.step},
                        {"passed", c.passed},
                        {"skipped", c.skipped},
                        {"command", c.command},
                        {"excerpt", c.excerpt},
                        {"expected", c.expected},
                        {"found", c.found},
                        {"fix", c.fix}});
    }
    return {{"profile", profile},
            {"passed", n_failed == 0},
            {"checks", list},
            {"summary",
             {{"total", checks.size()},
              {"passed", checks.size() - n_failed - n_skipped},
              {"failed", n_failed},
              {"skipped", n_skipped}}}};
}

void print_human(const std::vector<CheckOutcome>& checks, bool color) {
    const auto mark = [color](bool ok) {
        if (!color) {
            return std::string(ok ? "✓" : "✗");
        }
        return std::string(ok ? "\033[32m✓\033[0m" : "\033[31m✗\033[0m");
    };
    std::size_t n_failed = 0;
    std::size_t n_skipped = 0;
    for (const auto& c : checks) {
        n_skipped += c.skipped ? 1 : 0;
        if (c.passed || c.skipped) {
            std::cout << fmt::format("{} {:<26} {}\n", c.skipped ? std::string("-") : mark(true),
                                     c.id, c.found);
            continue;
        }
        ++n_failed;
        std::cout << fmt::format("{} {:<26} expected {}, found {}\n", mark(false), c.id, c.expected,
                                 c.found);
        if (!c.fix.empty()) {
            std::cout << fmt::format("    fix: {}\n", c.fix);
        }
    }
    std::cout << (n_skipped == 0 ? fmt::format("{} checks, {} failed\n", checks.size(), n_failed)
                                 : fmt::format("{} checks, {} failed, {} skipped\n", checks.size(),
                                               n_failed, n_skipped));
}

/// The steps whose checks only ask the GPU stack (nvidia-smi, /proc, /sys, unit files): quick,
/// and meaningful at boot before the network or a container runtime is up.
const std::vector<std::string> kQuickSteps = {"driver", "fabric-manager", "tuning", "mig"};

std::string failed_ids(const std::vector<CheckOutcome>& checks) {
    std::vector<std::string> ids;
    for (const auto& c : checks) {
        if (failed(c)) {
            ids.push_back(c.id + " (" + c.found + ")");
        }
    }
    return join(ids, "; ");
}

} // namespace

void add_verify_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("verify", "check the host against a profile with the real "
                                             "tools; changes nothing");
    static std::string profile_arg;
    static bool json = false;
    static std::string junit;
    static StepFilterArgs filter_args;
    cmd->add_option("PROFILE", profile_arg, "built-in profile name or YAML file")
        ->type_name(kProfileValue)
        ->required();
    static BundleArgs bundle_args;
    add_bundle_options(cmd, bundle_args);
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->add_option("--junit", junit, "also write the results as JUnit XML to FILE")
        ->type_name(kFileValue);
    add_step_filter_options(cmd, filter_args, "the checks of ");
    static bool smoke = false;
    cmd->add_flag("--smoke", smoke,
                  "also run code on the GPUs: a CUDA program built with the profile's nvcc, "
                  "nccl-tests' all_reduce_perf, the profile's PyTorch");
    static bool quick = false;
    cmd->add_flag("--quick", quick,
                  "only the checks that ask the GPUs and need no network, compiler or "
                  "container: the driver, fabric manager, tuning and MIG steps' (what "
                  "gpuprov-ready.service runs at boot)");
    static int wait_s = 0;
    cmd->add_option("--wait", wait_s,
                    "retry the checks every 5 s until they pass, for at most SECONDS; says "
                    "ready or not ready in one line at the end")
        ->type_name("SECONDS")
        ->check(CLI::Range(0, 24 * 3600));
    cmd->callback([&opts, &exit_code] {
        use_bundle(bundle_args);
        if (smoke) {
            refuse_smoke_under_root(opts);
        }
        if (smoke && quick) {
            throw UsageError("--quick and --smoke contradict each other: the smoke tests are "
                             "the slow part");
        }
        auto filter = make_filter(filter_args);
        if (quick) {
            std::set<std::string> only;
            for (const auto& id : kQuickSteps) {
                if (filter.only.empty() || filter.only.count(id) != 0) {
                    only.insert(id);
                }
            }
            if (only.empty()) {
                throw UsageError("--quick with --only names none of the quick checks' steps (" +
                                 join(kQuickSteps, ", ") + ")");
            }
            filter.only = only;
        }
        const auto& matrix = Matrix::builtin();
        const auto profile = load_cli_profile(opts, profile_arg, matrix);
        auto& sys = host_system(opts);
        const RepoCacheDir cache(opts, sys);
        const auto started = sys.now();
        std::vector<CheckOutcome> checks;
        std::chrono::seconds waited{0};
        while (true) {
            // Facts again each round: the module may have loaded since the last one.
            const auto facts = detect_facts(sys, matrix);
            // Every step's own checks (the repository's, nouveau's, monitoring's as well as
            // the NVIDIA ones), as apply's steps run them; the repository checks may need the
            // index.
            LiveRepoProvider repos(sys, profile, facts, matrix, cache.path);
            const StepContext ctx{profile, facts, matrix, repos, units_gpuprov_path(sys)};
            checks = verify_steps(ctx, sys, make_steps(), filter);
            waited = std::chrono::duration_cast<std::chrono::seconds>(sys.now() - started);
            if (all_passed(checks) || waited.count() >= wait_s) {
                break;
            }
            std::cerr << fmt::format("not ready yet ({}s of {}s): {}\n", waited.count(), wait_s,
                                     failed_ids(checks));
            sys.sleep(
                std::min<std::chrono::milliseconds>(5s, std::chrono::seconds(wait_s) - waited));
        }
        const auto tests = smoke ? run_smoke_tests(opts, sys, profile, detect_facts(sys, matrix))
                                 : std::vector<SmokeOutcome>{};
        if (!junit.empty()) {
            sys.write_file_atomic(junit, junit_xml(profile.name, checks, tests), 0644);
        }
        const bool passed = all_passed(checks) && !any_failed(tests);
        if (json) {
            auto doc = to_json(profile.name, checks);
            if (smoke) {
                // A skipped smoke test is not a failure, and never a pass: `smoke.summary`
                // counts it separately.
                doc["passed"] = passed;
                doc["smoke"] = smoke_to_json(tests);
            }
            std::cout << json_text(versioned(std::move(doc))) << "\n";
        } else {
            print_human(checks, opts.color());
            if (smoke) {
                print_smoke_human(tests, opts.color());
            }
        }
        if (wait_s > 0) {
            // The line the system journal keeps for the readiness gate (docs/upgrade.md).
            const auto line =
                passed ? fmt::format("gpuprov-ready: the GPUs are ready ({} passed after {}s)",
                                     quick ? "verify --quick" : "verify", waited.count())
                       : fmt::format("gpuprov-ready: the GPUs are NOT ready after {}s: {}",
                                     waited.count(), failed_ids(checks));
            // With --json stdout carries only the document.
            (passed && !json ? std::cout : std::cerr) << line << "\n";
            if (passed) {
                spdlog::info("{}", line);
            } else {
                spdlog::error("{}", line);
            }
        }
        exit_code = passed ? kExitOk : kExitFailed;
    });
}

} // namespace gpuprov::cli
