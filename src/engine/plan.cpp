#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

bool Plan::blocked() const {
    return std::any_of(steps.begin(), steps.end(),
                       [](const auto& s) { return s.check.status == StepStatus::blocked; }) ||
           std::any_of(transactions.begin(), transactions.end(),
                       [](const auto& t) { return !t.blocked.empty(); });
}

bool Plan::changes_pending() const {
    return !repair.empty() || std::any_of(steps.begin(), steps.end(), [](const auto& s) {
        return s.check.status == StepStatus::pending ||
               s.check.status == StepStatus::reboot_required;
    });
}

void validate_step_ids(const std::set<std::string>& ids) {
    const auto& known = step_ids();
    for (const auto& id : ids) {
        if (std::find(known.begin(), known.end(), id) == known.end()) {
            throw UsageError(
                fmt::format("unknown step id '{}'; step ids are: {}", id, join(known, ", ")));
        }
    }
}

namespace {

std::optional<std::string> filtered_out(const std::string& id, const StepFilter& filter,
                                        const Profile& profile) {
    if (!filter.only.empty() && filter.only.count(id) == 0) {
        return std::string("not in --only");
    }
    if (filter.skip.count(id) != 0) {
        return std::string("--skip");
    }
    if (std::find(profile.skip_steps.begin(), profile.skip_steps.end(), id) !=
        profile.skip_steps.end()) {
        return std::string("profile steps.skip");
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> step_filtered_out(const std::string& id, const StepFilter& filter,
                                             const Profile& profile) {
    return filtered_out(id, filter, profile);
}

Plan build_plan(const StepContext& ctx, const System& sys,
                const std::vector<std::unique_ptr<Step>>& steps, const StepFilter& filter) {
    Plan plan;
    plan.profile = ctx.profile.name;
    plan.profile_source = ctx.profile.source;
    if (!ctx.facts.os.repo_slug.empty()) {
        for (const auto& [name, spec] : ctx.profile.repositories) {
            plan.repositories.push_back(resolve_host_repo(spec, ctx.facts, ctx.matrix));
        }
    }
    // Every step is checked even after a blocked one: a change review wants the whole picture,
    // and apply runs no step at all when one is blocked.
    bool changes_before = false;
    for (const auto& step : steps) {
        PlannedStep ps{.id = std::string(step->id()), .summary = std::string(step->summary())};
        if (const auto why = filtered_out(ps.id, filter, ctx.profile)) {
            ps.check.status = StepStatus::skipped;
            ps.check.reason = *why;
        } else {
            ps.check = step->check(ctx, sys);
        }
        if (ps.id == "verify" && ps.check.status == StepStatus::satisfied && changes_before) {
            ps.check.status = StepStatus::pending;
            ps.check.reason = "runs every check after the changes above";
        }
        changes_before = changes_before || ps.check.status == StepStatus::pending ||
                         ps.check.status == StepStatus::reboot_required;
        plan.steps.push_back(std::move(ps));
    }
    return plan;
}

} // namespace gpuprov
