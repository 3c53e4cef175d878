// `gpuprov upgrade PROFILE` (docs/upgrade.md): apply on a node in use, with the node taken out
// of Slurm/Kubernetes first and put back only after verify --smoke passed. The order lives in
// the engine (gpuprov/upgrade.hpp); this file wires in apply and verify as the CLI runs them.
#include "bundle_use.hpp"
#include "cli_common.hpp"
#include "console.hpp"
#include "profile_arg.hpp"
#include "verify_smoke.hpp"

#include <fmt/format.h>
#include <gpuprov/check.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade.hpp>
#include <iostream>
#include <spdlog/spdlog.h>

namespace gpuprov::cli {

namespace {

/// apply's steps as plain lines: the upgrade's own lines come between them.
/// The failed checks and smoke tests in one line each, for the upgrade's record.
std::string failures(const std::vector<CheckOutcome>& checks,
                     const std::vector<SmokeOutcome>& smoke) {
    std::vector<std::string> out;
    for (const auto& c : checks) {
        if (failed(c)) {
            out.push_back(fmt::format("{}: expected {}, found {}", c.id, c.expected, c.found));
        }
    }
    for (const auto& s : smoke) {
        if (s.status == SmokeStatus::failed) {
            out.push_back(fmt::format("{}: {}", s.id, s.reason));
        }
    }
    return join(out, "; ");
}

} // namespace

void add_upgrade_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "upgrade", "change the driver branch or versions on a node in use (root): drain it "
                   "from Slurm/Kubernetes, wait for the GPUs, apply, reboot, verify --smoke, "
                   "put it back");
    static std::string profile_arg;
    static bool yes = false;
    static StepFilterArgs filter_args;
    static std::string reboot = "if-needed";
    static bool allow_remove = false;
    static bool allow_untrusted = false;
    static std::string node;
    static std::string kubeconfig;
    static int wait_s = 3600;
    static int poll_s = 10;
    static int k8s_timeout_s = 600;
    static bool no_smoke = false;
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file")
        ->type_name(kProfileValue)
        ->required();
    cmd->add_flag("-y,--yes", yes, "do not ask for confirmation (needed when not on a terminal)");
    add_step_filter_options(cmd, filter_args);
    accept_only(cmd->add_option("--reboot", reboot,
                                "if-needed: reboot when apply needs it and continue at boot; "
                                "never: stop with exit 3, the node drained"),
                {"never", "if-needed"})
        ->type_name("POLICY")
        ->capture_default_str();
    cmd->add_option("--node", node,
                    "the node's name in Slurm and Kubernetes (default: the short hostname)");
    cmd->add_option("--kubeconfig", kubeconfig,
                    "kubeconfig for kubectl (default: /etc/kubernetes/admin.conf, then "
                    "/root/.kube/config)")
        ->type_name(kFileValue);
    cmd->add_option("--wait", wait_s,
                    "seconds to wait for GPU processes and Slurm jobs to end before giving up")
        ->capture_default_str()
        ->check(CLI::Range(0, 7 * 24 * 3600));
    cmd->add_option("--poll", poll_s, "seconds between two looks at the GPUs while waiting")
        ->capture_default_str()
        ->check(CLI::Range(1, 3600));
    cmd->add_option("--drain-timeout", k8s_timeout_s, "kubectl drain --timeout, in seconds")
        ->capture_default_str()
        ->check(CLI::Range(1, 24 * 3600));
    cmd->add_flag("--no-smoke", no_smoke,
                  "verify without the smoke tests (a host whose GPUs cannot run the profile's "
                  "CUDA program); kept for the run after the reboot");
    cmd->add_flag("--allow-remove", allow_remove,
                  "allow apt to remove packages the profile does not own (as apply)");
    cmd->add_flag("--allow-untrusted", allow_untrusted,
                  "as root, use a profile or binary someone other than root could have "
                  "changed (as apply)");
    static BundleArgs bundle_args;
    add_bundle_options(cmd, bundle_args);
    cmd->callback([&opts, &exit_code] {
        use_bundle(bundle_args);
        const auto filter = make_filter(filter_args);
        auto& sys = host_system(opts);
        if (foreign_root(opts)) {
            throw UsageError("upgrade --root is refused: it runs scontrol, kubectl and apply's "
                             "commands on this host");
        }
        if (sys.effective_uid() != 0) {
            throw HostError("upgrade drains the node and changes the system: run it as root");
        }
        if (!yes) {
            // Draining a node in use is not something to start by accident; there is no plan
            // to confirm here (`gpuprov plan` shows what apply would change).
            throw UsageError("upgrade drains this node: pass --yes (review `gpuprov plan "
                             "PROFILE` first)");
        }
        const auto& matrix = Matrix::builtin();
        const auto profile = load_cli_profile(opts, profile_arg, matrix);
        const auto self = running_binary();
        if (!allow_untrusted) {
            require_local_trust(sys, profile_arg, profile, self);
        }
        const auto bundle = bundle_in_use();
        const ApplyOptions apply_opts{.filter = filter,
                                      .reboot = reboot == "if-needed" ? RebootPolicy::if_needed
                                                                      : RebootPolicy::never,
                                      .allow_remove = allow_remove,
                                      .profile_arg = canonical_profile_arg(profile_arg),
                                      .profile_text = profile_text_for_resume(profile_arg, profile),
                                      .self_path = self,
                                      .upgrade = true,
                                      .bundle_dir = bundle.dir,
                                      .bundle_key = bundle.key};
        UpgradeHooks hooks;
        hooks.apply = [&](std::string& message) {
            ConsoleReporter reporter(opts.color(), false);
            const auto result = apply_profile(sys, profile, matrix, apply_opts, reporter);
            message = result.message;
            return result.interrupted ? StepStatus::failed : result.status;
        };
        hooks.verify = [&](bool with_smoke, std::string& message) {
            refuse_smoke_under_root(opts);
            const auto facts = detect_facts(sys, matrix);
            const RepoCacheDir cache(opts, sys);
            LiveRepoProvider repos(sys, profile, facts, matrix, cache.path);
            const StepContext ctx{profile, facts, matrix, repos, units_gpuprov_path(sys)};
            const auto checks = verify_steps(ctx, sys, make_steps(), filter);
            const auto smoke = with_smoke ? run_smoke_tests(opts, sys, profile, facts)
                                          : std::vector<SmokeOutcome>{};
            if (with_smoke) {
                print_smoke_human(smoke, opts.color());
            }
            message = failures(checks, smoke);
            return all_passed(checks) && !any_failed(smoke);
        };
        const UpgradeOptions upgrade_opts{.profile = apply_opts.profile_arg,
                                          .node = node,
                                          .kubeconfig = kubeconfig,
                                          .wait_limit = std::chrono::seconds(wait_s),
                                          .poll = std::chrono::seconds(poll_s),
                                          .k8s_timeout = std::chrono::seconds(k8s_timeout_s),
                                          .smoke = !no_smoke};
        const auto result = run_upgrade(sys, upgrade_opts, hooks, [](const std::string& line) {
            spdlog::debug("{}", line);
            std::cout << line << std::endl;
        });
        switch (result.status) {
        case StepStatus::done:
            std::cout << "Done: " << result.message << "\n";
            exit_code = kExitOk;
            break;
        case StepStatus::reboot_required:
            std::cerr << "reboot required: " << result.message << "\n";
            exit_code = kExitRebootRequired;
            break;
        default:
            std::cerr << "error: " << result.message << "\n";
            exit_code = kExitFailed;
        }
    });
}

} // namespace gpuprov::cli
