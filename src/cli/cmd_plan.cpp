#include <gpuprov/json_text.hpp>
#include "cli_common.hpp"
#include "render.hpp"

#include <gpuprov/engine.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>
#include <iostream>

namespace gpuprov::cli {

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
              bool json, bool detailed_exitcode, bool allow_remove) {
    auto& sys = host_system(opts);
    const auto& matrix = Matrix::builtin();
    const auto profile = load_profile(profile_arg, matrix);
    const auto facts = detect_facts(sys, matrix);
    const auto cache_dir = default_repo_cache_dir(sys);
    LiveRepoProvider repos(sys, profile, facts, cache_dir);
    const StepContext ctx{profile, facts, matrix, repos};
    auto plan = build_plan(ctx, sys, make_steps(), filter);
    resolve_transactions(sys, ctx, plan,
                         {.allow_remove = allow_remove,
                          .scratch_dir = cache_dir + "/apt-view",
                          .cache_dir = cache_dir});
    if (json) {
        std::cout << json_text(plan_to_json(plan, facts)) << "\n";
    } else {
        std::cout << render_plan_text(plan, facts, opts.color());
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
