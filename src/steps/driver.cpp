// driver: the branch's packages from NVIDIA's repository, held against unattended upgrades,
// loaded now or after the reboot that nouveau forces.
#include "common.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

// Package names: CUDA installation guide, "Driver Installation" (cuda-drivers-<branch>;
// nvidia-driver-<branch>-open on Ubuntu, nvidia-kernel-open-dkms on Debian for the open
// modules); Ubuntu's server branch is Canonical's nvidia-driver-<branch>-server.
struct DriverPackages {
    std::vector<std::string> from_nvidia; ///< pinned to the branch from NVIDIA's index
    std::vector<std::string> from_distro; ///< installed at the distribution's version
};

DriverPackages packages_for(const DriverSpec& d, const HostFacts& facts) {
    const auto cuda_drivers = "cuda-drivers-" + d.branch;
    if (d.flavor == "open") {
        if (facts.os.id == "ubuntu") {
            return {{"nvidia-driver-" + d.branch + "-open", cuda_drivers}, {}};
        }
        return {{"nvidia-kernel-open-dkms", cuda_drivers}, {}};
    }
    if (d.flavor == "server") {
        return {{}, {"nvidia-driver-" + d.branch + "-server"}};
    }
    return {{cuda_drivers}, {}};
}

std::vector<std::string> all_packages(const DriverPackages& p) {
    auto all = p.from_nvidia;
    all.insert(all.end(), p.from_distro.begin(), p.from_distro.end());
    return all;
}

std::vector<std::string> kernel_packages(const HostFacts& facts) {
    return {"linux-image-" + facts.kernel, "linux-headers-" + facts.kernel};
}

/// The driver packages `hold: true` still has to hold.
std::vector<std::string> driver_unheld(const DriverSpec& d, const System& sys,
                                       const PackageManager& pm,
                                       const std::vector<std::string>& pkgs) {
    std::vector<std::string> out;
    if (d.hold) {
        for (const auto& p : pkgs) {
            if (!pm.held(sys, p)) {
                out.push_back(p);
            }
        }
    }
    return out;
}

/// The running kernel's installed packages `hold_kernel: true` still has to hold.
std::vector<std::string> kernel_unheld(const DriverSpec& d, const HostFacts& facts,
                                       const System& sys, const PackageManager& pm) {
    std::vector<std::string> out;
    if (d.hold_kernel) {
        for (const auto& p : kernel_packages(facts)) {
            if (pm.installed(sys, p) && !pm.held(sys, p)) {
                out.push_back(p);
            }
        }
    }
    return out;
}

class Driver final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "driver"; }
    [[nodiscard]] std::string_view summary() const override {
        return "NVIDIA driver branch, held; loaded now or after reboot";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.driver) {
            r.status = StepStatus::skipped;
            r.reason = "profile has no driver section";
            return r;
        }
        const auto& d = *ctx.profile.driver;
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        if (d.flavor == "server" && ctx.facts.os.id != "ubuntu") {
            r.status = StepStatus::blocked;
            r.reason = "flavor 'server' (nvidia-driver-<branch>-server) exists only in Ubuntu's "
                       "archive; use proprietary or open";
            return r;
        }
        const auto pkgs = packages_for(d, ctx.facts);
        const auto prefix = d.branch + ".";
        if (!all_installed(sys, *pm, pkgs.from_nvidia, prefix) ||
            !all_installed(sys, *pm, pkgs.from_distro)) {
            const PackageIndex* index = nullptr;
            if (!pkgs.from_nvidia.empty() && (index = index_or_block(ctx, "cuda", r)) == nullptr) {
                return r;
            }
            std::vector<PackagePin> pins;
            for (const auto& name : pkgs.from_nvidia) {
                const auto* rec = index->newest_with_prefix(name, prefix);
                if (rec == nullptr) {
                    r.status = StepStatus::blocked;
                    r.reason =
                        fmt::format("the CUDA repository has no {} of branch {}", name, d.branch);
                    return r;
                }
                pins.push_back({name, rec->version});
            }
            for (const auto& name : pkgs.from_distro) {
                pins.push_back({name, ""});
            }
            plan_installs(r, sys, *pm, pins);
            if (ctx.facts.nouveau_loaded) {
                r.changes.push_back(note("nouveau is loaded: the driver loads after a reboot"));
            }
        }
        add_hold_changes(ctx, sys, *pm, all_packages(pkgs), r);
        if (r.status == StepStatus::satisfied && !loaded_ok(ctx)) {
            r.status = StepStatus::reboot_required;
            r.reason = not_loaded_reason(ctx);
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        const auto& d = *ctx.profile.driver;
        const auto pm = make_package_manager(ctx.facts);
        const auto pkgs = all_packages(packages_for(d, ctx.facts));
        if (const auto unheld = driver_unheld(d, sys, *pm, pkgs); !unheld.empty()) {
            run_checked(sys, pm->hold(unheld));
        }
        if (!module_loaded(sys, d.branch)) {
            if (ctx.facts.nouveau_loaded || sys.exists("/sys/module/nouveau")) {
                return StepStatus::reboot_required;
            }
            // Without nouveau in the way the module usually loads on demand; try once.
            (void)sys.run({.argv = {"modprobe", "nvidia"}, .timeout = 120s});
            if (!module_loaded(sys, d.branch)) {
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
        return check_driver({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }

private:
    static bool module_loaded(const System& sys, const std::string& branch) {
        const auto text = sys.read_file("/proc/driver/nvidia/version");
        if (!text) {
            return false;
        }
        const auto drv = parse_proc_driver_version(*text);
        return drv && starts_with(drv->version, branch + ".");
    }

    static bool loaded_ok(const StepContext& ctx) {
        return ctx.facts.driver &&
               starts_with(ctx.facts.driver->version, ctx.profile.driver->branch + ".");
    }

    static std::string not_loaded_reason(const StepContext& ctx) {
        if (ctx.facts.nouveau_loaded) {
            return "driver installed; nouveau still holds the GPUs until a reboot";
        }
        if (ctx.facts.driver) {
            return fmt::format("driver {} is loaded but branch {} is installed; a reboot loads it",
                               ctx.facts.driver->version, ctx.profile.driver->branch);
        }
        return "driver installed but its kernel module is not loaded";
    }

    static void add_hold_changes(const StepContext& ctx, const System& sys,
                                 const PackageManager& pm, const std::vector<std::string>& pkgs,
                                 CheckResult& r) {
        const auto& d = *ctx.profile.driver;
        auto to_hold = driver_unheld(d, sys, pm, pkgs);
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
