// fabric-manager: NVSwitch systems (HGX/DGX) need nvidia-fabricmanager of exactly the driver's
// version, or CUDA sees no GPUs (NVIDIA fabric manager user guide; yum-packaging-fabric-manager).
// NVLink 5 hosts (HGX B200/B300: NVSwitches managed over InfiniBand, facts'
// nvlink5_switch_count) also need the NVLink Subnet Manager and ib_umad: "Not running the NVLSM on
// Blackwell and newer fabrics with NVLink 5.0+ will result in FabricManager failing to start"
// (fabric manager user guide, quoted in siderolabs/extensions PR #717), and the GPUs stay
// "In Progress" (CUDA error 802). FM's own unit starts NVLSM first through
// nvidia-fabricmanager-start.sh ("selectively start FabricManager and NVLSM processes depending
// on the underlying platform", same guide), so the order gpuprov owns is: packages, ib_umad
// loaded (NVIDIA's driver container waits for mlx5_core and ib_umad before it starts FM,
// gpu-driver-container `_ensure_nvlink5_prerequisites`), then the unit enabled and started.
// IMEX (`fabric.imex`) rides here too, with or without fabric manager (GB200/GB300 compute trays
// run IMEX and no local fabric manager, their NVSwitches being in the switch trays): nvidia-imex
// at the driver's version, held with it, and with `fabric.imex_nodes` the domain's node list in
// /etc/nvidia-imex/nodes_config.cfg and nvidia-imex.service enabled and (re)started. NVIDIA's
// IMEX guide, Deployment Models: "Before starting the service, an administrator or job launcher
// must populate the IP address information of all involved nodes in nodes_config.cfg"; the
// service reads its config only when it starts ("IMEX Service Config Options"), so a changed
// list means a restart. Without a node list gpuprov installs IMEX and leaves the service alone:
// any list it made up (this node alone, say) would break a real multi-node domain.
#include "driver_apt.hpp"
#include "driver_rpm.hpp"
#include "packages_step.hpp"
#include "steps.hpp"
#include "unit_started.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kFabricManagerUnit = "nvidia-fabricmanager.service";
constexpr const char* kImexUnit = "nvidia-imex.service";
/// IMEX_NODE_CONFIG_FILE's default (NVIDIA IMEX guide, "IMEX Service Config Options").
constexpr const char* kImexNodes = "/etc/nvidia-imex/nodes_config.cfg";

/// Whether fabric manager is held with the driver: apt-mark holds where they are the driver's
/// branch lock (names carry the branch), versionlock wherever the driver is versionlocked on EL
/// (always on EL 10, where no module stream keeps the branch; with hold: true on 8/9), so an
/// unattended upgrade moves neither.
bool locked_with_driver(const StepContext& ctx) {
    return apt_driver_holds(ctx) || rpm_branch_locked(ctx);
}
constexpr const char* kUmadConf = "/etc/modules-load.d/gpuprov-ib_umad.conf";

/// NVSwitches managed over InfiniBand (SW_MNG in their VPD): NVLSM and ib_umad are needed.
bool nvlink5(const StepContext& ctx) {
    return ctx.facts.nvlink5_switch_count > 0;
}

ManagedFile umad_conf() {
    // modules-load.d(5): loaded by systemd-modules-load at every boot, before FM's unit runs
    // (AWS's AL2023 GPU AMI writes the same line for its B200 instances: amazon-ecs-ami
    // scripts/al2023/gpu/install-nvidia-driver.sh).
    return {kUmadConf, std::string(kManagedHeader) + "ib_umad\n"};
}

bool umad_loaded(const System& sys) {
    return sys.exists("/sys/module/ib_umad");
}

