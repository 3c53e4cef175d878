#include "driver_rpm.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <functional>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>
#include <map>
#include <set>

namespace gpuprov::steps {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

/// Installed packages among `names`.
std::vector<std::string> installed_of(const System& sys, const PackageManager& pm,
                                      const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& n : names) {
        if (pm.installed(sys, n)) {
            out.push_back(n);
        }
    }
    return out;
}

/// `names` minus everything `roots` pull in through `depends_of`: the other flavour's packages
/// this flavour still needs (nvidia-open requires nvidia-driver and nvidia-driver-cuda) are
/// not stale.
std::vector<std::string>
not_needed(const std::vector<std::string>& names, const std::vector<std::string>& roots,
           const std::function<std::vector<std::string>(const std::string&)>& depends_of) {
    const auto needed =
        dependency_closure(roots, depends_of, [](std::string_view) { return true; });
    std::vector<std::string> out;
    for (const auto& n : names) {
        if (std::find(needed.begin(), needed.end(), n) == needed.end() &&
            std::find(roots.begin(), roots.end(), n) == roots.end()) {
            out.push_back(n);
        }
    }
    return out;
}

/// The record of `name` at the build `upstream` ("595.91.07"), newest release first; else the
/// newest of `branch`; nullptr when the index has neither.
const PackageRecord* at_build(const PackageIndex& index, const std::string& name,
                              const std::string& upstream, const std::string& branch) {
    for (const auto* rec : index.versions(name)) {
        if (upstream_version(rec->version) == upstream) {
            return rec;
        }
    }
    return index.newest_with_prefix(name, branch + ".");
}

/// The record of `name` at exactly `version`, or nullptr.
const PackageRecord* exact(const PackageIndex& index, const std::string& name,
                           const std::string& version) {
    for (const auto* rec : index.versions(name)) {
        if (rec->version == version) {
            return rec;
        }
    }
    return nullptr;
}

/// Whether every installed driver package the roots pull in is of `branch` (by effect: a
/// package dnf moved to another branch is not the branch's driver).
bool closure_of_branch(const System& sys, const PackageManager& pm,
                       const std::vector<std::string>& roots, const std::string& branch) {
    for (const auto& name : installed_driver_closure(sys, pm, roots)) {
        const auto v = pm.installed(sys, name);
        const auto of = v ? driver_branch_of(*v) : std::string();
        if (!of.empty() && of != branch) {
            return false;
        }
    }
    return true;
}

} // namespace

int el_major(const HostFacts& facts) {
    const auto& slug = facts.os.repo_slug;
    if (facts.os.family != "rhel" || !starts_with(slug, "rhel")) {
        return 0;
    }
    return static_cast<int>(parse_int(slug.substr(4)).value_or(0));
}

bool rpm_branch_locked(const StepContext& ctx) {
    if (!ctx.profile.driver || ctx.facts.os.family != "rhel") {
        return false;
    }
    const auto* names = ctx.matrix.package_names("rhel");
    const bool modular =
        names == nullptr || !names->driver || names->driver->modular(el_major(ctx.facts));
    return ctx.profile.driver->hold || !modular;
}

std::string versionlock_plugin_package(const StepContext& ctx) {
    const auto* names = ctx.matrix.package_names("rhel");
    if (names == nullptr || !names->driver) {
        return {};
    }
    const auto it = names->driver->versionlock_plugin.find(el_major(ctx.facts));
    return it == names->driver->versionlock_plugin.end() ? std::string() : it->second;
}

