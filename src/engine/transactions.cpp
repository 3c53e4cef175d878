// The plan's package section: apt itself resolves each transaction apply will run, so the plan
// shows every package it installs, upgrades, downgrades or removes, with versions.
#include "../steps/apt_repo.hpp"
#include "../steps/dnf_repo.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/bundle.hpp>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

bool has_packages(const CheckResult& c) {
    return !c.installs.empty() || !c.removals.empty() || !c.modules.empty() ||
           !c.pre_installs.empty() || !c.pre_removals.empty();
}

template <class T> bool contains(const std::vector<T>& v, const T& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

struct GroupRequest {
    SimulationRequest req;
    std::vector<std::string> unholds;
    std::vector<std::string> hold_roots;
    std::vector<std::string> steps;
    /// The transaction that runs first, on its own (NVIDIA's pinning package), and its steps.
    SimulationRequest first;
    std::vector<std::string> first_steps;
};

GroupRequest group_request(const Plan& plan, const std::vector<std::size_t>& group) {
    GroupRequest g;
    for (const auto k : group) {
        const auto& c = plan.steps[k].check;
        g.steps.push_back(plan.steps[k].id);
        if (!c.pre_installs.empty() || !c.pre_removals.empty()) {
            g.first_steps.push_back(plan.steps[k].id);
            g.first.installs.insert(g.first.installs.end(), c.pre_installs.begin(),
                                    c.pre_installs.end());
            g.first.removals.insert(g.first.removals.end(), c.pre_removals.begin(),
                                    c.pre_removals.end());
            g.req.preferences.insert(c.view_preferences.begin(), c.view_preferences.end());
        }
        for (const auto& pin : c.installs) {
            const bool seen = std::any_of(g.req.installs.begin(), g.req.installs.end(),
                                          [&](const auto& p) { return p.name == pin.name; });
            if (!seen) {
                g.req.installs.push_back(pin);
            }
            if (c.hold_installs) {
                g.hold_roots.push_back(pin.name);
            }
        }
        for (const auto& r : c.removals) {
            if (!contains(g.req.removals, r)) {
                g.req.removals.push_back(r);
            }
        }
        for (const auto& m : c.modules) {
            if (!contains(g.req.modules, m)) {
                g.req.modules.push_back(m);
            }
        }
        g.unholds.insert(g.unholds.end(), c.unholds.begin(), c.unholds.end());
    }
    return g;
}

} // namespace

// Every profile repository whose verified index gpuprov holds, offered to apt's private view.
std::vector<SimulatedRepo> simulated_repos(const StepContext& ctx, const System& sys,
                                           const std::string& cache_dir) {
    std::vector<SimulatedRepo> out;
    for (const auto& [name, spec] : ctx.profile.repositories) {
        const auto& state = ctx.repos.repo(name);
        if (!state.index) {
            continue;
        }
        const auto dir = cache_dir + "/" + repo_cache_subdir(state.repo);
        if (ctx.facts.os.family == "rhel") {
            // dnf's view: the same .repo gpuprov installs, keyed to the cached, checked key.
            const auto files = steps::dnf_repo_files(name);
            out.push_back(SimulatedRepo{
                .url = state.repo.url,
                .replaces_source = files.repo,
                .source_text = steps::dnf_repo_text(
                    state.repo, files.id, dir + "/key.asc", ctx.profile.name,
                    // A bundle's package key, where it lies in the bundle.
                    steps::dnf_bundle_package_key(name) ? steps::dnf_bundle_package_key(name)->file
                                                        : std::string())});
            continue;
        }
        // With an adopted source (NVIDIA's cuda-keyring) left in the view, the stanza names the
        // same keyring (it holds the pinned key) so apt sees one Signed-By value for the URL.
        const auto placement = steps::apt_repo_placement(ctx, sys, name);
        const auto keyring = placement.adopted ? placement.files.keyring : dir + "/key.gpg";
        out.push_back(SimulatedRepo{.url = state.repo.url,
                                    .replaces_source = steps::apt_repo_files(name).source,
                                    .source_text = steps::deb822_stanza(state.repo, keyring),
                                    .inrelease_file = dir + "/InRelease",
                                    .packages_file = dir + "/Packages",
                                    .inrelease_url = release_dir_url(state.repo) + "InRelease",
                                    .packages_url =
                                        release_dir_url(state.repo) + packages_entry(state.repo)});
    }
    return out;
}

