// driver: the branch's packages from NVIDIA's repository, held against unattended upgrades,
// loaded now or after the reboot that nouveau forces.
#include "common.hpp"
#include "driver_apt.hpp"
#include "driver_rpm.hpp"
#include "driver_signed.hpp"
#include "kernel_build.hpp"
#include "kernel_hooks.hpp"
#include "runfile_driver.hpp"
#include "steps.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/doctor.hpp>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>

namespace gpuprov::steps {

namespace {

/// The driver's top-level packages on this host's family: the module stream's packages on the
/// rhel family (driver_rpm.hpp), NVIDIA's apt names for the branch elsewhere (driver_apt.hpp).
std::vector<std::string> root_packages(const StepContext& ctx) {
    CheckResult ignored;
    if (ctx.facts.os.family == "rhel") {
        const auto drv = rpm_driver(ctx, ignored);
        return drv ? drv->packages : std::vector<std::string>{};
    }
    const auto drv = apt_driver(ctx, ignored);
    if (!drv) {
        return {};
    }
    auto all = drv->roots;
    all.insert(all.end(), drv->from_distro.begin(), drv->from_distro.end());
    return all;
}

/// Kernel packages `hold_kernel` holds: the metapackages that bring new ABI kernels
/// (linux-image-amd64, linux-headers-amd64, linux-generic, linux-image-aws, ...), and the
/// running kernel's own image and headers. An ABI-versioned name (linux-image-6.1.0-28-amd64) is
/// never upgraded in place, so holding it alone stops nothing.
std::vector<std::string> kernel_packages(const HostFacts& facts, const System& sys,
                                         const PackageManager& pm) {
    if (facts.os.family == "rhel") {
        return rpm_kernel_packages(sys, pm);
    }
    const auto names = pm.installed_names(sys);
    const auto installed = [&](const std::string& n) {
        return std::binary_search(names.begin(), names.end(), n);
    };
    std::vector<std::string> out;
    for (const auto& n : names) {
        for (const std::string_view kind : {"linux-image-", "linux-headers-"}) {
            if (starts_with(n, kind) && n.size() > kind.size() &&
                std::isdigit(static_cast<unsigned char>(n[kind.size()])) == 0) {
                out.push_back(n);
                // Ubuntu's top metapackage of that flavour: linux-generic, linux-aws, ...
                if (const auto top = "linux-" + n.substr(kind.size()); installed(top)) {
                    out.push_back(top);
                }
            }
        }
    }
    for (const auto& n : {"linux-image-" + facts.kernel, "linux-headers-" + facts.kernel}) {
        if (installed(n)) {
            out.push_back(n);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> unheld(const System& sys, const PackageManager& pm,
                                const std::vector<std::string>& pkgs) {
    std::vector<std::string> out;
    for (const auto& p : pkgs) {
        if (!pm.held(sys, p)) {
            out.push_back(p);
        }
    }
    return out;
}

/// The driver packages still to hold: with `hold: true` where holds are the branch lock, none
/// where NVIDIA's pinning package keeps the branch (apt-mark hold is not to be combined with
/// it), and always on EL 10, where versionlock is the only lock there is.
std::vector<std::string> driver_unheld(const StepContext& ctx, const System& sys,
                                       const PackageManager& pm,
                                       const std::vector<std::string>& pkgs) {
    const bool holds =
        ctx.facts.os.family == "rhel" ? rpm_branch_locked(ctx) : apt_driver_holds(ctx);
    if (!holds) {
        return {};
    }
    auto out = unheld(sys, pm, installed_driver_closure(sys, pm, pkgs));
    // Canonical's signed module packages (driver_signed.hpp) move with the kernel metapackage:
    // held, they would keep every kernel update back.
    std::erase_if(out,
                  [](const std::string& n) { return starts_with(n, "linux-modules-nvidia-"); });
    return out;
}

/// The kernel packages `hold_kernel: true` still has to hold.
std::vector<std::string> kernel_unheld(const DriverSpec& d, const HostFacts& facts,
                                       const System& sys, const PackageManager& pm) {
    return d.hold_kernel ? unheld(sys, pm, kernel_packages(facts, sys, pm))
                         : std::vector<std::string>{};
}

/// The other installed kernels DKMS has not built the module for: NVIDIA's DKMS packages build
/// in their %post for the running kernel only (`dkms install` without -k), and dkms's kernel
/// hooks run only for a kernel installed after the driver. Kernels whose build tree no
/// repository carries are left out (preflight's plan names them and the fix).
void plan_dkms_kernels(const StepContext& ctx, const System& sys, const PackageManager& pm,
                       CheckResult& r) {
    if (!driver_uses_dkms(sys, r.installs)) {
        return;
    }
    const auto missing = kernels_without_module(sys, other_buildable_kernels(ctx.facts, sys, pm));
    for (const auto& k : missing) {
        r.changes.push_back(command_change(
            dkms_autoinstall(k), "the next boot may pick " + k +
                                     ": the driver's DKMS package builds for the running kernel "
                                     "only"));
    }
    if (!missing.empty() && r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
        r.reason = "DKMS has not built the NVIDIA module for " + join(missing, ", ");
    }
}

/// `dkms status` shows the NVIDIA module installed for every installed kernel: the one the next
/// boot picks has its driver. nullopt where DKMS does not build the driver (precompiled
/// modules, the runfile) or the host lists no kernel.
std::optional<CheckOutcome> dkms_kernels_outcome(const StepContext& ctx, const System& sys) {
    if (ctx.facts.kernels.empty() || !driver_uses_dkms(sys, {})) {
        return std::nullopt;
    }
    std::vector<std::string> all;
    for (const auto& k : ctx.facts.kernels) {
        all.push_back(k.release);
    }
    const auto missing = kernels_without_module(sys, all);
    std::vector<std::string> fixes;
    for (const auto& k : missing) {
        const auto it = std::find_if(ctx.facts.kernels.begin(), ctx.facts.kernels.end(),
                                     [&](const InstalledKernel& i) { return i.release == k; });
        if (it != ctx.facts.kernels.end() && !it->build_tree) {
            for (const auto& p : build_tree_packages(ctx.facts, k)) {
                fixes.push_back(
                    (ctx.facts.os.family == "rhel" ? "dnf install " : "apt-get install ") + p.name);
            }
        }
        fixes.push_back(display_argv(dkms_autoinstall(k).argv));
    }
    return CheckOutcome{.id = "driver.dkms-kernels",
                        .step = "driver",
                        .passed = missing.empty(),
                        .command = "dkms status",
                        .expected = "the nvidia module installed for every installed kernel (" +
                                    join(all, ", ") + ")",
                        .found = missing.empty() ? "installed for all"
                                                 : "not installed for " + join(missing, ", "),
                        .fix = join(fixes, "; ")};
}

class Driver final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "driver"; }
    [[nodiscard]] std::string_view summary() const override {
        return "NVIDIA driver branch, held; loaded now or after reboot";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        auto r = check_driver_packages(ctx, sys);
        // The kernel install hook goes with the driver: every later kernel gets its forecast.
        if (r.status != StepStatus::skipped && r.status != StepStatus::blocked) {
            check_kernel_hook(ctx, sys, r);
        }
        return r;
    }

    [[nodiscard]] CheckResult check_driver_packages(const StepContext& ctx,
                                                    const System& sys) const {
        CheckResult r;
        if (!ctx.profile.driver) {
            r.status = StepStatus::skipped;
            r.reason = "profile has no driver section";
            return r;
        }
        if (block_on_runfile_driver(ctx, sys, r)) {
            return r;
        }
        const auto& d = *ctx.profile.driver;
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        // driver.flavor auto resolves here against the GPUs found (gpu_rules.hpp); the plan says
        // which flavour and why, so the review sees the choice before apply makes it.
        const auto flavor = driver_flavor(ctx.profile, ctx.facts, ctx.matrix);
        if (flavor.flavor.empty()) {
            r.status = StepStatus::blocked;
            r.reason = flavor.why + "; set driver.flavor to open or proprietary";
            return r;
        }
        if (flavor.automatic) {
            r.changes.push_back(note("driver.flavor auto: " + flavor.flavor + " kernel modules (" +
                                     flavor.why + ")"));
        }
        if (flavor.flavor == "server" && ctx.facts.os.id != "ubuntu") {
            r.status = StepStatus::blocked;
            r.reason = "flavor 'server' (nvidia-driver-<branch>-server) exists only in Ubuntu's "
                       "archive; use proprietary or open";
            return r;
        }
        // NVIDIA's lifecycle for the branch (LTSB / production / new feature, end of life), so
        // a change review sees a branch that no longer gets fixes.
        if (const auto lifecycle = ctx.matrix.branch_lifecycle(
                static_cast<int>(parse_int(d.branch).value_or(0)), year_month(sys.now()));
            !lifecycle.empty()) {
            r.changes.push_back(note("driver branch " + lifecycle));
        }
        if (ctx.facts.os.family == "rhel") {
            return check_rpm(ctx, sys, *pm, r);
        }
        const auto drv = apt_driver(ctx, r);
        if (!drv) {
            return r;
        }
        if (drv->scheme == "signed") {
            r.changes.push_back(note(fmt::format(
                "Secure Boot is on: Canonical-signed precompiled modules for kernel {} ({}), "
                "not nvidia-driver-{}-server, whose DKMS-built module is unsigned and would not "
                "load; as ubuntu-drivers --gpgpu chooses them",
                ctx.facts.kernel, join(drv->from_distro, ", "), d.branch)));
        }
        check_apt_driver(ctx, sys, *pm, *drv, r);
        if (r.status == StepStatus::blocked) {
            return r;
        }
        if (const auto held = competing_driver_loaded(ctx.facts);
            !r.installs.empty() && !held.empty()) {
            r.changes.push_back(note(held + " is loaded: the driver loads after a reboot"));
        }
        add_hold_changes(ctx, sys, *pm, root_packages(ctx), r);
        plan_dkms_kernels(ctx, sys, *pm, r);
        if (r.status == StepStatus::satisfied && !loaded_ok(ctx)) {
            r.status = StepStatus::reboot_required;
            r.reason = not_loaded_reason(ctx);
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult& planned,
                     ApplyPhase phase) override {
        if (phase == ApplyPhase::sources) {
            return StepStatus::done;
        }
        if (phase == ApplyPhase::prepare) {
            // Before the transaction: a kernel it brings in already gets its forecast.
            apply_kernel_hook(ctx, sys);
            // driver.replace_runfile: the runfile driver goes before the packages arrive.
            remove_runfile_driver(ctx, sys);
            // A branch change: the old closure is released so the transaction may replace it.
            if (!planned.unholds.empty()) {
                run_checked(sys, make_package_manager(ctx.facts)->unhold(planned.unholds));
            }
            return StepStatus::done;
        }
        // Again after the transaction: a run resumed after a reboot starts here.
        apply_kernel_hook(ctx, sys);
        const auto& d = *ctx.profile.driver;
        if (ctx.facts.os.family == "debian") {
            CheckResult ignored;
            if (const auto drv = apt_driver(ctx, ignored)) {
                purge_pins(sys, *drv, planned);
            }
        }
        const auto pm = make_package_manager(ctx.facts);
        const auto pkgs = root_packages(ctx);
        if (const auto unheld = driver_unheld(ctx, sys, *pm, pkgs); !unheld.empty()) {
            run_checked(sys, pm->hold(unheld));
        }
        // The other installed kernels, as planned: the package built for the running one only.
        if (driver_uses_dkms(sys, {})) {
            for (const auto& k :
                 kernels_without_module(sys, other_buildable_kernels(ctx.facts, sys, *pm))) {
                run_checked(sys, dkms_autoinstall(k));
            }
        }
        // The module of the driver this transaction installed: another one still loaded (an
        // older build of the branch, a runfile's that its uninstaller could not unload) keeps
        // the new one out until a reboot, as another branch's does.
        m_installed = installed_version(planned, d.branch);
        if (!module_loaded(sys, d.branch, m_installed)) {
            if (!competing_driver_holding(ctx.facts, sys).empty()) {
                return StepStatus::reboot_required;
            }
            // Without nouveau in the way the module usually loads on demand; try once, and keep
            // what modprobe said: it is the evidence when a reboot does not help either.
            const auto probe = sys.run({.argv = {"modprobe", "nvidia"}, .timeout = 120s});
            m_modprobe = probe.ok() ? std::string()
                                    : fmt::format("modprobe nvidia (exit {}): {}", probe.exit_code,
                                                  std::string(trim(tail_lines(probe.err, 6))));
            if (!module_loaded(sys, d.branch, m_installed)) {
                return StepStatus::reboot_required;
            }
        }
        // The kernel is held only once the module is known to load on it.
        if (const auto unheld = kernel_unheld(d, ctx.facts, sys, *pm); !unheld.empty()) {
            run_checked(sys, pm->hold(unheld));
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.driver) {
            return {};
        }
        auto out = check_driver({ctx.profile, ctx.facts, ctx.matrix}, sys);
        if (auto lock = branch_lock_outcome(ctx, sys)) {
            out.push_back(std::move(*lock));
        }
        if (auto dkms = dkms_kernels_outcome(ctx, sys)) {
            out.push_back(std::move(*dkms));
        }
        return out;
    }

    [[nodiscard]] std::string reboot_evidence(const StepContext& ctx,
                                              const System& sys) const override {
        if (!ctx.profile.driver) {
            return {};
        }
        std::vector<std::string> parts{loaded_words(ctx, sys)};
        if (!m_modprobe.empty()) {
            parts.push_back(m_modprobe);
        }
        if (sys.exists("/usr/sbin/dkms") || sys.exists("/usr/bin/dkms")) {
            const auto dkms = sys.query({.argv = {"dkms", "status"}, .timeout = 30s});
            parts.push_back(fmt::format("dkms status: {}",
                                        std::string(trim(tail_lines(dkms.out + dkms.err, 6)))));
        }
        if (ctx.facts.secure_boot.value_or(false) && !signed_modules_chosen(ctx)) {
            parts.push_back("Secure Boot is on: the kernel loads the DKMS module only signed by an "
                            "enrolled key (the secure-boot step's: mokutil --test-key "
                            "/var/lib/gpuprov/mok/mok.der)");
        }
        // What `gpuprov doctor` would say now, so the journal and the final failure carry the
        // diagnosis and its fix, not only the symptoms. "Reboot pending" is this very request.
        const DoctorOptions options{.profile = &ctx.profile,
                                    .matrix = &ctx.matrix,
                                    .judge_signature = &module_trusted_at_boot};
        for (const auto& f : diagnose(sys, ctx.facts, options)) {
            if (f.severity == "error" && f.id != "driver-reboot-pending") {
                parts.push_back(fmt::format("doctor {}: {} (fix: {})", f.id, f.summary, f.fix));
            }
        }
        return join(parts, "; ");
    }

private:
    std::string m_modprobe;  ///< modprobe's stderr from the last failed load
    std::string m_installed; ///< the driver version the last transaction installed; empty: none

    /// What is loaded instead of the module apply wants, for the reboot's evidence.
    [[nodiscard]] std::string loaded_words(const StepContext& ctx, const System& sys) const {
        if (const auto held = competing_driver_loaded(ctx.facts); !held.empty()) {
            return held + " is loaded";
        }
        const auto& branch = ctx.profile.driver->branch;
        const auto text = sys.read_file("/proc/driver/nvidia/version");
        const auto drv = text ? parse_proc_driver_version(*text) : std::nullopt;
        if (drv && !m_installed.empty() && starts_with(drv->version, branch + ".")) {
            return fmt::format("the loaded NVIDIA module is {}, not the installed {}", drv->version,
                               m_installed);
        }
        return "no NVIDIA module of branch " + branch + " is loaded" +
               (drv ? " (" + drv->version + " is)" : std::string());
    }

    /// The driver in a package version of the branch: "550.127.08" from 550.127.08-1,
    /// 550.127.08-0ubuntu1 or 3:550.127.08-1.el9; empty for another branch's or none.
    static std::string driver_of(std::string_view version, const std::string& branch) {
        if (const auto colon = version.find(':'); colon != std::string_view::npos) {
            version.remove_prefix(colon + 1);
        }
        version = version.substr(0, version.find('-'));
        return starts_with(version, branch + ".") ? std::string(version) : std::string();
    }

    /// The driver version this step's transaction installs; empty when it installs none at a
    /// known version (nothing, or the distribution's own build).
    static std::string installed_version(const CheckResult& planned, const std::string& branch) {
        for (const auto& pin : planned.installs) {
            if (auto v = driver_of(pin.version, branch); !v.empty()) {
                return v;
            }
        }
        return {};
    }

    /// The driver version the installed top-level driver packages carry; empty when unknown.
    static std::string installed_version(const StepContext& ctx) {
        for (const auto& name : root_packages(ctx)) {
            if (const auto it = ctx.facts.packages.find(name); it != ctx.facts.packages.end()) {
                if (auto v = driver_of(it->second, ctx.profile.driver->branch); !v.empty()) {
                    return v;
                }
            }
        }
        return {};
    }

    /// The rhel family: the module stream and its packages (driver_rpm.hpp), then the same
    /// holds and loaded-module judgement as on apt.
    static CheckResult check_rpm(const StepContext& ctx, const System& sys,
                                 const PackageManager& pm, CheckResult r) {
        const auto drv = rpm_driver(ctx, r);
        if (!drv) {
            return r;
        }
        check_rpm_driver(ctx, sys, pm, *drv, r);
        if (r.status == StepStatus::blocked) {
            return r;
        }
        if (!drv->modular && !ctx.profile.driver->hold) {
            r.changes.push_back(note(
                "driver.hold is false, but EL " + std::to_string(el_major(ctx.facts)) +
                " has no module streams: versionlock is the only thing that keeps dnf in the "
                "branch, so the driver is locked anyway (release it with dnf versionlock delete)"));
        }
        if (!r.installs.empty()) {
            r.hold_installs = rpm_branch_locked(ctx);
            if (const auto held = competing_driver_loaded(ctx.facts); !held.empty()) {
                r.changes.push_back(note(held + " is loaded: the driver loads after a reboot"));
            }
        }
        add_hold_changes(ctx, sys, pm, drv->packages, r);
        plan_dkms_kernels(ctx, sys, pm, r);
        if (r.status == StepStatus::satisfied && !loaded_ok(ctx)) {
            r.status = StepStatus::reboot_required;
            r.reason = not_loaded_reason(ctx);
        }
        return r;
    }

    /// A module of `branch` is loaded; exactly `version` when that is known.
    static bool module_loaded(const System& sys, const std::string& branch,
                              const std::string& version) {
        const auto text = sys.read_file("/proc/driver/nvidia/version");
        if (!text) {
            return false;
        }
        const auto drv = parse_proc_driver_version(*text);
        return drv && starts_with(drv->version, branch + ".") &&
               (version.empty() || drv->version == version);
    }

    /// The installed driver's module is the loaded one (its branch, when the version is unknown).
    static bool loaded_ok(const StepContext& ctx) {
        if (!ctx.facts.driver ||
            !starts_with(ctx.facts.driver->version, ctx.profile.driver->branch + ".")) {
            return false;
        }
        const auto installed = installed_version(ctx);
        return installed.empty() || installed == ctx.facts.driver->version;
    }

    static std::string not_loaded_reason(const StepContext& ctx) {
        if (const auto held = competing_driver_loaded(ctx.facts); !held.empty()) {
            return "driver installed; " + held + " still holds the GPUs until a reboot";
        }
        if (ctx.facts.driver) {
            const auto installed = installed_version(ctx);
            return fmt::format("driver {} is loaded but {} is installed; a reboot loads it",
                               ctx.facts.driver->version,
                               installed.empty() ? "branch " + ctx.profile.driver->branch
                                                 : installed);
        }
        return "driver installed but its kernel module is not loaded";
    }

    static void add_hold_changes(const StepContext& ctx, const System& sys,
                                 const PackageManager& pm, const std::vector<std::string>& pkgs,
                                 CheckResult& r) {
        const auto& d = *ctx.profile.driver;
        auto to_hold = driver_unheld(ctx, sys, pm, pkgs);
        const auto kernel = kernel_unheld(d, ctx.facts, sys, pm);
        to_hold.insert(to_hold.end(), kernel.begin(), kernel.end());
        if (!to_hold.empty()) {
            r.changes.push_back(command_change(pm.hold(to_hold),
                                               "keep unattended upgrades from moving the driver"));
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
    }
};

} // namespace

std::unique_ptr<Step> make_driver() {
    return std::make_unique<Driver>();
}

} // namespace gpuprov::steps
