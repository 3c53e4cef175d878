// readiness: gpuprov-ready.service, the gate that holds kubelet and slurmd at boot until the
// GPUs answer (docs/upgrade.md#readiness-gate). A oneshot with RemainAfterExit (systemd.service
// (5): it stays "active" once it exited, so units ordered after it start once), ordered
// Before= kubelet and slurmd and wanted by them (systemd.unit(5): Before= makes them wait until
// a oneshot finished starting). It runs `gpuprov verify PROFILE --quick --wait N`, which retries
// the quick checks (driver loaded, GPUs present, MIG layout) until they pass or N seconds went
// by, and says which in the system journal (SyslogIdentifier=gpuprov-ready).
#include "common.hpp"
#include "packages_step.hpp"
#include "steps.hpp"
#include "unit_link.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kReadyUnit = "gpuprov-ready.service";
constexpr const char* kReadyUnitPath = "/etc/systemd/system/gpuprov-ready.service";

/// The profile the unit names at boot: a built-in by name; a file by the copy apply installs
/// under /etc/gpuprov/resume/ (installed_profile_path(); profile names are [a-z0-9-] already,
/// so the path is the name's).
std::string units_profile(const StepContext& ctx) {
    if (starts_with(ctx.profile.source, "builtin:")) {
        return ctx.profile.name;
    }
    return "/etc/gpuprov/resume/" + ctx.profile.name + ".yaml";
}

ManagedFile unit(const StepContext& ctx) {
    const int wait = ctx.profile.readiness->timeout_s;
    return {kReadyUnitPath,
            fmt::format("{}[Unit]\n"
                        "Description=Hold kubelet and slurmd until the GPUs are ready (gpuprov "
                        "verify --quick)\n"
                        "After=systemd-modules-load.service nvidia-persistenced.service "
                        "nvidia-fabricmanager.service gpuprov-mig.service\n"
                        "Before=kubelet.service slurmd.service\n\n"
                        "[Service]\n"
                        "Type=oneshot\n"
                        "RemainAfterExit=yes\n"
                        "ExecStart={} verify {} --quick --wait {}\n"
                        // The wait, and a minute for the last round of checks.
                        "TimeoutStartSec={}\n"
                        "StandardOutput=journal+console\n"
                        "SyslogIdentifier=gpuprov-ready\n\n"
                        "[Install]\n"
                        "WantedBy=multi-user.target\n"
                        "WantedBy=kubelet.service\n"
                        "WantedBy=slurmd.service\n",
                        kManagedHeader, ctx.gpuprov_path, units_profile(ctx), wait, wait + 60)};
}

class Readiness final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "readiness"; }
    [[nodiscard]] std::string_view summary() const override {
        return "gpuprov-ready.service: kubelet and slurmd wait at boot until verify --quick "
               "passes";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.readiness) {
            r.status = StepStatus::skipped;
            r.reason = "profile asks for no readiness gate";
            return r;
        }
        require_file(sys, unit(ctx), r);
        require_unit(sys, kReadyUnit, r);
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure || !ctx.profile.readiness) {
            return StepStatus::done;
        }
        write_managed(sys, unit(ctx));
        if (have_systemctl(sys)) {
            (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
        }
        // Enabled, not started: it gates the next boot; this one's kubelet already runs.
        ensure_unit_enabled(sys, kReadyUnit, false);
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.readiness) {
            return {};
        }
        CheckOutcome c;
        c.id = "readiness.unit";
        c.step = "readiness";
        c.command = std::string("cat ") + kReadyUnitPath;
        c.expected = fmt::format("{} as gpuprov writes it, enabled", kReadyUnit);
        const auto problem = unit_link_problem(sys, kReadyUnit);
        c.passed = file_matches(sys, unit(ctx)) && problem.empty();
        c.found = c.passed                        ? "written and enabled"
                  : !file_matches(sys, unit(ctx)) ? "missing or changed"
                                                  : problem;
        if (!c.passed) {
            c.fix = "sudo gpuprov apply PROFILE --only readiness";
        }
        return {c};
    }
};

} // namespace

std::unique_ptr<Step> make_readiness() {
    return std::make_unique<Readiness>();
}

} // namespace gpuprov::steps
