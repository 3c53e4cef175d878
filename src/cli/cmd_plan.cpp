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
              bool json, bool detailed_exitcode) {
    auto& sys = host_system(opts);
    const auto& matrix = Matrix::builtin();
    const auto profile = load_profile(profile_arg, matrix);
    const auto facts = detect_facts(sys, matrix);
    LiveRepoProvider repos(sys, profile, facts, default_repo_cache_dir(sys));
    const StepContext ctx{profile, facts, matrix, repos};
    const auto plan = build_plan(ctx, sys, make_steps(), filter);
    if (json) {
        std::cout << plan_to_json(plan, facts).dump(2) << "\n";
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
    cmd->add_option("PROFILE", profile, "built-in name (cv-train, nlp-infer, sci-sim) or YAML file")
        ->required();
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->add_flag("--detailed-exitcode", detailed, "exit 2 when changes are pending, 0 when none");
    cmd->add_option("--only", only, "only these step ids (comma-separated)");
    cmd->add_option("--skip", skip, "skip these step ids (comma-separated)");
    cmd->callback([&opts, &exit_code] {
        exit_code = show_plan(opts, profile, make_filter(only, skip), json, detailed);
    });
}

} // namespace gpuprov::cli
