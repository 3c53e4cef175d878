// `gpuprov rollback [PROFILE]`: reinstall the closure the journal recorded as verified before
// the newest change (docs/rollback.md), through apply's planned, guarded transaction path.
#include "bundle_use.hpp"
#include "cli_common.hpp"
#include "console.hpp"
#include "render.hpp"

#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/local_trust.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/rollback.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>

namespace gpuprov::cli {

namespace {

using Installed = std::map<std::string, std::optional<std::string>>;

Installed installed_versions(const System& sys, const PackageManager* pm,
                             const std::vector<std::string>& names) {
    Installed out;
    for (const auto& name : names) {
        out[name] = pm != nullptr ? pm->installed(sys, name) : std::nullopt;
    }
    return out;
}

/// The profile the target closure was verified with: its recorded text, or the built-in.
Profile target_profile(const GlobalOptions& opts, const VerifiedClosure& c, const Matrix& matrix) {
    if (c.profile_text.empty()) {
        return load_cli_profile(opts, c.profile, matrix);
    }
    return load_profile_text(c.profile_text, c.profile, matrix);
}

std::string describe(const VerifiedClosure& c) {
    return fmt::format("profile '{}', driver branch {}, CUDA {}, verified {}{}", c.profile_name,
                       c.driver_branch.empty() ? "none" : c.driver_branch,
                       c.cuda.empty() ? "none" : c.cuda, c.verified_at,
                       c.via == "rollback" ? " (by a rollback)" : "");
}

struct RollbackPlan {
    HostFacts facts;
    Plan plan;
    std::vector<std::string> missing;
};

/// What apply with the closure's pins would do, resolved by apt/dnf as `plan` resolves it.
RollbackPlan plan_rollback(const GlobalOptions& opts, System& sys, const Profile& profile,
                           const Matrix& matrix, const std::map<std::string, std::string>& pins,
                           bool allow_remove) {
    RollbackPlan out;
    out.facts = detect_facts(sys, matrix);
    const RepoCacheDir cache(opts, sys);
    LiveRepoProvider repos(sys, profile, out.facts, matrix, cache.path);
    repos.pins = pins;
    const StepContext ctx{profile, out.facts, matrix, repos, units_gpuprov_path(sys)};
    out.plan = build_plan(ctx, sys, make_steps(), {});
    out.missing = repos.missing_pins();
    if (!out.missing.empty()) {
        return out;
    }
    resolve_transactions(sys, ctx, out.plan,
                         {.allow_remove = allow_remove,
                          .scratch_dir = cache.path + "/apt-view",
                          .cache_dir = cache.path});
    auto exact = pins;
    for (const auto& name : repos.foreign_pins()) {
        exact.erase(name);
    }
    (void)block_unpinned_versions(out.plan, exact);
    return out;
}

} // namespace

void add_rollback_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "rollback", "reinstall the closure verified before the newest change (root for the "
                    "change; docs/rollback.md)");
    static std::string profile_arg;
    static bool plan_only = false;
    static bool yes = false;
    static std::string reboot = "never";
    static bool allow_remove = false;
    cmd->add_option("PROFILE", profile_arg,
                    "only closures verified with a profile of this name count (default: all)")
        ->type_name(kProfileValue);
    cmd->add_flag("--plan", plan_only,
                  "show the closure and apt's/dnf's transaction, change nothing; exit 0 when "
                  "there is nothing to do, 2 when a rollback is pending, 1 when refused");
    cmd->add_flag("-y,--yes", yes, "do not ask for confirmation (needed when not on a terminal)");
    accept_only(cmd->add_option("--reboot", reboot,
                                "never: stop with exit 3 when a reboot is needed; if-needed: "
                                "reboot and resume the rollback automatically"),
                {"never", "if-needed"})
        ->type_name("POLICY")
        ->capture_default_str();
    cmd->add_flag("--allow-remove", allow_remove,
                  "allow apt to remove packages no gpuprov run installed (the plan lists them)");
    cmd->callback([&opts, &exit_code] {
        auto& sys = host_system(opts);
        const auto& matrix = Matrix::builtin();
        const auto journal = load_journal(sys);
        if (!journal) {
            std::cerr << "error: no journal at " << kJournalPath
                      << ": nothing was ever applied and verified here, so there is nothing to "
                         "roll back to\n";
            exit_code = kExitFailed;
            return;
        }
        if (foreign_root(opts)) {
            // As apply --root: files would be read from the image, but apt, dpkg and rpm would
            // answer for (and change) this host.
            throw UsageError(fmt::format("rollback --root {} is refused: gpuprov would run apt and "
                                         "dpkg on this host; run gpuprov inside the image",
                                         opts.root));
        }
        std::string name_filter;
        if (!profile_arg.empty()) {
            name_filter = load_cli_profile(opts, profile_arg, matrix).name;
        }
        const auto host = detect_facts(sys, matrix);
        const auto pm = make_package_manager(host);
        const auto installed =
            installed_versions(sys, pm.get(), rollback_candidate_packages(*journal));
        const auto target = rollback_target(*journal, name_filter, installed);
        if (!target.closure) {
            std::cerr << "error: nothing to roll back to: " << target.refusal << "\n";
            exit_code = kExitFailed;
            return;
        }
        const auto& closure = *target.closure;
        if (target.already_current) {
            std::cout << fmt::format("Nothing to do: the host runs the closure verified before "
                                     "the newest change ({}).\n",
                                     describe(closure));
            exit_code = kExitOk;
            return;
        }
        std::cout << fmt::format("Rollback from: {}\n", target.from ? describe(*target.from) : "");
        std::cout << fmt::format("Rollback to:   {}\n", describe(closure));
        const auto diff = closure_differences(closure.packages, installed);
        std::cout << fmt::format("Packages to restore ({} of {}):\n", diff.size(),
                                 closure.packages.size());
        for (const auto& line : diff) {
            std::cout << "  " << line << "\n";
        }
        if (diff.empty()) {
            std::cout << "  (all installed at the closure's versions; the rollback verifies "
                         "them and records the closure as current)\n";
        }
        const auto profile = target_profile(opts, closure, matrix);
        std::optional<std::vector<std::string>> confirmed;
        if (plan_only || (!yes && sys.effective_uid() == 0)) {
            if (!plan_only && !sys.interactive()) {
                throw UsageError("not on a terminal: pass --yes to roll back without confirmation");
            }
            const auto rp =
                plan_rollback(opts, sys, profile, matrix, closure.packages, allow_remove);
            if (!rp.missing.empty()) {
                std::cerr << "error: the verified closure's versions are no longer in the "
                             "repositories: "
                          << join(rp.missing, ", ") << "\n";
                exit_code = kExitFailed;
                return;
            }
            std::cout << render_plan_text(rp.plan, rp.facts, opts.color());
            if (plan_only) {
                exit_code = rp.plan.blocked()           ? kExitFailed
                            : rp.plan.changes_pending() ? kExitChangesPending
                                                        : kExitOk;
                return;
            }
            if (rp.plan.blocked()) {
                exit_code = kExitFailed;
                return;
            }
            if (!confirm("Roll back?")) {
                std::cout << "Nothing changed.\n";
                exit_code = kExitFailed;
                return;
            }
            // What the operator said yes to is what runs (as interactive apply).
            confirmed = plan_promise(rp.plan);
        }
        if (sys.effective_uid() != 0) {
            throw HostError("rollback changes the system and must run as root (try: sudo gpuprov "
                            "rollback ...); `gpuprov rollback --plan` shows it without root");
        }
        const auto self = running_binary();
        if (!self.empty()) {
            require_trusted(sys, self, "running gpuprov binary (the units run a copy of it)");
        }
        require_trusted_units_binary(sys, self);
        ApplyOptions options{.filter = {},
                             .reboot = reboot == "if-needed" ? RebootPolicy::if_needed
                                                             : RebootPolicy::never,
                             .allow_remove = allow_remove,
                             .pins = closure.packages,
                             .rollback = true,
                             .profile_arg = closure.profile,
                             .profile_text = closure.profile_text,
                             .self_path = self,
                             .confirmed_plan = std::move(confirmed)};
        ConsoleReporter reporter(opts.color(), false);
        const auto result = apply_profile(sys, profile, matrix, options, reporter);
        switch (result.status) {
        case StepStatus::done: {
            const auto now = installed_versions(sys, pm.get(), [&] {
                std::vector<std::string> names;
                for (const auto& [n, v] : closure.packages) {
                    names.push_back(n);
                }
                return names;
            }());
            const auto left = closure_differences(closure.packages, now);
            if (!left.empty()) {
                std::cerr << "error: the rollback finished, but these packages are not at the "
                             "closure's versions: "
                          << join(left, ", ") << "\n";
                exit_code = kExitFailed;
                return;
            }
            std::cout << fmt::format("Rolled back: {} packages at the closure's versions, "
                                     "verified.\n",
                                     closure.packages.size());
            exit_code = kExitOk;
            break;
        }
        case StepStatus::reboot_required:
            std::cerr << "reboot required: " << result.message
                      << "\ngpuprov-resume.service finishes the rollback at the next boot.\n";
            exit_code = kExitRebootRequired;
            break;
        default:
            std::cerr << "error: " << result.message << "\n";
            exit_code =
                result.interrupted && stop_exit_code() != 0 ? stop_exit_code() : kExitFailed;
        }
    });
}

} // namespace gpuprov::cli
