#include "cli_common.hpp"
#include "render.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/matrix.hpp>
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

StepFilter make_filter(const std::string& only, const std::string& skip) {
    StepFilter f;
    for (const auto& part : {std::pair{&only, &f.only}, std::pair{&skip, &f.skip}}) {
        if (part.first->empty()) {
            continue;
        }
        for (const auto& id : split(*part.first, ',')) {
            part.second->insert(std::string(trim(id)));
        }
        validate_step_ids(*part.second);
    }
    return f;
}

int show_plan(const GlobalOptions& opts, const std::string& profile_arg, const StepFilter& filter,
              bool json, bool detailed_exitcode, bool allow_remove,
              std::vector<std::string>* promise) {
    auto& sys = host_system(opts);
    const auto& matrix = Matrix::builtin();
    const auto profile = load_profile(profile_arg, matrix);
    const auto facts = detect_facts(sys, matrix);
    const RepoCacheDir cache(opts, sys);
    const auto& cache_dir = cache.path;
    LiveRepoProvider repos(sys, profile, facts, matrix, cache_dir);
    // Units are rendered with the path apply gives them, whichever binary runs plan.
    const StepContext ctx{profile, facts, matrix, repos, units_gpuprov_path(sys)};
    auto plan = build_plan(ctx, sys, make_steps(), filter);
    // With --root, files are read from the image but apt, dpkg and rpm would answer for this
    // host: a transaction resolved here would be this host's, shown as the image's. None is
    // shown instead, and the plan says how to get the real one (issue 26 item 13).
    // Set exactly when no transaction was resolved, saying why and how to get it.
    std::optional<std::string> unresolved;
    if (foreign_root(opts)) {
        unresolved = fmt::format(
            "package transactions not resolved: with --root gpuprov reads {}'s files, but apt, "
            "dpkg and rpm would answer for this host, not for the image. For the exact "
            "transaction run gpuprov inside it: chroot {} gpuprov plan {}",
            opts.root, opts.root, profile_arg);
    } else {
        resolve_transactions(sys, ctx, plan,
                             {.allow_remove = allow_remove,
                              .scratch_dir = cache_dir + "/apt-view",
                              .cache_dir = cache_dir});
    }
    if (promise != nullptr) {
        *promise = plan_promise(plan);
    }
    // The one change apply makes outside the steps: its own binary where units run it.
    const auto binary = gpuprov_binary_change(sys, running_binary(), plan.changes_pending());
    if (json) {
        auto doc = plan_to_json(plan, facts);
        doc["transactions_resolved"] = !unresolved;
        if (unresolved) {
            doc["transactions_note"] = *unresolved;
        }
        if (binary) {
            doc["gpuprov_binary"] = {{"path", binary->target}, {"detail", binary->detail}};
        }
        std::cout << json_text(doc) << "\n";
    } else {
        std::cout << render_plan_text(plan, facts, opts.color());
        if (unresolved) {
            std::cout << "\nNote: " << *unresolved << "\n";
        }
        if (binary) {
            std::cout << fmt::format("\napply also installs {}: {}\n", binary->target,
                                     binary->detail);
        }
    }
    if (plan.blocked()) {
        return kExitFailed;
    }
    return detailed_exitcode && plan.changes_pending() ? kExitChangesPending : kExitOk;
}

void add_plan_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "plan", "show every step's status and the exact changes apply would make (no root, "
                "changes nothing)");
    static std::string profile;
    static bool json = false;
    static bool detailed = false;
    static std::string only;
    static std::string skip;
    static bool allow_remove = false;
    cmd->add_option("PROFILE", profile, "built-in name (cv-train, nlp-infer, sci-sim) or YAML file")
        ->required();
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->add_flag("--detailed-exitcode", detailed, "exit 2 when changes are pending, 0 when none");
    cmd->add_option("--only", only, "only these step ids (comma-separated)");
    cmd->add_option("--skip", skip, "skip these step ids (comma-separated)");
    cmd->add_flag("--allow-remove", allow_remove,
                  "plan as `apply --allow-remove` would: removals of packages the profile does "
                  "not own do not block");
    cmd->callback([&opts, &exit_code] {
        exit_code = show_plan(opts, profile, make_filter(only, skip), json, detailed, allow_remove);
    });
}

} // namespace gpuprov::cli
