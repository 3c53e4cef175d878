#include "driver_apt.hpp"

#include "driver_rpm.hpp"
#include "driver_signed.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <gpuprov/deb_file.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>
#include <set>

namespace gpuprov::steps {

namespace {

constexpr std::string_view kPinningPrefix = "nvidia-driver-pinning-";
constexpr std::string_view kPreferencesDir = "etc/apt/preferences.d/";

bool contains(const std::vector<std::string>& v, std::string_view x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

int branch_number(const std::string& branch) {
    return static_cast<int>(parse_int(branch).value_or(0));
}

/// Installed pinning packages (nvidia-driver-pinning-<branch> or -<version>): at most one by
/// NVIDIA's Conflicts, but a broken host may say otherwise.
std::vector<std::string> installed_pins(const System& sys, const PackageManager& pm) {
    std::vector<std::string> out;
    for (const auto& n : pm.installed_names(sys)) {
        if (starts_with(n, kPinningPrefix)) {
            out.push_back(n);
        }
    }
    return out;
}

/// Installed driver packages (their version names a driver branch) of another branch than
/// `branch`, other than pinning packages: what a branch change must move or remove.
std::vector<std::pair<std::string, std::string>>
off_branch_packages(const System& sys, const PackageManager& pm, const std::string& branch) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& n : pm.installed_names(sys)) {
        if (!is_driver_package(n) || starts_with(n, kPinningPrefix)) {
            continue;
        }
        const auto v = pm.installed(sys, n);
        if (!v) {
            continue;
        }
        if (const auto b = driver_branch_of(*v); !b.empty() && b != branch) {
            out.emplace_back(n, *v);
        }
    }
    return out;
}

/// What the pinning package puts in /etc/apt/preferences.d/, read from the package file (its
/// index record's SHA-256 checked): file name -> content. Blocks `r` when it cannot be read.
std::optional<std::map<std::string, std::string>>
pin_files(const StepContext& ctx, const System& sys, const PackageRecord& rec, CheckResult& r) {
    const auto file = ctx.repos.package_file("cuda", rec);
    if (file.path.empty()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("cannot read NVIDIA's pinning package {} {} for the plan: {}",
                               rec.name, rec.version, file.error);
        return std::nullopt;
    }
    std::map<std::string, std::string> out;
    try {
        for (auto& [path, content] : deb_files_under(sys, file.path, kPreferencesDir)) {
            out.emplace(path.substr(kPreferencesDir.size()), std::move(content));
        }
    } catch (const Error& e) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("cannot read NVIDIA's pinning package {} {}: {}", rec.name,
                               rec.version, e.what());
        return std::nullopt;
    }
    if (out.empty()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("NVIDIA's pinning package {} {} installs nothing under /{}: it "
                               "would not keep apt on the branch",
                               rec.name, rec.version, kPreferencesDir);
        return std::nullopt;
    }
    return out;
}

/// Pinning packages dpkg keeps in state "config-files" (removed, not purged): their pin file is
/// a conffile, so it stays in /etc/apt/preferences.d/ with its Pin-Priority 1000 on the old
/// branch. The profile's own pinning package aside (reinstalling it takes its conffile back).
std::vector<std::string> config_files_pins(const System& sys, const AptDriver& drv) {
    std::vector<std::string> out;
    for (const auto& rec : dpkg_database(sys).records()) {
        if (starts_with(rec.name, kPinningPrefix) && !rec.installed &&
            rec.status.ends_with(" config-files") &&
            !(drv.lock == BranchLock::pin && rec.name == drv.pin_package) &&
            !contains(out, rec.name)) {
            out.push_back(rec.name);
        }
    }
    return out;
}

/// The pinning packages to purge after the transaction: those already left in config-files,
/// and those the plan removes (their pin file stays as they do). apt 2.6's `install` has no
/// per-package purge suffix, and `--purge` would purge every removal of the transaction, the
/// old branch's conffiles included; so the pinning package alone is purged, by dpkg.
std::vector<std::string> pins_to_purge(const System& sys, const AptDriver& drv,
                                       const CheckResult& r) {
    auto out = config_files_pins(sys, drv);
    for (const auto* list : {&r.pre_removals, &r.removals}) {
        for (const auto& name : *list) {
            if (starts_with(name, kPinningPrefix) && !contains(out, name)) {
                out.push_back(name);
            }
        }
    }
    return out;
}