std::vector<PackagePin> rpm_branch_closure(const PackageIndex& index,
                                           const std::vector<PackagePin>& roots,
                                           const std::string& branch,
                                           const std::vector<std::string>& also) {
    std::vector<PackagePin> out = roots;
    if (roots.empty()) {
        return out;
    }
    const auto build = upstream_version(roots.front().version);
    // Which driver packages provide each capability (their own name included): the Requires of
    // NVIDIA's rpms name capabilities such as nvidia-driver-libs(x86-64) and nvidia-kmod.
    std::map<std::string, std::set<std::string>, std::less<>> providers;
    for (const auto& rec : index.records()) {
        if (!is_driver_package(rec.name)) {
            continue;
        }
        providers[rec.name].insert(rec.name);
        for (const auto& cap : dependency_names(rec.provides)) {
            providers[cap].insert(rec.name);
        }
    }
    std::set<std::string> chosen;
    std::set<std::string, std::less<>> provided;
    std::deque<const PackageRecord*> queue;
    const auto take = [&](const PackageRecord* rec) {
        chosen.insert(rec->name);
        provided.insert(rec->name);
        for (const auto& cap : dependency_names(rec->provides)) {
            provided.insert(cap);
        }
        queue.push_back(rec);
    };
    for (const auto& pin : roots) {
        chosen.insert(pin.name);
        provided.insert(pin.name);
        if (const auto* rec = exact(index, pin.name, pin.version)) {
            take(rec);
        }
    }
    const auto pin = [&](const std::string& name) {
        if (chosen.count(name) != 0) {
            return;
        }
        if (const auto* rec = at_build(index, name, build, branch)) {
            out.push_back({rec->name, rec->version});
            take(rec);
        }
    };
    for (const auto& name : also) {
        pin(name);
    }
    while (!queue.empty()) {
        const auto* rec = queue.front();
        queue.pop_front();
        for (const auto& cap : dependency_names(rec->depends)) {
            if (provided.count(cap) != 0) {
                continue;
            }
            const auto it = providers.find(cap);
            if (it == providers.end()) {
                continue; // not a driver package's: dnf resolves it (dkms, libglvnd, ...)
            }
            const auto& names = it->second;
            if (names.size() == 1) {
                pin(*names.begin());
            } else if (names.count(cap) != 0) {
                pin(cap);
            }
        }
    }
    return out;
}

std::vector<std::string> installed_driver_closure(const System& sys, const PackageManager& pm,
                                                  const std::vector<std::string>& roots) {
    return dependency_closure(
        installed_of(sys, pm, roots),
        [&](const std::string& name) { return pm.installed_depends(sys, name); },
        [](std::string_view name) { return is_driver_package(name); });
}

std::optional<RpmDriver> rpm_driver(const StepContext& ctx, CheckResult& r) {
    const auto& d = *ctx.profile.driver;
    const auto* names = ctx.matrix.package_names("rhel");
    if (names == nullptr || !names->driver) {
        r.status = StepStatus::blocked;
        r.reason = "gpuprov's version matrix names no rpm driver packages (packages.rhel.driver)";
        return std::nullopt;
    }
    const auto& rd = *names->driver;
    const auto chosen = driver_flavor(ctx.profile, ctx.facts, ctx.matrix).flavor;
    const auto stream = rd.streams.find(chosen);
    const auto packages = rd.packages.find(chosen);
    if (stream == rd.streams.end() || packages == rd.packages.end()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("NVIDIA packages no '{}' driver flavour for the RHEL family; use "
                               "proprietary ({}) or open ({})",
                               chosen, rd.streams.at("proprietary"), rd.streams.at("open"));
        return std::nullopt;
    }
    const PackageVars vars{.branch = d.branch};
    RpmDriver out;
    out.module = {rd.module, expand_package_name(stream->second, vars)};
    out.modular = rd.modular(el_major(ctx.facts));
    out.packages = expand_package_names(packages->second, vars);
    for (const auto& [flavor, list] : rd.packages) {
        for (const auto& n : expand_package_names(list, vars)) {
            if (flavor != chosen && !contains(out.packages, n) && !contains(out.other_flavor, n)) {
                out.other_flavor.push_back(n);
            }
        }
    }
    out.version_from = expand_package_name(rd.version_from, vars);
    out.dkms = rd.dkms;
    return out;
}

std::optional<ModuleStream> stream_to_enable(const StepContext& ctx, const RpmDriver& drv) {
    if (!drv.modular) {
        return std::nullopt; // EL 10: no stream to enable
    }
    const auto on = ctx.facts.module_streams.find(drv.module.module);
    if (on != ctx.facts.module_streams.end() && on->second == drv.module.stream) {
        return std::nullopt;
    }
    auto m = drv.module;
    m.switch_from_other = on != ctx.facts.module_streams.end();
    return m;
}

