#include "bundle_use.hpp"
#include "cli_common.hpp"
#include "profile_arg.hpp"
#include "render.hpp"
#include "render_forecast.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/builtin_names.hpp>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/local_system.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/saved_plan.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace gpuprov::cli {

namespace {

std::filesystem::path on_host(const GlobalOptions& opts, const std::string& path) {
    return opts.root.empty() || opts.root == "/"
               ? std::filesystem::path(path)
               : std::filesystem::path(opts.root) / std::filesystem::path(path).relative_path();
}

// Whether this user could create or write `dir`: it, or its nearest existing ancestor, is a
// writable directory.
bool writable(const std::filesystem::path& dir) {
    for (auto p = dir; !p.empty(); p = p.parent_path()) {
        std::error_code ec;
        if (std::filesystem::exists(p, ec)) {
            return std::filesystem::is_directory(p, ec) && ::access(p.c_str(), W_OK | X_OK) == 0;
        }
        if (p == p.parent_path()) {
            break;
        }
    }
    return false;
}

} // namespace

RepoCacheDir::RepoCacheDir(const GlobalOptions& opts, const System& sys) {
    path = default_repo_cache_dir(sys);
    if (!path.empty() && writable(on_host(opts, path))) {
        return;
    }
    // No home (env -i, a systemd unit, CI as nobody) or one that cannot be written
    // (HOME=/nonexistent): a private directory of this run, removed at the end.
    const auto home = path;
    path.clear();
    m_private.emplace(opts, sys, "gpuprov-cache");
    if (m_private->path.empty()) {
        spdlog::warn("no writable repository cache ({}) and no private one under {}: {}",
                     home.empty() ? "no HOME" : home, m_private->base, m_private->error);
        return; // the index loader then says which repository has no cache
    }
    path = m_private->path;
    spdlog::info("no usable home cache; using the private repository cache {} for this run", path);
}

RepoCacheDir::~RepoCacheDir() = default;

void add_step_filter_options(CLI::App* cmd, StepFilterArgs& args, const std::string& what) {
    cmd->add_option("--only", args.only,
                    "only " + what + "these step ids (comma-separated; may repeat)")
        ->type_name(kStepsValue)
        ->expected(1) // one value per occurrence: `--only driver cv-train` keeps the profile
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_option("--skip", args.skip,
                    "leave out " + what + "these step ids (comma-separated; may repeat)")
        ->type_name(kStepsValue)
        ->expected(1) // one value per occurrence: `--only driver cv-train` keeps the profile
        ->allow_extra_args(false)
        ->take_all();
}

StepFilter make_filter(const StepFilterArgs& args) {
    StepFilter f;
    for (const auto& part : {std::pair{&args.only, &f.only}, std::pair{&args.skip, &f.skip}}) {
        for (const auto& value : *part.first) {
            for (const auto& id : split(value, ',')) {
                if (!trim(id).empty()) {
                    part.second->insert(std::string(trim(id)));
                }
            }
        }
        validate_step_ids(*part.second);
    }
    return f;
}

std::string profile_digest_text(const std::string& profile_arg) {
    if (const auto text = builtin_profile_text(profile_arg)) {
        return std::string(*text);
    }
    return resolved_profile_yaml(profile_arg);
}

PlanRun compute_plan(const GlobalOptions& opts, const std::string& profile_arg,
                     const StepFilter& filter, bool allow_remove, bool fresh_indexes) {
    auto& sys = host_system(opts);
    const auto& matrix = Matrix::builtin();
    const auto profile = load_cli_profile(opts, profile_arg, matrix);
    PlanRun run;
    run.facts = detect_facts(sys, matrix);
    const RepoCacheDir cache(opts, sys);
    const auto& cache_dir = cache.path;
    LiveRepoProvider repos(sys, profile, run.facts, matrix, cache_dir,
                           fresh_indexes ? std::chrono::seconds(0) : kIndexMaxAge);
    // Units are rendered with the path apply gives them, whichever binary runs plan.
    const StepContext ctx{profile, run.facts, matrix, repos, units_gpuprov_path(sys)};
    run.plan = build_plan(ctx, sys, make_steps(), filter);
    // With --root, files are read from the image but apt, dpkg and rpm would answer for this
    // host: a transaction resolved here would be this host's, shown as the image's. None is
    // shown instead, and the plan says how to get the real one (issue 26 item 13).
    if (foreign_root(opts)) {
        run.unresolved = fmt::format(
            "package transactions not resolved: with --root gpuprov reads {}'s files, but apt, "
            "dpkg and rpm would answer for this host, not for the image. For the exact "
            "transaction run gpuprov inside it: chroot {} gpuprov plan {}",
            opts.root, opts.root, profile_arg);
    } else {
        resolve_transactions(sys, ctx, run.plan,
                             {.allow_remove = allow_remove,
                              .scratch_dir = cache_dir + "/apt-view",
                              .cache_dir = cache_dir});
    }
    run.seal = seal_plan(run.plan, run.facts, profile_digest_text(profile_arg), repos);
    // The one change apply makes outside the steps: its own binary where units run it.
    run.binary = gpuprov_binary_change(sys, running_binary(), run.plan.changes_pending());
    return run;
}