void set_pending(CheckResult& r) {
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
}

/// The newest index record of `name` of the driver's branch (or driver.version), or nullptr
/// with `r` blocked naming what the repository has instead.
const PackageRecord* branch_record(const PackageIndex& index, const std::string& name,
                                   const AptDriver& drv, const DriverSpec& d, CheckResult& r) {
    if (const auto* rec = index.newest_with_prefix(name, drv.version_prefix)) {
        return rec;
    }
    r.status = StepStatus::blocked;
    const auto* newest = index.newest(name);
    r.reason = d.version
                   ? fmt::format("the CUDA repository has no {} version {}-* "
                                 "(driver.version {}); newest there: {}",
                                 name, *d.version, *d.version,
                                 newest ? newest->version : std::string("none"))
                   : fmt::format("the CUDA repository has no {} of branch {}{}", name, d.branch,
                                 newest ? " (newest there: " + newest->version + ")"
                                        : std::string(" (no such package)"));
    return nullptr;
}

/// The pinned scheme's pinning package: in its own transaction first when it is not the
/// installed one, with the files it installs offered to the plan's simulation.
void plan_pin(const StepContext& ctx, const System& sys, const PackageManager& pm,
              const PackageIndex& index, const AptDriver& drv, CheckResult& r) {
    const auto pins = installed_pins(sys, pm);
    if (pins.size() == 1 && pins.front() == drv.pin_package) {
        return;
    }
    const auto* rec = index.newest(drv.pin_package);
    if (rec == nullptr) {
        const auto there = index.names_with_prefix(std::string(kPinningPrefix));
        r.status = StepStatus::blocked;
        r.reason = fmt::format(
            "the CUDA repository has no {} (NVIDIA's pinning package for {}); pinning packages "
            "there: {}",
            drv.pin_package,
            ctx.profile.driver->version ? "driver.version " + *ctx.profile.driver->version
                                        : "branch " + ctx.profile.driver->branch,
            there.empty() ? std::string("none") : join(there, ", "));
        return;
    }
    auto files = pin_files(ctx, sys, *rec, r);
    if (!files) {
        return;
    }
    if (!contains(pins, drv.pin_package)) {
        r.pre_installs.push_back({drv.pin_package, rec->version});
    }
    for (const auto& p : pins) {
        if (p != drv.pin_package) {
            r.pre_removals.push_back(p);
        }
    }
    r.view_preferences = std::move(*files);
    std::vector<std::string> names;
    for (const auto& [name, content] : r.view_preferences) {
        names.push_back("/" + std::string(kPreferencesDir) + name);
    }
    r.changes.push_back(Change{
        .kind = Change::Kind::package,
        .target = drv.pin_package,
        .detail = fmt::format(
            "install {} first, in its own transaction: NVIDIA's branch lock "
            "({}{}; apt resolves the driver below with it in place)",
            rec->version, join(names, ", "),
            r.pre_removals.empty() ? std::string() : "; replaces " + join(r.pre_removals, ", "))});
    set_pending(r);
}

/// Installed packages of another branch: moved to the profile's branch where the repository has
/// them there (the pinned scheme keeps their names), removed where gpuprov owns them. apt alone
/// would leave them: their dependents' `>=` is already met by the newer branch.
void plan_off_branch(const StepContext& ctx, const System& sys, const PackageManager& pm,
                     const PackageIndex& index, const AptDriver& drv, std::vector<PackagePin>& pins,
                     CheckResult& r) {
    const auto owned = gpuprov_installed_packages(sys);
    for (const auto& off : off_branch_packages(sys, pm, ctx.profile.driver->branch)) {
        // A named reference, not a structured binding: clang before 16 cannot capture bindings.
        const std::string& name = off.first;
        if (std::any_of(pins.begin(), pins.end(), [&](const auto& p) { return p.name == name; })) {
            continue;
        }
        if (drv.lock == BranchLock::pin) {
            if (const auto* rec = index.newest_with_prefix(name, drv.version_prefix)) {
                pins.push_back({name, rec->version});
                continue;
            }
        }
        if (owned.count(name) != 0 && !contains(r.removals, name)) {
            r.removals.push_back(name);
        }
    }
}