void check_rpm_driver(const StepContext& ctx, const System& sys, const PackageManager& pm,
                      const RpmDriver& drv, CheckResult& r) {
    const auto& d = *ctx.profile.driver;
    const auto wanted = stream_to_enable(ctx, drv);
    const bool stream_on = !wanted;
    // driver.version pins one driver ("550.90.07" → 3:550.90.07-1.el9); else the newest of the
    // branch within the stream.
    const auto prefix = d.version ? *d.version + "-" : d.branch + ".";
    const auto other_installed = installed_of(sys, pm, drv.other_flavor);
    if (stream_on && all_installed(sys, pm, drv.packages, prefix) &&
        (drv.modular || closure_of_branch(sys, pm, drv.packages, d.branch)) &&
        not_needed(other_installed, drv.packages, [&](const std::string& name) {
            return pm.installed_depends(sys, name);
        }).empty()) {
        return;
    }
    // dkms builds the kmod package's module (kmod-nvidia-*-dkms requires it); RHEL carries it
    // only in EPEL (NVIDIA's driver guide, RHEL 8/9 preparation: "the EPEL repository").
    const PackageIndex* index = index_or_block(ctx, "cuda", r);
    if (index == nullptr) {
        return;
    }
    if (!pm.installed(sys, drv.dkms) && !ctx.facts.epel && !index->has(drv.dkms)) {
        const auto major = el_major(ctx.facts);
        r.status = StepStatus::blocked;
        r.reason = fmt::format(
            "the driver's kernel module package needs {}, which RHEL ships only in EPEL, and "
            "EPEL is not configured; enable it (RHEL {}: subscription-manager repos --enable "
            "codeready-builder-for-rhel-{}-$(arch)-rpms && dnf install "
            "https://dl.fedoraproject.org/pub/epel/epel-release-latest-{}.noarch.rpm; Rocky/Alma: "
            "dnf install epel-release), or install {} yourself",
            drv.dkms, major, major, major, drv.dkms);
        return;
    }
    std::vector<PackagePin> pins;
    for (const auto& name : drv.packages) {
        // Already of the branch (only the stream or a stale flavour is off): kept as it is.
        if (const auto now = pm.installed(sys, name); now && version_has_prefix(*now, prefix)) {
            pins.push_back({name, *now});
            continue;
        }
        const auto* rec = index->newest_with_prefix(name, prefix);
        if (rec == nullptr) {
            r.status = StepStatus::blocked;
            const auto* newest = index->newest(name);
            r.reason = fmt::format("the CUDA repository has no {} {} ({}); newest there: {}", name,
                                   d.version ? "version " + *d.version : "of branch " + d.branch,
                                   drv.modular ? "module stream " + drv.module.spec()
                                               : "no module streams on EL " +
                                                     std::to_string(el_major(ctx.facts)),
                                   newest ? newest->version : std::string("none"));
            return;
        }
        pins.push_back({name, rec->version});
    }
    if (!drv.modular) {
        // No stream keeps dnf in the branch: the whole driver closure at the roots' build, and
        // the installed driver packages beyond it (xorg-x11-nvidia, nvidia-settings) move with
        // it on a branch change; never the other flavour's (its kmod goes, the walk brings back
        // what this flavour requires of it).
        std::vector<std::string> also;
        for (const auto& n : installed_driver_closure(sys, pm, drv.packages)) {
            if (!contains(drv.other_flavor, n)) {
                also.push_back(n);
            }
        }
        pins = rpm_branch_closure(*index, pins, d.branch, also);
        r.changes.push_back(note(fmt::format(
            "EL {}: NVIDIA publishes no module streams; every driver package the top-level "
            "packages require is pinned to {} from the index (nvidia-open requires its parts "
            "with >= only, and dnf would take the newest branch), and the branch is "
            "versionlocked after the install",
            el_major(ctx.facts), upstream_version(pins.front().version))));
    }
    // The other flavour's packages go, except what the new packages require at the versions
    // pinned (nvidia-open requires nvidia-driver; the kmods conflict). Requires name
    // capabilities too (nvidia-kmod), which are never package names here.
    std::vector<std::string> pinned;
    for (const auto& p : pins) {
        pinned.push_back(p.name);
    }
    const auto stale_flavor = not_needed(other_installed, pinned, [&](const std::string& name) {
        for (const auto& p : pins) {
            if (p.name == name) {
                for (const auto* rec : index->versions(name)) {
                    if (rec->version == p.version) {
                        return dependency_names(rec->depends);
                    }
                }
            }
        }
        const auto* rec = index->newest(name);
        return rec ? dependency_names(rec->depends) : std::vector<std::string>{};
    });
    // The other flavour's packages conflict with this one's kmod: gpuprov removes its own in
    // the same transaction; someone else's are theirs to remove.
    const auto owned = gpuprov_installed_packages(sys);
    for (const auto& n : stale_flavor) {
        if (owned.count(n) == 0) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format(
                "{} (the other driver flavour) is installed, not by gpuprov; remove it (dnf "
                "remove {}) or set driver.flavor to match it",
                n, join(stale_flavor, " "));
            return;
        }
        r.removals.push_back(n);
        if (r.status == StepStatus::satisfied) {
            r.status = StepStatus::pending;
        }
    }
    if (wanted) {
        r.changes.push_back(note(
            wanted->switch_from_other
                ? fmt::format("dnf module stream {} replaces {}:{} (dnf module switch-to, in the "
                              "package transaction)",
                              wanted->spec(), wanted->module,
                              ctx.facts.module_streams.at(wanted->module))
                : fmt::format("dnf module stream {} enabled in the package transaction",
                              wanted->spec())));
        r.modules.push_back(*wanted);
        if (r.status == StepStatus::satisfied) {
            r.status = StepStatus::pending;
        }
    }
    plan_installs(r, sys, pm, pins);
    // A versionlocked older driver would keep dnf from moving it: release the installed
    // closure first; the new one is locked after the transaction.
    auto roots = drv.packages;
    roots.insert(roots.end(), stale_flavor.begin(), stale_flavor.end());
    for (const auto& n : installed_driver_closure(sys, pm, roots)) {
        if (pm.held(sys, n)) {
            r.unholds.push_back(n);
        }
    }
    if (!r.unholds.empty()) {
        r.changes.insert(r.changes.begin(),
                         command_change(pm.unhold(r.unholds),
                                        "release the installed driver so dnf can replace it"));
    }
    if (!r.removals.empty()) {
        r.changes.push_back(note(fmt::format(
            "driver flavour change to {}: removes {}",
            driver_flavor(ctx.profile, ctx.facts, ctx.matrix).flavor, join(r.removals, ", "))));
    }
}

