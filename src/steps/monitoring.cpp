// monitoring: a systemd timer that runs `gpuprov metrics --textfile DIR` every minute for
// node_exporter's textfile collector; with monitoring.node_exporter, the distro's
// prometheus-node-exporter reading DIR.
#include "node_exporter_args.hpp"
#include "packages_step.hpp"
#include "steps.hpp"
#include "unit_link.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

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

constexpr const char* kNodeExporterPackage = "prometheus-node-exporter";
constexpr const char* kNodeExporterUnit = "prometheus-node-exporter.service";

bool wants_node_exporter(const StepContext& ctx) {
    return ctx.profile.monitoring && ctx.profile.monitoring->node_exporter;
}

/// The defaults file as it should be, from what is there (nothing before the package is
/// installed: the merge then starts from an empty file).
NodeExporterArgs node_exporter_args(const StepContext& ctx, const System& sys) {
    return merge_node_exporter_args(sys.read_file(kNodeExporterDefaults).value_or(""),
                                    ctx.profile.monitoring->textfile_dir);
}

void check_node_exporter(const StepContext& ctx, const System& sys, CheckResult& r) {
    // Debian and Ubuntu package it with ARGS in /etc/default; EL has no such package in its
    // own repositories.
    if (ctx.facts.os.family == "rhel") {
        r.status = StepStatus::blocked;
        r.reason = "monitoring.node_exporter installs Debian/Ubuntu's prometheus-node-exporter; "
                   "this host's distribution does not ship it. Install node_exporter yourself "
                   "with --collector.textfile.directory=" +
                   ctx.profile.monitoring->textfile_dir +
                   " and set monitoring.node_exporter: false";
        return;
    }
    auto pm = package_manager_or_block(ctx, r);
    if (!pm) {
        return;
    }
    const bool installed = pm->installed(sys, kNodeExporterPackage).has_value();
    if (!installed) {
        plan_installs(r, sys, *pm, {{kNodeExporterPackage, ""}});
    }
    const auto args = node_exporter_args(ctx, sys);
    if (!args.problem.empty()) {
        r.status = StepStatus::blocked;
        r.reason = args.problem;
        return;
    }
    if (args.changed) {
        // Before the install the package's own file is not there yet: the edit is made to it.
        r.changes.push_back(installed ? file_change(sys, {kNodeExporterDefaults, args.content})
                                      : note(fmt::format("after the install, ARGS in {} gets "
                                                         "--collector.textfile.directory={}",
                                                         kNodeExporterDefaults,
                                                         ctx.profile.monitoring->textfile_dir)));
        if (r.status == StepStatus::satisfied) {
            r.status = StepStatus::pending;
        }
    }
}

void apply_node_exporter(const StepContext& ctx, System& sys) {
    // After the package phase: the package's own defaults file is there to merge into.
    const auto args = node_exporter_args(ctx, sys);
    if (!args.problem.empty()) {
        throw HostError(args.problem);
    }
    if (!args.changed) {
        return;
    }
    write_managed(sys, {kNodeExporterDefaults, args.content});
    if (have_systemctl(sys)) {
        // ARGS is read at start; a running exporter keeps its old directory until restarted.
        const auto r =
            sys.run({.argv = {"systemctl", "try-restart", kNodeExporterUnit}, .timeout = 60s});
        if (!r.ok()) {
            throw HostError(fmt::format("systemctl try-restart {} failed (exit {}): {}",
                                        kNodeExporterUnit, r.exit_code,
                                        std::string(trim(tail_lines(r.err, 4)))));
        }
    }
}

CheckOutcome verify_node_exporter(const StepContext& ctx, const System& sys) {
    const auto& want = ctx.profile.monitoring->textfile_dir;
    const auto file = sys.read_file(kNodeExporterDefaults);
    const auto dir = file ? node_exporter_textfile_dir(*file) : std::nullopt;
    const bool ok = file && dir == want;
    return CheckOutcome{
        .id = "monitoring.node_exporter",
        .step = "monitoring",
        .passed = ok,
        .command = kNodeExporterDefaults,
        .expected = "prometheus-node-exporter installed, its textfile collector reading " + want,
        .found = !file ? "no " + std::string(kNodeExporterDefaults) +
                             " (prometheus-node-exporter not installed)"
                 : !dir ? "ARGS that gpuprov cannot read"
                        : "textfile collector reads " + *dir,
        .fix = ok ? "" : "gpuprov apply PROFILE --only monitoring"};
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
        if (wants_node_exporter(ctx)) {
            check_node_exporter(ctx, sys, r);
            if (r.status == StepStatus::blocked) {
                return r;
            }
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
        if (wants_node_exporter(ctx)) {
            apply_node_exporter(ctx, sys);
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.monitoring) {
            return {};
        }
        const auto problem = unit_link_problem(sys, kTimer, kTimerTarget);
        const bool ok = problem.empty();
        std::vector<CheckOutcome> out{CheckOutcome{
            .id = "monitoring.timer",
            .step = "monitoring",
            .passed = ok,
            .command = "/etc/systemd/system/timers.target.wants/" + std::string(kTimer),
            .expected = "enabled (linked to /etc/systemd/system/" + std::string(kTimer) + ")",
            .found = ok ? "enabled" : "not enabled: " + problem,
            .fix = ok ? "" : "gpuprov apply PROFILE --only monitoring"}};
        if (wants_node_exporter(ctx)) {
            out.push_back(verify_node_exporter(ctx, sys));
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_monitoring() {
    return std::make_unique<Monitoring>();
}

} // namespace gpuprov::steps