/// The suffixed scheme's floor-only edges to unsuffixed driver packages (Ubuntu's
/// nvidia-compute-utils-580 Depends nvidia-persistenced (>= 580.x)): no pinning package steers
/// apt there, so it would take the newest branch's build and split the driver across branches.
/// Every driver package the roots' closure reaches whose newest build in the index is outside
/// the profile's branch (or driver.version) is asked for at the branch's newest build instead.
void pin_floating_dependencies(const PackageIndex& index, const AptDriver& drv,
                               const std::vector<const PackageRecord*>& roots,
                               std::vector<PackagePin>& pins) {
    std::set<std::string> seen;
    for (const auto& p : pins) {
        seen.insert(p.name);
    }
    std::deque<const PackageRecord*> queue(roots.begin(), roots.end());
    while (!queue.empty()) {
        const auto* rec = queue.front();
        queue.pop_front();
        for (const auto& name : dependency_names(rec->depends)) {
            if (!is_driver_package(name) || !seen.insert(name).second) {
                continue;
            }
            const auto* at_branch = index.newest_with_prefix(name, drv.version_prefix);
            if (at_branch == nullptr) {
                continue; // virtual, or not of the branch: apt resolves it
            }
            queue.push_back(at_branch);
            const auto* newest = index.newest(name);
            if (!version_has_prefix(newest->version, drv.version_prefix)) {
                pins.push_back({name, at_branch->version});
            }
        }
    }
}

/// The pinned scheme never holds (NVIDIA: the pinning package is not to be combined with
/// apt-mark hold): holds on the installed driver closure are released.
void plan_unholds_for_pin(const System& sys, const PackageManager& pm, const AptDriver& drv,
                          CheckResult& r) {
    std::vector<std::string> held;
    for (const auto& n : pm.installed_names(sys)) {
        if (is_driver_package(n) && pm.held(sys, n) && !contains(r.unholds, n)) {
            held.push_back(n);
        }
    }
    (void)drv;
    if (held.empty()) {
        return;
    }
    r.unholds.insert(r.unholds.end(), held.begin(), held.end());
    r.changes.insert(r.changes.begin(),
                     command_change(pm.unhold(held),
                                    "NVIDIA's pinning package keeps the branch; apt-mark holds "
                                    "would fight it"));
    set_pending(r);
}

} // namespace

