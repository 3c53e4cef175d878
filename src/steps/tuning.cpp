// tuning: persistence mode through nvidia-persistenced, the way NVIDIA's driver role sets it,
// so it survives reboots (nvidia-smi -pm 1 does not).
#include "packages_step.hpp"
#include "steps.hpp"
#include "unit_link.hpp"

#include <gpuprov/checks.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kPersistencedUnit = "nvidia-persistenced.service";

ManagedFile dropin() {
    // NVIDIA/ansible-role-nvidia-driver files/nvidia-persistenced-override.conf.
    return {"/etc/systemd/system/nvidia-persistenced.service.d/gpuprov.conf",
            std::string(kManagedHeader) +
                "[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced --user root "
                "--persistence-mode --verbose\n"};
}

class Tuning final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "tuning"; }
    [[nodiscard]] std::string_view summary() const override {
        return "persistence mode via nvidia-persistenced";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.tuning.persistence_mode) {
            r.status = StepStatus::skipped;
            r.reason = "profile asks for no tuning";
            return r;
        }
        require_file(sys, dropin(), r);
        if (const auto problem = unit_link_problem(sys, kPersistencedUnit); !problem.empty()) {
            r.changes.push_back(Change{.kind = Change::Kind::service,
                                       .target = kPersistencedUnit,
                                       .detail = "enable and start (" + problem + ")"});
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
        return r;
    }

    StepStatus apply(const StepContext&, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        write_managed(sys, dropin());
        if (have_systemctl(sys)) {
            (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
        }
        // The daemon needs the loaded module: while the driver waits for its reboot the unit is
        // only enabled, and the boot starts it (starting it now fails, as the real one does).
        ensure_unit_enabled(sys, kPersistencedUnit, sys.exists("/proc/driver/nvidia/version"));
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.tuning.persistence_mode) {
            return {};
        }
        return check_persistence({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_tuning() {
    return std::make_unique<Tuning>();
}

} // namespace gpuprov::steps
