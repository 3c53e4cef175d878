// fabric-manager: NVSwitch systems (HGX/DGX) need nvidia-fabricmanager of exactly the driver's
// version, or CUDA sees no GPUs (NVIDIA fabric manager user guide; yum-packaging-fabric-manager).
#include "driver_apt.hpp"
#include "driver_rpm.hpp"
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kUnit = "nvidia-fabricmanager.service";

bool needed(const StepContext& ctx) {
    return fabric_manager_wanted(ctx.profile, ctx.facts);
}

/// Installed packages of `names` that are not held yet.
std::vector<std::string> unheld_of(const System& sys, const PackageManager& pm,
                                   const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& n : names) {
        if (pm.installed(sys, n) && !pm.held(sys, n)) {
            out.push_back(n);
        }
    }
    return out;
}

class FabricManager final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "fabric-manager"; }
    [[nodiscard]] std::string_view summary() const override {
        return "Fabric Manager for NVSwitch systems, same version as the driver";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!needed(ctx) || !ctx.profile.driver) {
            r.status = StepStatus::skipped;
            r.reason = !ctx.profile.driver ? "profile has no driver section"
                                           : "no NVSwitch on this host (fabric_manager: auto)";
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        const auto* names = package_names_or_block(ctx, r);
        if (names == nullptr) {
            return r;
        }
        const auto& branch = ctx.profile.driver->branch;
        const auto packages =
            names->fabric_manager_for(static_cast<int>(parse_int(branch).value_or(0)));
        if (packages.empty()) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("gpuprov's version matrix names no fabric manager packages for "
                                   "branch {} ({} family)",
                                   branch, ctx.facts.os.family);
            return r;
        }
        // Its version must equal the driver's (NVIDIA's fabric manager guide): the driver the
        // driver step installed or is about to install; each package's epoch and release are
        // its own (nvidia-fabricmanager 580.95.05-1 goes with nvidia-driver 3:580.95.05-1.el9).
        const auto driver = ctx.facts.os.family == "rhel" ? rpm_driver_target_version(ctx, sys, *pm)
                                                          : driver_target_version(ctx, sys, *pm);
        const auto prefix = driver.empty() ? branch + "." : driver + "-";
        if (!all_installed(sys, *pm, packages, prefix)) {
            const auto* index = index_or_block(ctx, "cuda", r);
            if (index == nullptr) {
                return r;
            }
            const auto pins = pin_with_prefix(*index, packages, prefix, r, "CUDA");
            if (!pins) {
                return r;
            }
            plan_installs(r, sys, *pm, *pins);
            // Held with the driver where apt-mark holds are the branch lock (names that carry
            // the branch), so an unattended upgrade moves neither.
            r.hold_installs = apt_driver_holds(ctx);
            // On dnf they are the nvidia-driver module's (its /fm profile): the driver's stream
            // has to be on for dnf to see them.
            if (ctx.facts.os.family == "rhel" && !r.installs.empty()) {
                const auto drv = rpm_driver(ctx, r);
                if (const auto m = drv ? stream_to_enable(ctx, *drv) : std::nullopt) {
                    r.modules.push_back(*m);
                }
            }
        }
        if (apt_driver_holds(ctx)) {
            if (const auto unheld = unheld_of(sys, *pm, packages); !unheld.empty()) {
                r.changes.push_back(command_change(
                    pm->hold(unheld), "held with the driver: its version must equal the driver's"));
                if (r.status == StepStatus::satisfied) {
                    r.status = StepStatus::pending;
                }
            }
        }
        require_unit(sys, kUnit, r);
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        if (apt_driver_holds(ctx)) {
            const auto pm = make_package_manager(ctx.facts);
            const auto* names = ctx.matrix.package_names(ctx.facts.os.family);
            const auto packages = names == nullptr
                                      ? std::vector<std::string>{}
                                      : names->fabric_manager_for(static_cast<int>(
                                            parse_int(ctx.profile.driver->branch).value_or(0)));
            if (const auto unheld = unheld_of(sys, *pm, packages); !unheld.empty()) {
                run_checked(sys, pm->hold(unheld));
            }
        }
        if (!unit_enabled(sys, kUnit)) {
            enable_unit(sys, kUnit, true);
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!needed(ctx)) {
            return {};
        }
        return check_fabric_manager({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_fabric_manager() {
    return std::make_unique<FabricManager>();
}

} // namespace gpuprov::steps