std::optional<AptDriver> apt_driver(const StepContext& ctx, CheckResult& r) {
    const auto& d = *ctx.profile.driver;
    const auto chosen = driver_flavor(ctx.profile, ctx.facts, ctx.matrix).flavor;
    AptDriver out;
    if (chosen == "server") {
        // Ubuntu's own server series, from Ubuntu's archive. nvidia-driver-<b>-server builds its
        // module with DKMS, unsigned; under Secure Boot Canonical's signed precompiled modules
        // replace it (driver_signed.hpp).
        out.version_prefix = d.version ? *d.version + "-" : d.branch + ".";
        if (!signed_modules_chosen(ctx)) {
            out.scheme = "server";
            out.from_distro = {"nvidia-driver-" + d.branch + "-server"};
            return out;
        }
        out.scheme = "signed";
        out.from_distro = signed_module_packages(d.branch, false, ctx.facts.kernel);
        if (out.from_distro.empty()) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format(
                "Secure Boot is on and kernel {} is not an Ubuntu kernel "
                "(<version>-<abi>-<flavour>): Canonical signs precompiled NVIDIA modules only "
                "for its own kernels; boot an Ubuntu kernel (linux-generic), or disable Secure "
                "Boot in the firmware",
                ctx.facts.kernel);
            return std::nullopt;
        }
        return out;
    }
    const auto* names = ctx.matrix.package_names("debian");
    if (names == nullptr || !names->apt_driver) {
        r.status = StepStatus::blocked;
        r.reason = "gpuprov's version matrix names no apt driver packages (packages.debian.driver)";
        return std::nullopt;
    }
    const auto branch = branch_number(d.branch);
    const auto* scheme = names->apt_driver->scheme_for(ctx.facts.os.id, branch);
    if (scheme == nullptr) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("NVIDIA publishes no driver packages gpuprov knows for branch {} "
                               "on {} (src/data/nvidia-matrix.yaml, packages.debian.driver)",
                               d.branch, ctx.facts.os.id);
        return std::nullopt;
    }
    if (chosen == "open" && branch < scheme->open_since) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("NVIDIA's {} repository has no open-module packages for branch {} "
                               "(its {} scheme has them from branch {}); use flavor: proprietary, "
                               "or a branch from {}",
                               ctx.facts.os.id, d.branch, scheme->name, scheme->open_since,
                               scheme->open_since);
        return std::nullopt;
    }
    const auto flavor = scheme->packages.find(chosen);
    if (flavor == scheme->packages.end()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("flavor '{}' has no packages on {}; use proprietary or open", chosen,
                               ctx.facts.os.id);
        return std::nullopt;
    }
    const PackageVars vars{.branch = d.branch, .version = d.version.value_or("")};
    out.scheme = scheme->name;
    out.lock = scheme->lock;
    out.roots = expand_package_names(flavor->second, vars);
    out.version_prefix = d.version ? *d.version + "-" : d.branch + ".";
    if (scheme->lock == BranchLock::pin) {
        out.pin_package = expand_package_name(d.version ? names->apt_driver->pinning_version
                                                        : names->apt_driver->pinning_branch,
                                              vars);
    }
    return out;
}

bool apt_driver_holds(const StepContext& ctx) {
    if (!ctx.profile.driver || !ctx.profile.driver->hold || ctx.facts.os.family != "debian") {
        return false;
    }
    CheckResult ignored;
    const auto drv = apt_driver(ctx, ignored);
    return drv && drv->lock == BranchLock::hold;
}

