#include "bundle_use.hpp"
#include "cli_common.hpp"
#include "console.hpp"
#include "profile_arg.hpp"
#include "render.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/local_trust.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/saved_plan.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

namespace gpuprov::cli {

namespace {

/// The saved plan `path`, checked against what else the command line says: it fixes the
/// profile, the filters and --allow-remove, so none may be given beside it unless they agree.
SavedPlan load_saved_plan(const std::string& path, const std::string& profile_arg,
                          const StepFilterArgs& filter_args, bool allow_remove) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        throw UsageError("--plan " + path + ": the file cannot be read");
    }
    auto saved = saved_plan_from_json(text.str(), path);
    if (!profile_arg.empty() && canonical_profile_arg(profile_arg) != saved.profile_arg) {
        throw UsageError(fmt::format("--plan {} was saved for the profile {}, not {}", path,
                                     saved.profile_arg, profile_arg));
    }
    if (!filter_args.only.empty() || !filter_args.skip.empty() ||
        (allow_remove && !saved.allow_remove)) {
        throw UsageError("--plan fixes --only, --skip and --allow-remove as the plan was saved; "
                         "give them to `gpuprov plan --out` instead");
    }
    return saved;
}

} // namespace

// What the resume unit runs after a reboot: a built-in by name; a file's own text, or, when it
// extends other files, the chain resolved into one document, so neither the file nor its
// parents need to survive (or stay the same) until the reboot.
std::string profile_text_for_resume(const std::string& arg, const Profile& profile) {
    if (is_builtin_profile(arg)) {
        return {};
    }
    for (const auto& parent : profile.extends_chain) {
        if (parent.rfind("builtin:", 0) != 0) {
            return "# The profile gpuprov apply ran, from " + profile.source +
                   " with its extends: chain resolved into one file.\n" +
                   resolved_profile_yaml(arg);
        }
    }
    std::ifstream in(arg, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        throw HostError("cannot read the profile " + arg + " again to install it");
    }
    return text.str();
}

// As root, the profile picks the repositories and keys root installs from, and the binary
// copied for the units runs at every boot: each must be a file only root could have written.
void require_local_trust(const System& sys, const std::string& profile_arg, const Profile& profile,
                         const std::string& self) {
    if (!is_builtin_profile(profile_arg)) {
        require_trusted(sys, canonical_profile_arg(profile_arg), "profile");
    }
    for (const auto& parent : profile.extends_chain) {
        if (parent.rfind("builtin:", 0) != 0) {
            require_trusted(sys, std::filesystem::absolute(parent).lexically_normal(),
                            "parent profile (extends:)");
        }
    }
    if (!self.empty()) {
        require_trusted(sys, self, "running gpuprov binary (the units run a copy of it)");
    }
    require_trusted_units_binary(sys, self);
}

std::string running_binary() {
    std::error_code ec;
    auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : p.string();
}