namespace {

// Depends of `name` at the version the transaction installs (from the repository index), or of
// the installed package when the transaction does not touch it.
std::vector<std::string> depends_in(const StepContext& ctx, const System& sys,
                                    const PackageManager& pm, const PackageTransaction& t,
                                    const std::string& name) {
    for (const auto& a : t.actions) {
        if (a.name != name || a.kind == PackageAction::Kind::remove) {
            continue;
        }
        for (const auto& [repo, spec] : ctx.profile.repositories) {
            const auto& state = ctx.repos.repo(repo);
            if (!state.index) {
                continue;
            }
            for (const auto* rec : state.index->versions(name)) {
                if (rec->version == a.to) {
                    return dependency_names(rec->depends);
                }
            }
        }
        return {};
    }
    return pm.installed_depends(sys, name);
}

/// The clause of a Depends field that names `name` ("nvidia-driver-open (>= 595.91.07)").
std::string clause_naming(std::string_view depends, const std::string& name) {
    for (const auto& clause : split(depends, ',')) {
        const auto names = dependency_names(clause);
        if (std::find(names.begin(), names.end(), name) != names.end()) {
            return std::string(trim(clause));
        }
    }
    return {};
}

/// A driver package the transaction would put on the host at another branch than the profile's
/// (nvidia-open's `nvidia-driver-open (>= V)` takes the newest without NVIDIA's pin; Debian's
/// cuda-drivers-580 pulled 590 parts): the package, its version and what pulled it, from the
/// index records at the versions the transaction installs. Empty when every driver part of the
/// transaction is of `branch`.
std::string cross_branch(const StepContext& ctx, const PackageTransaction& t,
                         const std::string& branch) {
    for (const auto& a : t.actions) {
        if (a.kind == PackageAction::Kind::remove || !is_driver_package(a.name)) {
            continue;
        }
        const auto of = driver_branch_of(a.to);
        if (of.empty() || of == branch) {
            continue;
        }
        std::string pulled = "asked for by the profile's steps";
        for (const auto& p : t.actions) {
            if (p.kind == PackageAction::Kind::remove || p.name == a.name) {
                continue;
            }
            for (const auto& [repo, spec] : ctx.profile.repositories) {
                const auto& state = ctx.repos.repo(repo);
                const auto* rec = state.index ? [&]() -> const PackageRecord* {
                    for (const auto* r : state.index->versions(p.name)) {
                        if (r->version == p.to) {
                            return r;
                        }
                    }
                    return nullptr;
                }()
                    : nullptr;
                if (rec == nullptr) {
                    continue;
                }
                if (const auto clause = clause_naming(rec->depends, a.name); !clause.empty()) {
                    pulled = fmt::format("pulled by {} {} (Depends: {})", p.name, p.to, clause);
                    break;
                }
            }
            if (!starts_with(pulled, "asked")) {
                break;
            }
        }
        return fmt::format(
            "the package manager would install {} {}, a driver package of branch {}, not the "
            "profile's {}: {}. A driver split across branches does not load; gpuprov refuses "
            "the transaction (NVIDIA's repository must carry the whole branch {}, and on apt its "
            "pinning package keeps the resolution there)",
            a.name, a.to, of, branch, pulled, branch);
    }
    return {};
}

std::string blocked_reason(const PackageTransaction& t, const TransactionPolicy& policy,
                           const std::vector<std::string>& moved_holds) {
    if (!t.error.empty()) {
        return t.error;
    }
    if (!moved_holds.empty()) {
        return fmt::format("apt would change held package{} {}, which no step of the profile "
                           "releases; unhold {} yourself (apt-mark unhold) if that is intended",
                           moved_holds.size() == 1 ? "" : "s", join(moved_holds, ", "),
                           moved_holds.size() == 1 ? "it" : "them");
    }
    const auto unowned = t.unowned_removals();
    if (!unowned.empty() && !policy.allow_remove) {
        std::vector<std::string> names;
        for (const auto* a : unowned) {
            names.push_back(a->name + " " + a->from);
        }
        return fmt::format("apt would remove package{} the profile does not own: {}; review "
                           "and pass --allow-remove to allow it",
                           names.size() == 1 ? "" : "s", join(names, ", "));
    }
    return {};
}

} // namespace