void check_apt_driver(const StepContext& ctx, const System& sys, const PackageManager& pm,
                      const AptDriver& drv, CheckResult& r) {
    const auto& d = *ctx.profile.driver;
    const auto pins_now = installed_pins(sys, pm);
    const bool pin_ok = drv.lock == BranchLock::pin
                            ? pins_now.size() == 1 && pins_now.front() == drv.pin_package
                            : pins_now.empty();
    const bool in_place = all_installed(sys, pm, drv.roots, drv.version_prefix) &&
                          all_installed(sys, pm, drv.from_distro) && pin_ok &&
                          off_branch_packages(sys, pm, d.branch).empty();
    if (!in_place) {
        const PackageIndex* index = nullptr;
        if (!drv.roots.empty() && (index = index_or_block(ctx, "cuda", r)) == nullptr) {
            return;
        }
        if (drv.lock == BranchLock::pin) {
            plan_pin(ctx, sys, pm, *index, drv, r);
            if (r.status == StepStatus::blocked) {
                return;
            }
        } else {
            // Leaving the pinned scheme (a branch change down to 580 on Ubuntu): every pinning
            // package goes with the packages it kept, owned or not, as a pin of another branch
            // is replaced on the pinned scheme (plan_pin). Left installed, its Pin-Priority 1000
            // on the old branch fights the new closure's holds; and the journal never named it
            // (it is installed in a transaction of its own), so "owned" left it on every host
            // e2e 45 changed from 595 to 580.
            for (const auto& p : pins_now) {
                if (!contains(r.removals, p)) {
                    r.removals.push_back(p);
                }
            }
        }
        std::vector<PackagePin> pins;
        std::vector<const PackageRecord*> root_records;
        for (const auto& name : drv.roots) {
            const auto* rec = branch_record(*index, name, drv, d, r);
            if (rec == nullptr) {
                return;
            }
            pins.push_back({name, rec->version});
            root_records.push_back(rec);
        }
        if (drv.lock == BranchLock::hold && index != nullptr) {
            pin_floating_dependencies(*index, drv, root_records, pins);
        }
        for (const auto& name : drv.from_distro) {
            pins.push_back({name, ""});
        }
        if (index != nullptr) {
            plan_off_branch(ctx, sys, pm, *index, drv, pins, r);
        }
        plan_installs(r, sys, pm, pins);
        if (!r.removals.empty()) {
            set_pending(r);
            r.changes.push_back(note(
                fmt::format("driver branch {}: removes {}", d.branch, join(r.removals, ", "))));
        }
        // Canonical's module packages follow the kernel metapackage; a hold on them would hold
        // the kernel back with them (driver.cpp's driver_unheld leaves them out too).
        r.hold_installs = d.hold && drv.lock == BranchLock::hold && drv.scheme != "signed";
        if (drv.lock == BranchLock::hold) {
            // The old branch's holds go first, or apt could not replace it.
            std::vector<std::string> held;
            for (const auto& [name, version] : off_branch_packages(sys, pm, d.branch)) {
                if (pm.held(sys, name)) {
                    held.push_back(name);
                }
            }
            if (!held.empty()) {
                r.unholds.insert(r.unholds.end(), held.begin(), held.end());
                r.changes.insert(r.changes.begin(),
                                 command_change(pm.unhold(held),
                                                "release the old branch so apt can replace it"));
            }
        }
    }
    if (drv.lock == BranchLock::pin) {
        plan_unholds_for_pin(sys, pm, drv, r);
    }
    // After the transaction (the driver's configure phase): a kill between the removal and the
    // purge leaves the package in config-files, which the next check finds here again.
    const auto purges = pins_to_purge(sys, drv, r);
    for (const auto& name : purges) {
        r.changes.push_back(command_change(
            pin_purge_command(name),
            "after the transaction: its pin file (a conffile) outlives the removal and would "
            "keep Pin-Priority 1000 on another branch"));
    }
    if (!purges.empty()) {
        set_pending(r);
        if (r.reason.empty()) {
            r.reason = fmt::format("{} removed but not purged: its pin file stays in /{}",
                                   join(purges, ", "), kPreferencesDir);
        }
    }
}

Command pin_purge_command(const std::string& name) {
    return {.argv = {"dpkg", "--purge", name}, .timeout = std::chrono::seconds(300)};
}

void purge_pins(System& sys, const AptDriver& drv, const CheckResult& planned) {
    for (const auto& name : config_files_pins(sys, drv)) {
        const auto cmd = pin_purge_command(name);
        const auto target = display_argv(cmd.argv);
        // Only what the plan showed: a leftover that appeared since waits for the next plan.
        if (std::any_of(planned.changes.begin(), planned.changes.end(), [&](const Change& c) {
                return c.kind == Change::Kind::command && c.target == target;
            })) {
            run_checked(sys, cmd);
        }
    }
}

