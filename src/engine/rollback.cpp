#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/rollback.hpp>
#include <gpuprov/strings.hpp>
#include <set>

namespace gpuprov {

const std::vector<std::string>& closure_steps() {
    static const std::vector<std::string> ids = {"driver", "fabric-manager", "cuda-toolkit",
                                                 "cudnn",  "nccl",           "tensorrt"};
    return ids;
}

void record_verified_closure(Journal& journal, VerifiedClosure closure) {
    if (closure.packages.empty()) {
        return; // nothing of NVIDIA's installed: nothing a rollback could restore
    }
    if (!journal.verified.empty() && journal.verified.front().packages == closure.packages) {
        return;
    }
    journal.verified.insert(journal.verified.begin(), std::move(closure));
    if (journal.verified.size() > kVerifiedHistory) {
        journal.verified.resize(kVerifiedHistory);
    }
}

std::vector<std::string> rollback_candidate_packages(const Journal& journal) {
    std::set<std::string> names;
    for (const auto& c : journal.verified) {
        for (const auto& [name, version] : c.packages) {
            names.insert(name);
        }
    }
    return {names.begin(), names.end()};
}

namespace {

bool installed_at(const std::map<std::string, std::string>& packages,
                  const std::map<std::string, std::optional<std::string>>& installed) {
    return std::all_of(packages.begin(), packages.end(), [&](const auto& p) {
        const auto it = installed.find(p.first);
        return it != installed.end() && it->second && *it->second == p.second;
    });
}

} // namespace

RollbackTarget rollback_target(const Journal& journal, const std::string& profile_name,
                               const std::map<std::string, std::optional<std::string>>& installed) {
    std::vector<const VerifiedClosure*> entries;
    for (const auto& c : journal.verified) {
        if (profile_name.empty() || c.profile_name == profile_name) {
            entries.push_back(&c);
        }
    }
    RollbackTarget out;
    const std::string whose =
        profile_name.empty() ? std::string() : fmt::format(" for the profile '{}'", profile_name);
    if (entries.empty()) {
        out.refusal = fmt::format(
            "the journal ({}) records no verified closure{}: rollback reinstalls what an "
            "earlier `gpuprov apply` installed and verified, and none did",
            kJournalPath, whose);
        return out;
    }
    // The newest change an apply made: an apply entry whose packages differ from the one below.
    // Entries are only added when they differ from the newest, so any pair differs unless a
    // rollback entry sits between; a rollback's entry is the undo, never a change to undo.
    for (std::size_t k = 0; k + 1 < entries.size(); ++k) {
        if (entries[k]->via != "apply" || entries[k]->packages == entries[k + 1]->packages) {
            continue;
        }
        out.from = *entries[k];
        out.closure = *entries[k + 1];
        out.already_current = entries.front()->packages == out.closure->packages &&
                              installed_at(out.closure->packages, installed);
        return out;
    }
    out.refusal = fmt::format(
        "the journal records one verified closure{} ({}, driver branch {}, verified {}) and no "
        "earlier one to go back to",
        whose, entries.front()->profile_name,
        entries.front()->driver_branch.empty() ? "none" : entries.front()->driver_branch,
        entries.front()->verified_at);
    return out;
}

std::vector<std::string>
closure_differences(const std::map<std::string, std::string>& target,
                    const std::map<std::string, std::optional<std::string>>& installed) {
    std::vector<std::string> out;
    for (const auto& [name, version] : target) {
        const auto it = installed.find(name);
        const std::string now =
            it != installed.end() && it->second ? *it->second : std::string("(not installed)");
        if (now != version) {
            out.push_back(fmt::format("{} {} -> {}", name, now, version));
        }
    }
    return out;
}

bool closure_version_matches(std::string_view pinned, std::string_view version) {
    return pinned == version || (pinned.substr(0, 2) == "0:" && pinned.substr(2) == version);
}

std::vector<std::string> block_unpinned_versions(Plan& plan,
                                                 const std::map<std::string, std::string>& pins) {
    std::vector<std::string> all;
    for (auto& pt : plan.transactions) {
        std::vector<std::string> lines;
        for (const auto& a : pt.transaction.actions) {
            const auto pin = pins.find(a.name);
            if (pin == pins.end() || a.to.empty() || closure_version_matches(pin->second, a.to)) {
                continue;
            }
            lines.push_back(
                fmt::format("{} {} (the verified closure has {})", a.name, a.to, pin->second));
        }
        if (lines.empty()) {
            continue;
        }
        const auto why = fmt::format(
            "the package manager would install other builds than the verified closure: {}",
            join(lines, ", "));
        pt.blocked = pt.blocked.empty() ? why : pt.blocked + "; " + why;
        all.insert(all.end(), lines.begin(), lines.end());
    }
    return all;
}

} // namespace gpuprov
