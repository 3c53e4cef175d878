// monitoring: a systemd timer that runs `gpuprov metrics --textfile DIR` every minute for
// node_exporter's textfile collector.
#include "packages_step.hpp"
#include "steps.hpp"
#include "unit_link.hpp"

#include <fmt/format.h>

namespace gpuprov::steps {

namespace {

constexpr const char* kTimer = "gpuprov-metrics.timer";
constexpr const char* kTimerTarget = "timers.target"; // the timer unit's WantedBy=

std::vector<ManagedFile> units(const StepContext& ctx) {
    const auto& dir = ctx.profile.monitoring->textfile_dir;
    return {
        {"/etc/systemd/system/gpuprov-metrics.service",
         fmt::format("{}[Unit]\nDescription=gpuprov GPU metrics for the node_exporter textfile "
                     "collector\n\n[Service]\nType=oneshot\nExecStart={} metrics --textfile {} "
                     "--temperature-alert-c {}\n",
                     kManagedHeader, ctx.gpuprov_path, dir,
                     ctx.profile.monitoring->temperature_alert_c)},
        {"/etc/systemd/system/gpuprov-metrics.timer",
         fmt::format("{}[Unit]\nDescription=Refresh gpuprov GPU metrics every minute\n\n"
                     "[Timer]\nOnBootSec=30s\nOnUnitActiveSec=60s\n\n[Install]\n"
                     "WantedBy=timers.target\n",
                     kManagedHeader)},
    };
}

class Monitoring final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "monitoring"; }
    [[nodiscard]] std::string_view summary() const override {
        return "Prometheus textfile metrics timer";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.monitoring) {
            r.status = StepStatus::skipped;
            r.reason = "profile has no monitoring section";
            return r;
        }
        for (const auto& f : units(ctx)) {
            require_file(sys, f, r);
        }
        if (!sys.is_dir(ctx.profile.monitoring->textfile_dir)) {
            r.changes.push_back(note("create " + ctx.profile.monitoring->textfile_dir));
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
        // Enabled means the wants link points at the unit file just checked, not any link.
        if (const auto problem = unit_link_problem(sys, kTimer, kTimerTarget); !problem.empty()) {
            r.changes.push_back(Change{.kind = Change::Kind::service,
                                       .target = kTimer,
                                       .detail = "enable and start (" + problem + ")"});
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        sys.make_dirs(ctx.profile.monitoring->textfile_dir);
        for (const auto& f : units(ctx)) {
            write_managed(sys, f);
        }
        if (have_systemctl(sys)) {
            (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
        }
        ensure_unit_enabled(sys, kTimer, true, kTimerTarget);
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.monitoring) {
            return {};
        }
        const auto problem = unit_link_problem(sys, kTimer, kTimerTarget);
        const bool ok = problem.empty();
        return {CheckOutcome{
            .id = "monitoring.timer",
            .step = "monitoring",
            .passed = ok,
            .command = "/etc/systemd/system/timers.target.wants/" + std::string(kTimer),
            .expected = "enabled (linked to /etc/systemd/system/" + std::string(kTimer) + ")",
            .found = ok ? "enabled" : "not enabled: " + problem,
            .fix = ok ? "" : "gpuprov apply PROFILE --only monitoring"}};
    }
};

} // namespace

std::unique_ptr<Step> make_monitoring() {
    return std::make_unique<Monitoring>();
}

} // namespace gpuprov::steps