namespace {

/// The lock judged by its effect over `names` (installed packages): a candidate of another
/// branch is what dist-upgrade and unattended-upgrades would install; held ones are skipped.
CheckOutcome lock_outcome(const StepContext& ctx, const System& sys, const PackageManager& pm,
                          const AptDriver& drv, const std::vector<std::string>& names,
                          const std::string& id, const std::string& step, const std::string& what) {
    const auto& d = *ctx.profile.driver;
    CheckOutcome c{.id = id,
                   .step = step,
                   .command = "apt-cache policy " + join(names, " "),
                   .expected = fmt::format("no {} package with an upgrade candidate outside "
                                           "branch {} (what dist-upgrade and "
                                           "unattended-upgrades would install)",
                                           what, d.branch)};
    std::map<std::string, std::string> candidates;
    try {
        candidates = pm.candidates(sys, names);
    } catch (const Error& e) {
        c.found = e.what();
        c.fix = "see why apt-cache policy failed; the branch lock cannot be judged without it";
        return c;
    }
    std::vector<std::string> moving;
    for (const auto& n : names) {
        const auto it = candidates.find(n);
        if (it == candidates.end() || pm.held(sys, n)) {
            continue; // held: the candidate is never installed
        }
        if (const auto b = driver_branch_of(it->second); !b.empty() && b != d.branch) {
            moving.push_back(n + " " + it->second);
        }
    }
    c.passed = moving.empty();
    c.found = c.passed ? fmt::format("every candidate is of branch {} ({} packages)", d.branch,
                                     names.size())
                       : "would move to another branch: " + join(moving, ", ");
    if (!c.passed) {
        c.fix = drv.lock == BranchLock::pin
                    ? fmt::format("apt install --reinstall {} (NVIDIA's pin) and look for a "
                                  "higher-priority pin in /etc/apt/preferences.d/",
                                  drv.pin_package)
                    : "gpuprov apply PROFILE --only driver,fabric-manager (holds the closure)";
    }
    return c;
}

/// The driver's apt scheme where a lock is asked of it: nullopt without a driver, off apt,
/// without top-level packages, or with hold: false on a suffixed branch.
std::optional<AptDriver> locked_apt_driver(const StepContext& ctx) {
    if (!ctx.profile.driver || ctx.facts.os.family != "debian") {
        return std::nullopt;
    }
    CheckResult ignored;
    auto drv = apt_driver(ctx, ignored);
    if (!drv || drv->roots.empty() ||
        (drv->lock == BranchLock::hold && !ctx.profile.driver->hold)) {
        return std::nullopt;
    }
    return drv;
}

} // namespace

std::optional<CheckOutcome> branch_lock_outcome(const StepContext& ctx, const System& sys) {
    const auto drv = locked_apt_driver(ctx);
    if (!drv) {
        return std::nullopt;
    }
    const auto pm = make_package_manager(ctx.facts);
    const auto names = installed_driver_closure(sys, *pm, drv->roots);
    if (names.empty()) {
        return std::nullopt;
    }
    return lock_outcome(ctx, sys, *pm, *drv, names, "driver.branch-lock", "driver", "driver");
}

std::optional<CheckOutcome> fabric_manager_lock_outcome(const StepContext& ctx, const System& sys) {
    const auto drv = locked_apt_driver(ctx);
    const auto* pkg = ctx.matrix.package_names("debian");
    if (!drv || pkg == nullptr) {
        return std::nullopt;
    }
    const auto pm = make_package_manager(ctx.facts);
    const int branch = branch_number(ctx.profile.driver->branch);
    auto wanted = pkg->fabric_manager_for(branch);
    if (ctx.profile.fabric.imex) {
        for (auto& n : pkg->imex_for(branch)) {
            if (std::find(wanted.begin(), wanted.end(), n) == wanted.end()) {
                wanted.push_back(std::move(n));
            }
        }
    }
    std::vector<std::string> names;
    for (const auto& n : wanted) {
        if (pm->installed(sys, n)) {
            names.push_back(n);
        }
    }
    if (names.empty()) {
        return std::nullopt;
    }
    return lock_outcome(ctx, sys, *pm, *drv, names, "fabric-manager.branch-lock", "fabric-manager",
                        "fabric manager, NSCQ or IMEX");
}

std::string driver_target_version(const StepContext& ctx, const System& sys,
                                  const PackageManager& pm) {
    CheckResult ignored;
    const auto drv = apt_driver(ctx, ignored);
    if (!drv || drv->roots.empty()) {
        return {};
    }
    const auto& root = drv->roots.front();
    if (const auto v = pm.installed(sys, root); v && version_has_prefix(*v, drv->version_prefix)) {
        return upstream_version(*v);
    }
    const auto& state = ctx.repos.repo("cuda");
    if (!state.index) {
        return {};
    }
    const auto* rec = state.index->newest_with_prefix(root, drv->version_prefix);
    return rec != nullptr ? upstream_version(rec->version) : std::string();
}

} // namespace gpuprov::steps
