// fabric-manager: NVSwitch systems (HGX/DGX) need nvidia-fabricmanager of exactly the driver's
// version, or CUDA sees no GPUs (NVIDIA fabric manager user guide; yum-packaging-fabric-manager).
#include "driver_rpm.hpp"
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kUnit = "nvidia-fabricmanager.service";

bool needed(const StepContext& ctx) {
    return fabric_manager_wanted(ctx.profile, ctx.facts);
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
        const PackageVars vars{.branch = ctx.profile.driver->branch};
        const auto packages = expand_package_names(names->fabric_manager, vars);
        // Must equal the driver's version exactly: follow the installed driver when there is
        // one. An rpm's epoch and release belong to its own packaging, so on dnf the upstream
        // version is what must agree (nvidia-driver 3:580.95.05-1.el9 ~ 580.95.05-1).
        const auto driver_version =
            pm->installed(sys, expand_package_name(names->fabric_manager_version_from, vars));
        auto prefix = ctx.profile.driver->branch + ".";
        auto match = VersionMatch::prefix;
        if (driver_version) {
            prefix = names->fabric_manager_exact ? *driver_version
                                                 : upstream_version(*driver_version) + "-";
            match = names->fabric_manager_exact ? VersionMatch::exact : VersionMatch::prefix;
        }
        if (!all_installed(sys, *pm, packages, prefix, match)) {
            const auto* index = index_or_block(ctx, "cuda", r);
            if (index == nullptr) {
                return r;
            }
            const auto pins = pin_with_prefix(*index, packages, prefix, r, "CUDA", match);
            if (!pins) {
                return r;
            }
            plan_installs(r, sys, *pm, *pins);
            // On dnf they are the nvidia-driver module's (its /fm profile): the driver's stream
            // has to be on for dnf to see them.
            if (ctx.facts.os.family == "rhel" && !r.installs.empty()) {
                const auto drv = rpm_driver(ctx, r);
                if (const auto m = drv ? stream_to_enable(ctx, *drv) : std::nullopt) {
                    r.modules.push_back(*m);
                }
            }
        }
        require_unit(sys, kUnit, r);
        return r;
    }

    StepStatus apply(const StepContext&, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase == ApplyPhase::configure && !unit_enabled(sys, kUnit)) {
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
