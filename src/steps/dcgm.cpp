// dcgm (`monitoring.dcgm`): NVIDIA's DCGM 4 from the CUDA repository, the nvidia-dcgm host
// engine enabled and running, and with `monitoring.dcgm_exporter` a unit running an installed
// dcgm-exporter against it (docs/dcgm.md). A step of its own, not part of `monitoring`: it has
// its own packages in the one apt/dnf transaction, its own service, and `--only dcgm` /
// `--skip dcgm` let an operator move it alone; the monitoring section's metrics timer stays as
// it was.
//
// The packages: datacenter-gpu-manager-4-{core,cuda<N>,proprietary,proprietary-cuda<N>} at one
// version, the newest the CUDA repository's verified index has for all four (they Depend on each
// other's exact version); <N> the CUDA major of the driver (dcgm_pick.hpp). Sources in
// src/data/nvidia-matrix.yaml (`packages.<family>.dcgm`).
#include "dcgm_pick.hpp"
#include "packages_step.hpp"
#include "steps.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>

namespace gpuprov::steps {

namespace {

/// The host engine's unit, as NVIDIA's packages ship it (install guide: `systemctl --now enable
/// nvidia-dcgm`).
constexpr const char* kDcgmUnit = "nvidia-dcgm.service";
/// The name systemctl's is-active takes (it adds .service).
constexpr const char* kUnitName = "nvidia-dcgm";
constexpr const char* kExporterUnit = "gpuprov-dcgm-exporter.service";
constexpr const char* kExporterUnitName = "gpuprov-dcgm-exporter";
constexpr const char* kExporterUnitPath = "/etc/systemd/system/gpuprov-dcgm-exporter.service";
/// Where `make install` of github.com/NVIDIA/dcgm-exporter (its Makefile's install target:
/// /usr/bin) and a hand-copied release binary usually land.
constexpr const char* kExporterPaths[] = {"/usr/bin/dcgm-exporter", "/usr/local/bin/dcgm-exporter"};

bool wanted(const StepContext& ctx) {
    return ctx.profile.monitoring && ctx.profile.monitoring->dcgm;
}

bool exporter_wanted(const StepContext& ctx) {
    return wanted(ctx) && ctx.profile.monitoring->dcgm_exporter;
}

std::string exporter_binary(const System& sys) {
    for (const auto* p : kExporterPaths) {
        if (sys.exists(p)) {
            return p;
        }
    }
    return {};
}

/// The exporter connects to the standalone host engine nvidia-dcgm runs (dcgm-exporter's
/// `-r/--remote-hostengine-info`, default port 5555) instead of starting an embedded engine
/// beside it; it starts after the engine and stops with it.
ManagedFile exporter_unit(const std::string& binary) {
    return {kExporterUnitPath,
            fmt::format("{}[Unit]\nDescription=NVIDIA dcgm-exporter (Prometheus metrics from "
                        "DCGM, port 9400)\nAfter={}\nRequires={}\n\n[Service]\nExecStart={} -r "
                        "localhost:5555\nRestart=on-failure\n\n[Install]\nWantedBy=multi-user."
                        "target\n",
                        kManagedHeader, kDcgmUnit, kDcgmUnit, binary)};
}

/// `systemctl is-active UNIT` says active; false where systemctl cannot say.
bool unit_active(const System& sys, std::string_view unit) {
    if (!have_systemctl(sys)) {
        return false;
    }
    const auto r =
        sys.query({.argv = {"systemctl", "is-active", std::string(unit)}, .timeout = 30s});
    return r.ok() && trim(r.out) == "active";
}

struct Wanted {
    std::vector<std::string> packages;
    std::string because;
};

/// The package names for this host, or nullopt with `r` blocked and why.
std::optional<Wanted> wanted_packages(const StepContext& ctx, CheckResult& r) {
    const auto* names = package_names_or_block(ctx, r);
    if (names == nullptr) {
        return std::nullopt;
    }
    const auto& dcgm = names->dcgm;
    if (dcgm.empty()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("gpuprov's version matrix names no DCGM packages for the {} family",
                               ctx.facts.os.family);
        return std::nullopt;
    }
    if (ctx.profile.driver) {
        const auto branch = parse_int(ctx.profile.driver->branch).value_or(0);
        if (branch < dcgm.min_branch) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("DCGM needs driver branch {} or newer (NVIDIA's DCGM install "
                                   "guide); the profile installs {}",
                                   dcgm.min_branch, ctx.profile.driver->branch);
            return std::nullopt;
        }
    }
    const auto major = dcgm_cuda_major(ctx.profile, ctx.facts, ctx.matrix);
    if (major.major == 0) {
        r.status = StepStatus::blocked;
        r.reason = major.problem;
        return std::nullopt;
    }
    if (std::find(dcgm.cuda_majors.begin(), dcgm.cuda_majors.end(), major.major) ==
        dcgm.cuda_majors.end()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("NVIDIA builds DCGM 4 for no CUDA {} driver ({})", major.major,
                               major.because);
        return std::nullopt;
    }
    return Wanted{dcgm_packages(dcgm, major.major),
                  fmt::format("DCGM for CUDA {}: {}", major.major, major.because)};
}

/// The one version every package is installed at; empty when one is missing or they differ.
std::string installed_version(const System& sys, const PackageManager& pm,
                              const std::vector<std::string>& packages) {
    std::string version;
    for (const auto& p : packages) {
        const auto v = pm.installed(sys, p);
        if (!v || (!version.empty() && *v != version)) {
            return {};
        }
        version = *v;
    }
    return version;
}

void plan_exporter(const System& sys, CheckResult& r) {
    const auto binary = exporter_binary(sys);
    if (binary.empty()) {
        r.status = StepStatus::blocked;
        r.reason = "monitoring.dcgm_exporter: no dcgm-exporter in /usr/bin or /usr/local/bin. "
                   "NVIDIA publishes it as a container image (nvcr.io/nvidia/k8s/dcgm-exporter) "
                   "and as source (github.com/NVIDIA/dcgm-exporter: make binary && make "
                   "install), not in its CUDA repository; install the binary, or set "
                   "monitoring.dcgm_exporter: false and run the container";
        return;
    }
    require_file(sys, exporter_unit(binary), r);
    require_unit(sys, kExporterUnit, r);
}

void apply_exporter(System& sys) {
    const auto binary = exporter_binary(sys);
    if (binary.empty()) {
        throw HostError("dcgm-exporter is not in /usr/bin or /usr/local/bin any more");
    }
    const auto unit = exporter_unit(binary);
    const bool changed = !file_matches(sys, unit);
    write_managed(sys, unit);
    if (have_systemctl(sys)) {
        (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
    }
    if (!unit_enabled(sys, kExporterUnit)) {
        enable_unit(sys, kExporterUnit, true);
    } else if (changed && have_systemctl(sys)) {
        run_checked(sys, {.argv = {"systemctl", "restart", kExporterUnit}, .timeout = 120s});
    }
}

CheckOutcome verify_packages(const StepContext& ctx, const System& sys) {
    CheckOutcome o{.id = "dcgm.packages", .step = "dcgm"};
    CheckResult scratch;
    const auto want = wanted_packages(ctx, scratch);
    const auto pm = make_package_manager(ctx.facts);
    o.command = pm ? "the package database" : "";
    if (!want || !pm) {
        o.expected = "DCGM's packages for this host";
        o.found = scratch.reason.empty() ? "no package manager" : scratch.reason;
        o.fix = "fix the profile or the matrix as the reason says";
        return o;
    }
    o.expected = join(want->packages, ", ") + " installed at one version (" + want->because + ")";
    const auto v = installed_version(sys, *pm, want->packages);
    o.passed = !v.empty();
    o.found = o.passed ? "all at " + v : "missing, or at different versions";
    o.fix = o.passed ? "" : "gpuprov apply PROFILE --only dcgm";
    return o;
}

CheckOutcome verify_hostengine(const System& sys) {
    const bool ok = unit_active(sys, kUnitName);
    return CheckOutcome{.id = "dcgm.hostengine",
                        .step = "dcgm",
                        .passed = ok,
                        .command = std::string("systemctl is-active ") + kUnitName,
                        .expected = "active (nv-hostengine running)",
                        .found = ok ? "active" : "not active",
                        .fix = ok ? ""
                                  : "systemctl start nvidia-dcgm; `journalctl -u nvidia-dcgm` says "
                                    "why nv-hostengine stopped (it needs the driver loaded)"};
}

/// `dcgmi discovery -l` through the host engine: its first line counts the GPUs ("1 GPU found.",
/// "8 GPUs found."; NVIDIA's DCGM guide, Getting Started).
CheckOutcome verify_discovery(const StepContext& ctx, const System& sys) {
    CheckOutcome o{.id = "dcgm.discovery",
                   .step = "dcgm",
                   .command = "dcgmi discovery -l",
                   .expected = fmt::format("DCGM lists the {} GPU{} on PCI", ctx.facts.gpus.size(),
                                           ctx.facts.gpus.size() == 1 ? "" : "s")};
    const auto r = sys.query({.argv = {"dcgmi", "discovery", "-l"}, .timeout = 60s});
    const auto all = r.out + r.err;
    const auto all_lines = lines(all);
    std::vector<std::string> head;
    for (std::size_t i = 0; i < all_lines.size() && i < 3; ++i) {
        head.push_back(all_lines[i]);
    }
    o.excerpt = join(head, "\n");
    if (!r.ok()) {
        o.found = r.not_found ? "dcgmi is not installed"
                              : fmt::format("exit status {}: {}", r.exit_code,
                                            std::string(trim(tail_lines(all, 2))));
        o.fix = "gpuprov apply PROFILE --only dcgm; dcgmi talks to nv-hostengine "
                "(nvidia-dcgm.service) on localhost:5555";
        return o;
    }
    std::optional<long long> count;
    for (const auto& line : lines(r.out)) {
        const auto w = split_words(line);
        if (w.size() == 3 && (w[1] == "GPU" || w[1] == "GPUs") && w[2] == "found.") {
            count = parse_int(w[0]);
            break;
        }
    }
    const auto want = static_cast<long long>(ctx.facts.gpus.size());
    o.passed = count && *count == want;
    o.found = count ? fmt::format("{} GPU{}", *count, *count == 1 ? "" : "s")
                    : "no \"N GPUs found.\" line";
    o.fix = o.passed ? "" : "`gpuprov doctor` explains GPUs the driver does not list";
    return o;
}

class Dcgm final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "dcgm"; }
    [[nodiscard]] std::string_view summary() const override {
        return "NVIDIA DCGM and its host engine (monitoring.dcgm)";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!wanted(ctx)) {
            r.status = StepStatus::skipped;
            r.reason = "profile does not set monitoring.dcgm";
            return r;
        }
        const auto want = wanted_packages(ctx, r);
        if (!want) {
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        if (installed_version(sys, *pm, want->packages).empty()) {
            const auto* index = index_or_block(ctx, "cuda", r);
            if (index == nullptr) {
                return r;
            }
            const auto pick = pick_dcgm_version(*index, want->packages);
            if (pick.version.empty()) {
                r.status = StepStatus::blocked;
                r.reason = pick.problem + " (" + want->because + ")";
                return r;
            }
            std::vector<PackagePin> pins;
            for (const auto& p : want->packages) {
                pins.push_back({p, pick.version});
            }
            plan_installs(r, sys, *pm, pins);
            r.changes.push_back(note(want->because));
        }
        if (exporter_wanted(ctx)) {
            plan_exporter(sys, r);
            if (r.status == StepStatus::blocked) {
                return r;
            }
        }
        if (!unit_enabled(sys, kDcgmUnit)) {
            require_unit(sys, kDcgmUnit, r);
        } else if (!unit_active(sys, kUnitName)) {
            r.changes.push_back(command_change({.argv = {"systemctl", "start", kDcgmUnit}},
                                               "enabled but not running"));
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure || !wanted(ctx)) {
            return StepStatus::done;
        }
        if (!unit_enabled(sys, kDcgmUnit)) {
            enable_unit(sys, kDcgmUnit, true);
        } else if (!unit_active(sys, kUnitName) && have_systemctl(sys)) {
            const auto r = sys.run({.argv = {"systemctl", "start", kDcgmUnit}, .timeout = 120s});
            if (!r.ok()) {
                throw HostError(fmt::format(
                    "systemctl start {} failed (exit {}): {}; see `journalctl -u nvidia-dcgm`: "
                    "nv-hostengine needs the NVIDIA driver loaded",
                    kDcgmUnit, r.exit_code, std::string(trim(tail_lines(r.err, 4)))));
            }
        }
        if (exporter_wanted(ctx)) {
            apply_exporter(sys);
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!wanted(ctx)) {
            return {};
        }
        std::vector<CheckOutcome> out{verify_packages(ctx, sys), verify_hostengine(sys),
                                      verify_discovery(ctx, sys)};
        if (exporter_wanted(ctx)) {
            const bool ok = unit_enabled(sys, kExporterUnit) && unit_active(sys, kExporterUnitName);
            out.push_back(
                CheckOutcome{.id = "dcgm.exporter",
                             .step = "dcgm",
                             .passed = ok,
                             .command = std::string("systemctl is-active ") + kExporterUnitName,
                             .expected = "enabled and active",
                             .found = ok ? "active" : "not enabled or not active",
                             .fix = ok ? "" : "gpuprov apply PROFILE --only dcgm"});
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_dcgm() {
    return std::make_unique<Dcgm>();
}

} // namespace gpuprov::steps