std::string rpm_driver_target_version(const StepContext& ctx, const System& sys,
                                      const PackageManager& pm) {
    CheckResult ignored;
    const auto drv = rpm_driver(ctx, ignored);
    if (!drv) {
        return {};
    }
    const auto& d = *ctx.profile.driver;
    const auto prefix = d.version ? *d.version + "-" : d.branch + ".";
    if (const auto v = pm.installed(sys, drv->version_from); v && version_has_prefix(*v, prefix)) {
        return upstream_version(*v);
    }
    const auto& state = ctx.repos.repo("cuda");
    if (!state.index) {
        return {};
    }
    const auto* rec = state.index->newest_with_prefix(drv->version_from, prefix);
    return rec != nullptr ? upstream_version(rec->version) : std::string();
}

std::vector<std::string> rpm_kernel_packages(const System& sys, const PackageManager& pm) {
    // dnf's installonlypkgs kernel set (dnf.conf(5)): a new kernel arrives as a new install
    // of these names, so locking them at the installed versions stops it.
    std::vector<std::string> out;
    for (const auto* n : {"kernel", "kernel-core", "kernel-modules", "kernel-modules-core",
                          "kernel-devel", "kernel-headers"}) {
        if (pm.installed(sys, n)) {
            out.emplace_back(n);
        }
    }
    return out;
}

} // namespace gpuprov::steps