nlohmann::json plan_run_json(const PlanRun& run) {
    auto doc = versioned(plan_to_json(run.plan, run.facts));
    doc["transactions_resolved"] = !run.unresolved;
    if (run.unresolved) {
        doc["transactions_note"] = *run.unresolved;
    }
    if (run.binary) {
        doc["gpuprov_binary"] = {{"path", run.binary->target}, {"detail", run.binary->detail}};
    }
    return doc;
}

int show_plan(const GlobalOptions& opts, const std::string& profile_arg, const StepFilter& filter,
              bool json, bool detailed_exitcode, bool allow_remove, PlanRun* out,
              bool fresh_indexes) {
    auto run = compute_plan(opts, profile_arg, filter, allow_remove, fresh_indexes);
    if (json) {
        std::cout << json_text(plan_run_json(run)) << "\n";
    } else {
        std::cout << render_plan_text(run.plan, run.facts, opts.color());
        if (run.unresolved) {
            std::cout << "\nNote: " << *run.unresolved << "\n";
        }
        if (run.binary) {
            std::cout << fmt::format("\napply also installs {}: {}\n", run.binary->target,
                                     run.binary->detail);
        }
        if (!foreign_root(opts)) {
            std::cout << forecast_section(host_system(opts), run.facts, opts.color());
        }
    }
    const bool blocked = run.plan.blocked();
    const bool pending = run.plan.changes_pending();
    if (out != nullptr) {
        *out = std::move(run);
    }
    if (blocked) {
        return kExitFailed;
    }
    return detailed_exitcode && pending ? kExitChangesPending : kExitOk;
}

namespace {

/// `plan --out FILE`: the plan just shown, with what it was computed from, for `apply --plan`.
void save_plan(const GlobalOptions& opts, const std::string& profile_arg, const StepFilter& filter,
               bool allow_remove, const PlanRun& run, const std::string& path) {
    if (run.plan.blocked()) {
        throw Error("the plan is blocked; nothing was saved to " + path);
    }
    SavedPlan saved;
    saved.gpuprov_version = GPUPROV_VERSION;
    saved.created_at = rfc3339(host_system(opts).now());
    saved.profile_arg = canonical_profile_arg(profile_arg);
    saved.only = filter.only;
    saved.skip = filter.skip;
    saved.allow_remove = allow_remove;
    saved.seal = run.seal;
    saved.plan = plan_run_json(run);
    // The user's file on this machine, relative to the working directory (not under --root,
    // which plan --out refuses anyway).
    LocalSystem here;
    here.write_file_atomic(std::filesystem::absolute(path),
                           json_text(saved_plan_to_json(saved)) + "\n", 0644);
    std::cerr << fmt::format("Saved the plan to {}. Apply exactly it with: sudo gpuprov apply "
                             "--plan {}\n",
                             path, path);
}

} // namespace

void add_plan_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "plan", "show every step's status and the exact changes apply would make (no root, "
                "changes nothing)");
    static std::string profile;
    static bool json = false;
    static bool detailed = false;
    static StepFilterArgs filter_args;
    static bool allow_remove = false;
    static std::string out_file;
    cmd->add_option("PROFILE", profile, "built-in name (cv-train, nlp-infer, sci-sim) or YAML file")
        ->type_name(kProfileValue)
        ->required();
    static BundleArgs bundle_args;
    add_bundle_options(cmd, bundle_args);
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->add_flag("--detailed-exitcode", detailed, "exit 2 when changes are pending, 0 when none");
    add_step_filter_options(cmd, filter_args);
    cmd->add_flag("--allow-remove", allow_remove,
                  "plan as `apply --allow-remove` would: removals of packages the profile does "
                  "not own do not block");
    cmd->add_option("--out", out_file,
                    "also save the plan to FILE (JSON) for review; `apply --plan FILE` then "
                    "carries out exactly it, or refuses naming what changed")
        ->type_name(kFileValue);
    cmd->callback([&opts, &exit_code] {
        use_bundle(bundle_args);
        const auto filter = make_filter(filter_args);
        if (!out_file.empty() && foreign_root(opts)) {
            throw UsageError("plan --out with --root is refused: no transaction is resolved for "
                             "an image, so there is nothing apply could carry out");
        }
        PlanRun run;
        // A saved plan is what the mirrors serve now: no index reused from the cache.
        exit_code = show_plan(opts, profile, filter, json, detailed, allow_remove,
                              out_file.empty() ? nullptr : &run, !out_file.empty());
        if (!out_file.empty()) {
            save_plan(opts, profile, filter, allow_remove, run, out_file);
        }
    });
}

} // namespace gpuprov::cli