void add_apply_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "apply", "make the host match the profile (root); resumes itself after a needed reboot");
    static std::string profile_arg;
    static bool yes = false;
    static bool dry_run = false;
    static bool json = false;
    static StepFilterArgs filter_args;
    static std::string reboot = "never";
    static bool allow_remove = false;
    static bool allow_untrusted = false;
    static std::string plan_file;
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file (or --plan FILE)")
        ->type_name(kProfileValue);
    cmd->add_option("--plan", plan_file,
                    "carry out exactly the plan `plan --out FILE` saved (its profile, filters "
                    "and transaction); refused, naming each difference, when the profile, the "
                    "host, a signed index or the transaction changed since")
        ->type_name(kFileValue);
    cmd->add_flag("-y,--yes", yes, "do not ask for confirmation (needed when not on a terminal)");
    cmd->add_flag("--dry-run", dry_run, "show the plan and change nothing (same as plan)");
    add_step_filter_options(cmd, filter_args);
    accept_only(cmd->add_option("--reboot", reboot,
                                "never: stop with exit 3 when a reboot is needed; if-needed: "
                                "reboot and resume automatically"),
                {"never", "if-needed"})
        ->type_name("POLICY")
        ->capture_default_str();
    static BundleArgs bundle_args;
    add_bundle_options(cmd, bundle_args);
    cmd->add_flag("--json", json, "print the run's result as one JSON document");
    cmd->add_flag("--allow-remove", allow_remove,
                  "allow apt to remove packages the profile does not own (the plan lists "
                  "them); kept by the resume unit");
    cmd->add_flag("--allow-untrusted", allow_untrusted,
                  "as root, use a profile or binary that someone other than root could have "
                  "changed (owned by another user, group/other-writable, or in such a "
                  "directory); refused by default");
    cmd->callback([&opts, &exit_code] {
        use_bundle(bundle_args);
        auto filter = make_filter(filter_args);
        std::optional<SavedPlan> saved;
        if (!plan_file.empty()) {
            saved = load_saved_plan(plan_file, profile_arg, filter_args, allow_remove);
            profile_arg = saved->profile_arg;
            filter = StepFilter{.only = saved->only, .skip = saved->skip};
            allow_remove = saved->allow_remove;
        } else if (profile_arg.empty()) {
            throw UsageError("apply needs a PROFILE (a built-in name or a YAML file) or --plan "
                             "FILE (a plan saved by `gpuprov plan PROFILE --out FILE`)");
        }
        if (dry_run) {
            exit_code = show_plan(opts, profile_arg, filter, json, false, allow_remove);
            return;
        }
        auto& sys = host_system(opts);
        if (foreign_root(opts)) {
            // --root only redirects file reads; apt, dpkg, systemctl and update-initramfs
            // would still act on the live host, so a run "against DIR" would change this one.
            throw UsageError(fmt::format(
                "apply --root {} is refused: gpuprov reads files under --root but runs its "
                "commands (apt, dpkg, systemctl, update-initramfs) on this host; use `plan "
                "--root` to inspect an image, or run gpuprov inside it (chroot)",
                opts.root));
        }
        if (sys.effective_uid() != 0) {
            throw HostError("apply changes the system and must run as root (try: sudo gpuprov "
                            "apply ...); `gpuprov plan` shows the changes without root");
        }
        const auto& matrix = Matrix::builtin();
        const auto profile = load_cli_profile(opts, profile_arg, matrix);
        const auto self = running_binary();
        if (!allow_untrusted) {
            require_local_trust(sys, profile_arg, profile, self);
        }
        std::optional<std::vector<std::string>> confirmed;
        if (saved) {
            // The saved plan was the review: carried out only if it is still the plan.
            // Every signed index fetched anew: a build published since the review must show.
            const auto now = compute_plan(opts, profile_arg, filter, allow_remove, true);
            const auto differences = saved_plan_differences(saved->seal, now.seal);
            if (!differences.empty()) {
                throw Error(fmt::format(
                    "the saved plan {} is stale, nothing was changed; what differs now:\n  {}\n"
                    "Save and review the plan again: gpuprov plan {} --out {}",
                    plan_file, fmt::join(differences, "\n  "), profile_arg, plan_file));
            }
            confirmed = saved->seal.promise;
        } else if (!yes) {
            if (!sys.interactive()) {
                throw UsageError("not on a terminal: pass --yes to apply without confirmation");
            }
            PlanRun shown_plan;
            const auto shown =
                show_plan(opts, profile_arg, filter, false, true, allow_remove, &shown_plan);
            if (shown == kExitFailed) {
                exit_code = kExitFailed;
                return;
            }
            if (shown == kExitOk) {
                // A converged host: nothing to confirm (the plan above says "Nothing to do").
                exit_code = kExitOk;
                return;
            }
            if (!confirm("Apply these changes?")) {
                std::cout << "Nothing changed.\n";
                exit_code = kExitFailed;
                return;
            }
            confirmed = std::move(shown_plan.seal.promise);
        }
        const auto bundle = bundle_in_use();
        ApplyOptions options{.filter = filter,
                             .reboot = reboot == "if-needed" ? RebootPolicy::if_needed
                                                             : RebootPolicy::never,
                             .allow_remove = allow_remove,
                             .profile_arg = canonical_profile_arg(profile_arg),
                             .profile_text = profile_text_for_resume(profile_arg, profile),
                             .self_path = self,
                             .confirmed_plan = std::move(confirmed),
                             .bundle_dir = bundle.dir,
                             .bundle_key = bundle.key};
        ConsoleReporter reporter(opts.color(), json);
        const auto result = apply_profile(sys, profile, matrix, options, reporter);

        if (json) {
            nlohmann::json steps = nlohmann::json::array();
            for (const auto& [id, status] : result.steps) {
                steps.push_back({{"id", id}, {"status", to_string(status)}});
            }
            std::cout << json_text(versioned({{"result", to_string(result.status)},
                                              {"message", result.message},
                                              {"apt_transactions", result.apt_transactions},
                                              {"index_refreshes", result.index_refreshes},
                                              {"interrupted", result.interrupted},
                                              {"steps", steps}}))
                      << "\n";
        }
        if (result.interrupted) {
            // 128 + the signal, as a shell reports a command the signal ended (130 for Ctrl-C,
            // 143 for SIGTERM); the journal already says "interrupted by signal".
            std::cerr << "error: " << result.message << "\n";
            exit_code = stop_exit_code() != 0 ? stop_exit_code() : kExitFailed;
            return;
        }
        switch (result.status) {
        case StepStatus::done:
            if (!json) {
                std::cout << fmt::format(
                    "Done: {} package transaction{}, {} index refresh{}.\n",
                    result.apt_transactions, result.apt_transactions == 1 ? "" : "s",
                    result.index_refreshes, result.index_refreshes == 1 ? "" : "es");
            }
            exit_code = kExitOk;
            break;
        case StepStatus::reboot_required:
            std::cerr << "reboot required: " << result.message
                      << "\ngpuprov-resume.service finishes the run at the next boot.\n";
            exit_code = kExitRebootRequired;
            break;
        default:
            std::cerr << "error: " << result.message << "\n";
            exit_code = kExitFailed;
        }
    });
}

} // namespace gpuprov::cli