/// The NVLink 5 part of the plan: NVLSM from NVIDIA's repository (its own date-based version,
/// not the driver's: nvlink5-580 Depends `nvlsm (>= 2025.10.12)`), ib_umad now and at boot.
void plan_nvlink5(const StepContext& ctx, const System& sys, const PackageManager& pm,
                  const std::vector<std::string>& packages, CheckResult& r) {
    std::vector<std::string> missing;
    for (const auto& n : packages) {
        if (!pm.installed(sys, n)) {
            missing.push_back(n);
        }
    }
    if (!missing.empty()) {
        const auto* index = index_or_block(ctx, "cuda", r);
        if (index == nullptr) {
            return;
        }
        const auto pins = pin_with_prefix(*index, missing, "", r, "CUDA");
        if (!pins) {
            return;
        }
        plan_installs(r, sys, pm, *pins);
        r.hold_installs = r.hold_installs || locked_with_driver(ctx);
    }
    require_file(sys, umad_conf(), r);
    if (!umad_loaded(sys)) {
        r.changes.push_back(command_change({.argv = {"modprobe", "ib_umad"}},
                                           "NVLSM reaches the NVSwitches through "
                                           "/dev/infiniband/umad*: loaded before fabric "
                                           "manager starts"));
        if (r.status == StepStatus::satisfied) {
            r.status = StepStatus::pending;
        }
    }
}

bool fm_wanted(const StepContext& ctx) {
    return fabric_manager_wanted(ctx.profile, ctx.facts);
}

bool needed(const StepContext& ctx) {
    return fm_wanted(ctx) || ctx.profile.fabric.imex;
}

int branch_of(const StepContext& ctx) {
    return static_cast<int>(parse_int(ctx.profile.driver->branch).value_or(0));
}

/// The packages held with the driver: fabric manager's where it is wanted, IMEX's where asked
/// for (on apt from 580 fabric manager's list holds IMEX already), each once.
std::vector<std::string> fabric_packages(const StepContext& ctx, const PackageNames& names) {
    std::vector<std::string> out;
    if (fm_wanted(ctx)) {
        out = names.fabric_manager_for(branch_of(ctx));
    }
    if (ctx.profile.fabric.imex) {
        for (auto& n : names.imex_for(branch_of(ctx))) {
            if (std::find(out.begin(), out.end(), n) == out.end()) {
                out.push_back(std::move(n));
            }
        }
    }
    return out;
}

/// The domain's nodes, one per line: the format NVIDIA's guide and operators' pages show
/// (docs.crusoecloud.com IMEX setup). No gpuprov header line: the guide documents no comment
/// syntax for this file, and IMEX treats an entry that is not an address as a host name.
ManagedFile imex_nodes_file(const StepContext& ctx) {
    return {kImexNodes, join(ctx.profile.fabric.imex_nodes, "\n") + "\n"};
}

/// Whether the running nvidia-imex started before the node list on disk was last written: the
/// daemon reads the list only at start, so it runs on an older one. This is what a kill between
/// apply's write of a changed list and its restart leaves; the file then matches the profile and
/// only the two times show it. False when either time is unknown (not running, a systemd
/// without --timestamp): then the list alone decides, as before.
bool imex_started_before_its_list(const System& sys) {
    const auto since = unit_active_since(sys, kImexUnit);
    const auto written = sys.stamp(kImexNodes);
    if (!since || !written) {
        return false;
    }
    const auto mtime = std::chrono::system_clock::time_point{
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds{written->mtime_ns})};
    // systemd's timestamp has microseconds; the file's nanoseconds are cut to match, so a
    // restart in the same microsecond as the write is not taken for an older start.
    return std::chrono::floor<std::chrono::microseconds>(*since) <
           std::chrono::floor<std::chrono::microseconds>(mtime);
}

