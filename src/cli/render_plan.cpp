#include "render.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>
#include <map>

namespace gpuprov::cli {

std::string status_word(StepStatus status, bool color) {
    auto word = std::string(to_string(status));
    if (!color) {
        return word;
    }
    const char* code = "0";
    switch (status) {
    case StepStatus::satisfied:
    case StepStatus::done:
        code = "32";
        break;
    case StepStatus::pending:
        code = "33";
        break;
    case StepStatus::blocked:
    case StepStatus::failed:
        code = "31";
        break;
    case StepStatus::reboot_required:
        code = "35";
        break;
    case StepStatus::skipped:
        code = "2";
        break;
    }
    return fmt::format("\033[{}m{}\033[0m", code, word);
}

namespace {

std::string join_keys(const std::map<std::string, std::string>& m) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : m) {
        keys.push_back(k);
    }
    return join(keys, ", ");
}

std::string host_line(const HostFacts& f) {
    return fmt::format("{} ({}), {}, kernel {}, {} NVIDIA GPU{}",
                       f.os.pretty_name.empty() ? "unknown OS" : f.os.pretty_name,
                       f.os.repo_slug.empty() ? "no NVIDIA repo" : f.os.repo_slug, f.arch,
                       f.kernel.empty() ? "?" : f.kernel, f.gpus.size(),
                       f.gpus.size() == 1 ? "" : "s");
}

} // namespace

std::string render_plan_text(const Plan& plan, const HostFacts& facts, bool color) {
    std::string out = fmt::format("Plan for profile {} ({})\nHost: {}\n", plan.profile,
                                  plan.profile_source, host_line(facts));
    for (const auto& r : plan.repositories) {
        out += fmt::format("Repository {}: {}\n  key {} from {} ({})\n", r.name, r.url,
                           r.key_fingerprint.empty() ? "(none)" : r.key_fingerprint,
                           r.key_url.empty() ? "(nowhere)" : r.key_url, r.key_source);
    }
    out += "\n";
    if (!plan.repair.empty()) {
        out += fmt::format("An earlier package transaction was interrupted; apply first finishes "
                           "it: run {}\n\n",
                           plan.repair);
    }
    std::map<StepStatus, int> counts;
    int n = 0;
    for (const auto& s : plan.steps) {
        ++counts[s.check.status];
        // Pad before colouring so the columns line up either way.
        const auto word = std::string(to_string(s.check.status));
        out += fmt::format("{:>2}. {:<18} {}{}", ++n, s.id, status_word(s.check.status, color),
                           std::string(16 - std::min<std::size_t>(15, word.size()), ' '));
        // A reason of several lines (preflight: one unmet requirement each) keeps its first
        // line beside the status and the others indented under the step.
        const auto& reason = s.check.reason.empty() ? s.summary : s.check.reason;
        const auto first_end = reason.find('\n');
        out += reason.substr(0, first_end);
        out += "\n";
        if (first_end != std::string::npos) {
            out += indent_lines(reason.substr(first_end + 1), "      ");
        }
        for (const auto& c : s.check.changes) {
            switch (c.kind) {
            case Change::Kind::file:
                out += fmt::format("      file {}\n", c.target);
                out += indent_lines(c.detail, "        ");
                break;
            case Change::Kind::package:
                out += fmt::format("      package {} {}\n", c.target, c.detail);
                break;
            case Change::Kind::command:
                out += fmt::format("      run {}{}\n", c.target,
                                   c.detail.empty() ? "" : "   # " + c.detail);
                break;
            case Change::Kind::service:
                out += fmt::format("      service {}: {}\n", c.target, c.detail);
                break;
            case Change::Kind::note:
                out += fmt::format("      note: {}\n", c.detail);
                break;
            }
        }
    }
    for (const auto& pt : plan.transactions) {
        const auto tool = facts.os.family == "rhel" ? "dnf" : "apt";
        out += fmt::format(
            "\nPackage transaction for {}{} ({} change{}; resolved by {}{}):\n",
            join(pt.steps, ", "), pt.first ? ", first and on its own" : "",
            pt.transaction.actions.size(), pt.transaction.actions.size() == 1 ? "" : "s",
            pt.transaction.resolved_by.empty() ? fmt::format("{} itself", tool)
                                               : pt.transaction.resolved_by,
            pt.view_preferences.empty()
                ? ""
                : fmt::format(" with {} in preferences.d, as the transaction above installs it",
                              join_keys(pt.view_preferences)));
        for (const auto& m : pt.transaction.module_changes) {
            out += "  module " + m + "\n";
        }
        for (const auto& a : pt.transaction.actions) {
            out += "  " + describe(a);
            if (a.hold) {
                out += "  (held)";
            }
            if (a.kind == PackageAction::Kind::remove && !a.owned) {
                out += " (not owned by the profile; needs --allow-remove)";
            }
            out += "\n";
        }
        if (!pt.blocked.empty()) {
            out += fmt::format("  {}: {}\n", status_word(StepStatus::blocked, color), pt.blocked);
        }
    }
    std::vector<std::string> parts;
    for (const auto& [status, count] : counts) {
        parts.push_back(fmt::format("{} {}", count, to_string(status)));
    }
    out += fmt::format(
        "\n{}: {}\n",
        plan.blocked() ? "Blocked" : (plan.changes_pending() ? "Changes pending" : "Nothing to do"),
        join(parts, ", "));
    return out;
}

