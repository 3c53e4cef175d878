// The plan as a list of promises, for comparing the plan an operator confirmed with the one
// apply is about to carry out.
#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

std::vector<std::string> plan_promise(const Plan& plan) {
    std::vector<std::string> lines;
    if (!plan.repair.empty()) {
        lines.push_back("first run " + plan.repair);
    }
    for (const auto& s : plan.steps) {
        // The status, not the reason: a reason may carry a measurement (free space, a time)
        // that differs a second later without the plan promising anything else.
        lines.push_back(fmt::format("step {} {}", s.id, to_string(s.check.status)));
        for (const auto& c : s.check.changes) {
            if (c.kind == Change::Kind::note) {
                continue; // notes explain; they change nothing
            }
            lines.push_back(fmt::format("  {} {}: {}", to_string(c.kind), c.target, c.detail));
        }
        for (const auto& p : s.check.installs) {
            lines.push_back(fmt::format("  install {}={}", p.name, p.version));
        }
    }
    for (const auto& pt : plan.transactions) {
        lines.push_back(
            fmt::format("transaction for {}{}", join(pt.steps, ","), pt.first ? " (first)" : ""));
        for (const auto& m : pt.transaction.module_changes) {
            lines.push_back("  module " + m);
        }
        for (const auto& a : pt.transaction.actions) {
            lines.push_back(fmt::format("  {}{}", describe(a), a.hold ? " (held)" : ""));
        }
        if (!pt.blocked.empty()) {
            lines.push_back("  blocked: " + pt.blocked);
        }
    }
    return lines;
}

} // namespace gpuprov