std::vector<std::vector<std::size_t>> package_groups(const Plan& plan) {
    std::vector<std::size_t> first;
    std::vector<std::size_t> rest;
    for (std::size_t k = 0; k < plan.steps.size(); ++k) {
        const auto& s = plan.steps[k];
        if (s.check.status == StepStatus::blocked) {
            break; // apply stops here
        }
        if (!apply_runs(s.check.status) || !has_packages(s.check)) {
            continue;
        }
        (s.id == "preflight" ? first : rest).push_back(k);
    }
    std::vector<std::vector<std::size_t>> out;
    for (auto* g : {&first, &rest}) {
        if (!g->empty()) {
            out.push_back(std::move(*g));
        }
    }
    return out;
}

void resolve_transactions(System& sys, const StepContext& ctx, Plan& plan,
                          const TransactionPolicy& policy) {
    plan.transactions.clear();
    const auto pm = make_package_manager(ctx.facts);
    if (!pm) {
        return;
    }
    // apply finishes an interrupted transaction before it plans (the simulation needs a
    // consistent database); the plan says so, since the repair changes the host too.
    plan.repair = pm->interrupted(sys) ? join(pm->repair().argv, " ") : std::string();
    const auto owned = gpuprov_installed_packages(sys);
    const auto branch = ctx.profile.driver ? ctx.profile.driver->branch : std::string();
    for (const auto& group : package_groups(plan)) {
        auto g = group_request(plan, group);
        if (!policy.scratch_dir.empty()) {
            g.req.scratch_dir = policy.scratch_dir;
            g.req.repos = simulated_repos(ctx, sys, policy.cache_dir);
            g.first.scratch_dir = g.req.scratch_dir;
            g.first.repos = g.req.repos;
        }
        if (!g.first_steps.empty()) {
            // Its own transaction, before the batch's: apt resolves the batch with its pin in
            // place (the file read from the package, in the simulation's preferences.d).
            PlannedTransaction first{
                .steps = g.first_steps, .transaction = pm->simulate(sys, g.first), .first = true};
            for (auto& a : first.transaction.actions) {
                // A pinning package replaces the one before it (Conflicts/Replaces): part of the
                // branch change the profile asks for.
                a.owned = a.kind != PackageAction::Kind::remove || owned.count(a.name) != 0 ||
                          contains(g.first.removals, a.name);
            }
            first.blocked = blocked_reason(first.transaction, policy, {});
            if (first.blocked.empty() && !branch.empty()) {
                first.blocked = cross_branch(ctx, first.transaction, branch);
            }
            plan.transactions.push_back(std::move(first));
        }
        PlannedTransaction pt{.steps = g.steps,
                              .transaction = pm->simulate(sys, g.req),
                              .view_preferences = g.req.preferences};
        auto& t = pt.transaction;
        const auto hold = dependency_closure(
            g.hold_roots,
            [&](const std::string& name) { return depends_in(ctx, sys, *pm, t, name); },
            [](std::string_view name) { return is_driver_package(name); });
        std::vector<std::string> moved_holds;
        for (auto& a : t.actions) {
            if (a.kind == PackageAction::Kind::remove) {
                a.owned = owned.count(a.name) != 0 || contains(g.req.removals, a.name);
            } else {
                a.hold = contains(hold, a.name);
            }
            if (pm->held(sys, a.name) && !contains(g.unholds, a.name)) {
                moved_holds.push_back(a.name);
            }
        }
        pt.blocked = blocked_reason(t, policy, moved_holds);
        if (pt.blocked.empty() && !branch.empty()) {
            pt.blocked = cross_branch(ctx, t, branch);
        }
        plan.transactions.push_back(std::move(pt));
    }
}

} // namespace gpuprov