nlohmann::json plan_to_json(const Plan& plan, const HostFacts& facts) {
    using nlohmann::json;
    json steps = json::array();
    std::map<std::string, int> summary;
    for (const auto& s : plan.steps) {
        json changes = json::array();
        for (const auto& c : s.check.changes) {
            changes.push_back(
                {{"kind", to_string(c.kind)}, {"target", c.target}, {"detail", c.detail}});
        }
        json installs = json::array();
        for (const auto& p : s.check.installs) {
            installs.push_back({{"name", p.name}, {"version", p.version}});
        }
        steps.push_back({{"id", s.id},
                         {"summary", s.summary},
                         {"status", to_string(s.check.status)},
                         {"reason", s.check.reason},
                         {"changes", changes},
                         {"installs", installs}});
        ++summary[std::string(to_string(s.check.status))];
    }
    json transactions = json::array();
    for (const auto& pt : plan.transactions) {
        json t = {{"steps", pt.steps},
                  {"install", json::array()},
                  {"upgrade", json::array()},
                  {"downgrade", json::array()},
                  {"reinstall", json::array()},
                  {"remove", json::array()},
                  {"modules", pt.transaction.module_changes},
                  {"simulated_with", pt.transaction.simulated_with},
                  {"resolver", pt.transaction.resolver},
                  {"resolved_by", pt.transaction.resolved_by},
                  {"first", pt.first},
                  {"view_preferences", pt.view_preferences},
                  {"blocked", pt.blocked}};
        for (const auto& a : pt.transaction.actions) {
            json entry = {{"name", a.name}};
            switch (a.kind) {
            case PackageAction::Kind::install:
                entry["version"] = a.to;
                break;
            case PackageAction::Kind::remove:
                entry["version"] = a.from;
                entry["owned"] = a.owned;
                break;
            default:
                entry["from"] = a.from;
                entry["to"] = a.to;
            }
            if (a.kind != PackageAction::Kind::remove) {
                entry["hold"] = a.hold;
            }
            t[std::string(to_string(a.kind))].push_back(std::move(entry));
        }
        transactions.push_back(std::move(t));
    }
    // The main transaction (the last; a kernel-headers one may come first) also at
    // "transaction", for scripts.
    json main = transactions.empty() ? json(nullptr) : transactions.back();
    json repositories = json::array();
    for (const auto& r : plan.repositories) {
        repositories.push_back({{"name", r.name},
                                {"url", r.url},
                                {"key_url", r.key_url},
                                {"key_fingerprint", r.key_fingerprint},
                                {"key_source", r.key_source}});
    }
    return {{"profile", plan.profile},
            {"profile_source", plan.profile_source},
            {"host", facts_to_json(facts)},
            {"repositories", repositories},
            {"steps", steps},
            {"transactions", transactions},
            {"transaction", main},
            {"repair", plan.repair},
            {"blocked", plan.blocked()},
            {"changes_pending", plan.changes_pending()},
            {"summary", summary}};
}

} // namespace gpuprov::cli