/// The IMEX part of the plan: the node list and the service, only where the profile gives the
/// list; otherwise a note saying who starts the service.
void plan_imex(const StepContext& ctx, const System& sys, CheckResult& r) {
    if (!ctx.profile.fabric.imex_service()) {
        r.changes.push_back(
            note("nvidia-imex installed; its service is left alone: fabric.imex_nodes is not set, "
                 "and NVIDIA's IMEX guide has the node list (/etc/nvidia-imex/nodes_config.cfg) "
                 "written by an administrator or job launcher before the service starts"));
        return;
    }
    const auto nodes = imex_nodes_file(ctx);
    const bool list_changes = !file_matches(sys, nodes);
    require_file(sys, nodes, r);
    if (list_changes && unit_enabled(sys, kImexUnit)) {
        r.changes.push_back(command_change({.argv = {"systemctl", "restart", kImexUnit}},
                                           "IMEX reads its node list only when it starts"));
    } else if (!list_changes && imex_started_before_its_list(sys)) {
        r.changes.push_back(command_change(
            {.argv = {"systemctl", "restart", kImexUnit}},
            "nvidia-imex started before its node list was last written (an apply stopped "
            "between the two): it runs on the list it read then"));
        if (r.status == StepStatus::satisfied) {
            r.status = StepStatus::pending;
        }
    }
    require_unit(sys, kImexUnit, r);
}

/// Writes the node list and enables the service; restarts it when the list changed, when the
/// daemon started before the list was written, or when it was not enabled yet (a plain
/// `enable --now` would leave a running daemon on the old list).
void apply_imex(const StepContext& ctx, System& sys) {
    if (!ctx.profile.fabric.imex_service()) {
        return;
    }
    const auto nodes = imex_nodes_file(ctx);
    const bool changed = !file_matches(sys, nodes) || imex_started_before_its_list(sys);
    write_managed(sys, nodes);
    const bool enabled = unit_enabled(sys, kImexUnit);
    if (!enabled) {
        enable_unit(sys, kImexUnit, false);
    }
    if ((changed || !enabled) && have_systemctl(sys)) {
        const auto r = sys.run({.argv = {"systemctl", "restart", kImexUnit}, .timeout = 120s});
        if (!r.ok()) {
            throw HostError(fmt::format(
                "systemctl restart {} failed (exit {}): {}; see `journalctl -u nvidia-imex`: "
                "IMEX aborts unless the loaded driver is of its version, and binds to the "
                "address of this node it finds in {}",
                kImexUnit, r.exit_code, std::string(trim(tail_lines(r.err, 4))), kImexNodes));
        }
    }
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
        return "Fabric Manager for NVSwitch systems (and IMEX), same version as the driver";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!needed(ctx) || !ctx.profile.driver) {
            r.status = StepStatus::skipped;
            r.reason = !ctx.profile.driver ? "profile has no driver section"
                       : ctx.profile.fabric_manager == FabricManagerMode::disabled
                           ? "fabric_manager: false and no fabric.imex"
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
        const auto packages = fabric_packages(ctx, *names);
        if (fm_wanted(ctx) && names->fabric_manager_for(branch_of(ctx)).empty()) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("gpuprov's version matrix names no fabric manager packages for "
                                   "branch {} ({} family)",
                                   branch, ctx.facts.os.family);
            return r;
        }
        if (ctx.profile.fabric.imex && names->imex_for(branch_of(ctx)).empty()) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("fabric.imex: gpuprov's version matrix names no IMEX package "
                                   "for branch {} ({} family); NVIDIA publishes nvidia-imex from "
                                   "R550",
                                   branch, ctx.facts.os.family);
            return r;
        }
        const bool fabric5_wanted = fm_wanted(ctx) && nvlink5(ctx);
        const auto fabric5 =
            fabric5_wanted ? names->nvlink5_for(branch_of(ctx)) : std::vector<std::string>{};
        if (fabric5_wanted && fabric5.empty()) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format(
                "this host's {} NVSwitches are NVLink 5 ones (InfiniBand devices with SW_MNG in "
                "their VPD: HGX B200/B300), whose fabric manager needs the NVLink Subnet Manager; "
                "gpuprov's version matrix names no NVLSM package for branch {} ({} family). Use "
                "branch 570 or newer",
                ctx.facts.nvlink5_switch_count, branch, ctx.facts.os.family);
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
            r.hold_installs = locked_with_driver(ctx);
            // On dnf 8/9 they are the nvidia-driver module's (its /fm profile): the driver's
            // stream has to be on for dnf to see them. EL 10 has no stream (stream_to_enable).
            if (ctx.facts.os.family == "rhel" && !r.installs.empty()) {
                const auto drv = rpm_driver(ctx, r);
                if (const auto m = drv ? stream_to_enable(ctx, *drv) : std::nullopt) {
                    r.modules.push_back(*m);
                }
            }
            // A branch change on EL: the old build is versionlocked; released before the
            // transaction moves it, locked again after (dnf has no other way past a lock).
            if (ctx.facts.os.family == "rhel") {
                for (const auto& pin : r.installs) {
                    if (pm->installed(sys, pin.name) && pm->held(sys, pin.name)) {
                        r.unholds.push_back(pin.name);
                    }
                }
                if (!r.unholds.empty()) {
                    r.changes.insert(r.changes.begin(),
                                     command_change(pm->unhold(r.unholds),
                                                    "release fabric manager so dnf can move it "
                                                    "with the driver"));
                }
            }
        }
        if (!fabric5.empty()) {
            plan_nvlink5(ctx, sys, *pm, fabric5, r);
            if (r.status == StepStatus::blocked) {
                return r;
            }
        }
        if (locked_with_driver(ctx)) {
            if (const auto unheld = unheld_of(sys, *pm, packages); !unheld.empty()) {
                r.changes.push_back(command_change(
                    pm->hold(unheld), "held with the driver: its version must equal the driver's"));
                if (r.status == StepStatus::satisfied) {
                    r.status = StepStatus::pending;
                }
            }
        }
        if (fm_wanted(ctx)) {
            require_unit(sys, kFabricManagerUnit, r);
        }
        if (ctx.profile.fabric.imex) {
            plan_imex(ctx, sys, r);
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult& planned,
                     ApplyPhase phase) override {
        if (phase == ApplyPhase::prepare && !planned.unholds.empty()) {
            run_checked(sys, make_package_manager(ctx.facts)->unhold(planned.unholds));
        }
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        if (locked_with_driver(ctx)) {
            const auto pm = make_package_manager(ctx.facts);
            const auto* names = ctx.matrix.package_names(ctx.facts.os.family);
            const auto packages =
                names == nullptr ? std::vector<std::string>{} : fabric_packages(ctx, *names);
            if (const auto unheld = unheld_of(sys, *pm, packages); !unheld.empty()) {
                run_checked(sys, pm->hold(unheld));
            }
        }
        if (fm_wanted(ctx) && nvlink5(ctx)) {
            write_managed(sys, umad_conf());
            if (!umad_loaded(sys)) {
                const auto r = sys.run({.argv = {"modprobe", "ib_umad"}, .timeout = 60s});
                if (!r.ok()) {
                    throw HostError(fmt::format(
                        "modprobe ib_umad failed (exit {}): {}; NVLSM needs it to reach the "
                        "NVLink 5 switches. On Ubuntu's cloud kernels it is in "
                        "linux-modules-extra-$(uname -r) (NVIDIA/gpu-operator#2781)",
                        r.exit_code, std::string(trim(tail_lines(r.err, 4)))));
                }
            }
        }
        if (fm_wanted(ctx) && !unit_enabled(sys, kFabricManagerUnit)) {
            enable_unit(sys, kFabricManagerUnit, true);
        }
        // After fabric manager: on an NVSwitch host IMEX needs the GPUs in the fabric.
        apply_imex(ctx, sys);
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!needed(ctx)) {
            return {};
        }
        auto out = check_fabric_manager({ctx.profile, ctx.facts, ctx.matrix}, sys);
        if (auto lock = fabric_manager_lock_outcome(ctx, sys)) {
            out.push_back(std::move(*lock));
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_fabric_manager() {
    return std::make_unique<FabricManager>();
}

} // namespace gpuprov::steps
