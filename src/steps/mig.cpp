// mig: MIG mode and the profile's layout of GPU instances (docs/mig.md), with mig-parted's
// semantics (NVIDIA/mig-parted examples/config.yaml): every GPU a layout entry names gets MIG
// mode and exactly its GPU instances, each with one compute instance spanning it (`-C`).
// The live layout is read with `nvidia-smi mig -lgi` and the MIG devices of `nvidia-smi -L`;
// a different one is planned as a diff: destroy the compute and GPU instances, create the
// profile's. GPU instances do not survive a reboot (NVIDIA MIG user guide, "Persistence"), so
// the step writes gpuprov-mig.service, a oneshot unit that runs the same nvidia-smi commands at
// boot, before the kubelet, slurmd and the container engines start.
#include "common.hpp"
#include "packages_step.hpp"
#include "steps.hpp"
#include "unit_link.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/smi_mig.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kMigUnit = "gpuprov-mig.service";
constexpr const char* kMigUnitPath = "/etc/systemd/system/gpuprov-mig.service";
// Where the driver packages put nvidia-smi; the unit names it in full, as systemd wants.
constexpr const char* kSmi = "/usr/bin/nvidia-smi";

const std::vector<std::string> kModeQuery = {
    "nvidia-smi", "--query-gpu=index,mig.mode.current,mig.mode.pending", "--format=csv,noheader"};

struct LiveGpu {
    int index = 0;
    std::optional<bool> current; ///< absent: not MIG-capable ([N/A])
    std::optional<bool> pending;
};

std::optional<bool> mode_value(std::string_view v) {
    v = trim(v);
    if (v == "Enabled") {
        return true;
    }
    if (v == "Disabled") {
        return false;
    }
    return std::nullopt;
}

std::vector<LiveGpu> parse_modes(std::string_view csv) {
    std::vector<LiveGpu> out;
    for (const auto& line : split(csv, '\n')) {
        const auto f = split(line, ',');
        if (f.size() != 3) {
            continue;
        }
        const auto index = parse_int32(trim(f[0]));
        if (!index) {
            continue;
        }
        out.push_back(LiveGpu{*index, mode_value(f[1]), mode_value(f[2])});
    }
    return out;
}

/// What the profile wants of one GPU.
struct Want {
    int index = 0;
    bool enabled = false;
    std::vector<std::string> profiles; ///< one per GPU instance, in the profile's order
    std::string create;                ///< the -cgi argument: profile ids, or names
};

std::optional<Want> want_for(const StepContext& ctx, int index) {
    const auto& mig = *ctx.profile.mig;
    Want w;
    w.index = index;
    if (!mig.enabled) {
        return w; // mode disabled: MIG off everywhere
    }
    const auto* e = mig.for_gpu(index);
    if (e == nullptr) {
        return std::nullopt; // a GPU the layout does not name is left alone
    }
    w.enabled = e->mig_enabled;
    // The board, for the profile ids: facts list the GPUs in PCI order, as nvidia-smi numbers
    // them by default.
    const std::vector<MigProfile>* known = nullptr;
    if (index >= 0 && static_cast<std::size_t>(index) < ctx.facts.gpus.size()) {
        known = &ctx.matrix.mig_profiles(ctx.facts.gpus[static_cast<std::size_t>(index)].device_id);
    }
    std::vector<std::string> ids;
    for (const auto& [name, count] : e->devices) {
        std::string arg = name; // nvidia-smi takes names too, where the board is unknown
        if (known != nullptr) {
            for (const auto& p : *known) {
                if (p.name == name) {
                    arg = std::to_string(p.id);
                }
            }
        }
        for (int i = 0; i < count; ++i) {
            w.profiles.push_back(name);
            ids.push_back(arg);
        }
    }
    w.create = join(ids, ",");
    return w;
}

std::vector<std::string> smi(std::vector<std::string> args) {
    args.insert(args.begin(), "nvidia-smi");
    return args;
}

std::vector<std::vector<std::string>> mode_argvs(const Want& w) {
    return {smi({"-i", std::to_string(w.index), "-mig", w.enabled ? "1" : "0"})};
}

std::vector<std::vector<std::string>> destroy_argvs(const Want& w) {
    const auto i = std::to_string(w.index);
    return {smi({"mig", "-i", i, "-dci"}), smi({"mig", "-i", i, "-dgi"})};
}

std::vector<std::vector<std::string>> create_argvs(const Want& w) {
    if (w.profiles.empty()) {
        return {};
    }
    return {smi({"mig", "-i", std::to_string(w.index), "-cgi", w.create, "-C"})};
}

/// The boot unit: the same commands apply runs, for every GPU the layout names.
ManagedFile boot_unit(const StepContext& ctx, const std::vector<Want>& wants) {
    std::string exec;
    for (const auto& w : wants) {
        if (!w.enabled) {
            continue;
        }
        const auto line = [&](const std::vector<std::string>& argv, bool may_fail) {
            std::vector<std::string> words(argv.begin() + 1, argv.end());
            exec += fmt::format("ExecStart={}{} {}\n", may_fail ? "-" : "", kSmi, join(words, " "));
        };
        line(mode_argvs(w)[0], false);
        // Nothing to destroy at boot is the usual case: those two may fail.
        for (const auto& argv : destroy_argvs(w)) {
            line(argv, true);
        }
        for (const auto& argv : create_argvs(w)) {
            line(argv, false);
        }
    }
    return {kMigUnitPath,
            fmt::format("{}[Unit]\n"
                        "Description=MIG layout of gpuprov profile {} (docs/mig.md)\n"
                        "After=systemd-modules-load.service nvidia-persistenced.service\n"
                        "Before=kubelet.service slurmd.service containerd.service "
                        "docker.service\n\n"
                        "[Service]\n"
                        "Type=oneshot\n"
                        "RemainAfterExit=yes\n"
                        "{}\n"
                        "[Install]\n"
                        "WantedBy=multi-user.target\n",
                        kManagedHeader, ctx.profile.name, exec)};
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

std::string describe(const std::vector<std::string>& profiles) {
    return profiles.empty() ? "no GPU instance" : join(profiles, " + ");
}

/// What the GPU has now: its GPU instances' profiles and how many MIG devices (compute
/// instances) nvidia-smi -L lists for it.
struct LiveLayout {
    std::vector<std::string> profiles;
    std::size_t devices = 0;
};

LiveLayout live_layout(const System& sys, int index) {
    LiveLayout l;
    const auto lgi =
        sys.query({.argv = smi({"mig", "-i", std::to_string(index), "-lgi"}), .timeout = 60s});
    for (const auto& gi : parse_mig_lgi(lgi.out)) {
        l.profiles.push_back(gi.profile);
    }
    const auto list = sys.query({.argv = smi({"-L"}), .timeout = 60s});
    for (const auto& g : parse_smi_list(list.out)) {
        if (g.index == index) {
            l.devices = g.migs.size();
        }
    }
    return l;
}

bool layout_matches(const Want& w, const LiveLayout& l) {
    return sorted(l.profiles) == sorted(w.profiles) && l.devices == w.profiles.size();
}

struct Plan {
    CheckResult r;
    std::vector<Want> wants;
    bool driver_loaded = false;
    std::vector<LiveGpu> live;
};

void pend(CheckResult& r) {
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
}

Plan make_plan(const StepContext& ctx, const System& sys) {
    Plan p;
    auto& r = p.r;
    const auto modes = sys.query({.argv = kModeQuery, .timeout = 60s});
    p.driver_loaded = modes.ok();
    if (p.driver_loaded) {
        p.live = parse_modes(modes.out);
        for (const auto& g : p.live) {
            if (auto w = want_for(ctx, g.index)) {
                p.wants.push_back(std::move(*w));
            }
        }
    } else {
        // Before the driver's reboot: the GPUs the PCI bus shows, in nvidia-smi's order.
        for (std::size_t i = 0; i < ctx.facts.gpus.size(); ++i) {
            if (auto w = want_for(ctx, static_cast<int>(i))) {
                p.wants.push_back(std::move(*w));
            }
        }
    }
    const bool any_enabled =
        std::any_of(p.wants.begin(), p.wants.end(), [](const Want& w) { return w.enabled; });
    if (any_enabled) {
        require_file(sys, boot_unit(ctx, p.wants), r);
        require_unit(sys, kMigUnit, r);
    } else if (sys.exists(kMigUnitPath)) {
        r.changes.push_back(Change{.kind = Change::Kind::file,
                                   .target = kMigUnitPath,
                                   .detail = "remove: the profile's layout makes no GPU instance"});
        pend(r);
    }
    if (!p.driver_loaded) {
        if (!p.wants.empty()) {
            r.changes.push_back(note(fmt::format(
                "nvidia-smi does not answer yet (the driver is not loaded): {} applies the MIG "
                "layout at the next boot",
                kMigUnit)));
            pend(r);
        }
        return p;
    }
    for (const auto& w : p.wants) {
        const auto live = std::find_if(p.live.begin(), p.live.end(),
                                       [&](const LiveGpu& g) { return g.index == w.index; });
        if (!live->current) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("GPU {} does not support MIG (nvidia-smi reports its MIG mode "
                                   "as N/A); remove it from mig.layout",
                                   w.index);
            return p;
        }
        bool layout_needed = w.enabled;
        if (*live->current != w.enabled) {
            if (live->pending == w.enabled) {
                r.changes.push_back(note(fmt::format(
                    "GPU {}: MIG mode is pending {} until the GPU is reset or the host reboots "
                    "(nvidia-smi -i {} -r when no process uses it, or a reboot); {} then creates "
                    "the layout",
                    w.index, w.enabled ? "enabled" : "disabled", w.index, kMigUnit)));
                layout_needed = false;
            } else {
                for (const auto& argv : mode_argvs(w)) {
                    r.changes.push_back(
                        command_change({.argv = argv}, fmt::format("GPU {}: MIG mode {}", w.index,
                                                                   w.enabled ? "on" : "off")));
                }
            }
            pend(r);
            if (!layout_needed) {
                continue;
            }
            for (const auto& argv : create_argvs(w)) {
                r.changes.push_back(
                    command_change({.argv = argv}, fmt::format("GPU {}: create {}", w.index,
                                                               describe(w.profiles))));
            }
            continue;
        }
        if (!layout_needed) {
            continue;
        }
        const auto now = live_layout(sys, w.index);
        if (layout_matches(w, now)) {
            continue;
        }
        const auto why =
            fmt::format("GPU {}: has {} ({} MIG devices), the profile wants {}", w.index,
                        describe(now.profiles), now.devices, describe(w.profiles));
        for (const auto& argv : destroy_argvs(w)) {
            r.changes.push_back(command_change({.argv = argv}, why));
        }
        for (const auto& argv : create_argvs(w)) {
            r.changes.push_back(command_change({.argv = argv}, why));
        }
        pend(r);
    }
    return p;
}

void run_smi(System& sys, const std::vector<std::string>& argv, bool may_fail = false) {
    const auto res = sys.run({.argv = argv, .timeout = 120s});
    if (!res.ok() && !may_fail) {
        throw Error(fmt::format("{} failed (exit status {}): {}", display_argv(argv), res.exit_code,
                                trim(res.out + res.err)));
    }
}

class Mig final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "mig"; }
    [[nodiscard]] std::string_view summary() const override {
        return "MIG mode and GPU instances, re-applied at boot by gpuprov-mig.service";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        if (!ctx.profile.mig) {
            CheckResult r;
            r.status = StepStatus::skipped;
            r.reason = "profile asks for no MIG layout";
            return r;
        }
        return make_plan(ctx, sys).r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure || !ctx.profile.mig) {
            return StepStatus::done;
        }
        const auto plan = make_plan(ctx, sys);
        const bool any_enabled = std::any_of(plan.wants.begin(), plan.wants.end(),
                                             [](const Want& w) { return w.enabled; });
        if (any_enabled) {
            write_managed(sys, boot_unit(ctx, plan.wants));
            if (have_systemctl(sys)) {
                (void)sys.run({.argv = {"systemctl", "daemon-reload"}, .timeout = 60s});
            }
            ensure_unit_enabled(sys, kMigUnit, false);
        } else if (sys.exists(kMigUnitPath)) {
            if (have_systemctl(sys)) {
                (void)sys.run({.argv = {"systemctl", "disable", kMigUnit}, .timeout = 60s});
            }
            sys.remove_file(kMigUnitPath);
        }
        if (!plan.driver_loaded) {
            return StepStatus::done; // the unit applies it at boot
        }
        bool reset_needed = false;
        for (const auto& w : plan.wants) {
            const auto live = std::find_if(plan.live.begin(), plan.live.end(),
                                           [&](const LiveGpu& g) { return g.index == w.index; });
            if (live->current != w.enabled) {
                if (live->pending != w.enabled) {
                    run_smi(sys, mode_argvs(w)[0]);
                }
                const auto again = sys.query({.argv = kModeQuery, .timeout = 60s});
                for (const auto& g : parse_modes(again.out)) {
                    if (g.index == w.index && g.current != w.enabled) {
                        reset_needed = true;
                    }
                }
                if (reset_needed || !w.enabled) {
                    continue;
                }
            } else if (!w.enabled || layout_matches(w, live_layout(sys, w.index))) {
                continue;
            }
            for (const auto& argv : destroy_argvs(w)) {
                run_smi(sys, argv, true); // none to destroy fails, and is fine
            }
            for (const auto& argv : create_argvs(w)) {
                run_smi(sys, argv);
            }
        }
        return reset_needed ? StepStatus::reboot_required : StepStatus::done;
    }

    [[nodiscard]] std::string reboot_evidence(const StepContext&,
                                              const System& sys) const override {
        const auto modes = sys.query({.argv = kModeQuery, .timeout = 60s});
        return "MIG mode pending a GPU reset: " + display_argv(kModeQuery) + ": " +
               std::string(trim(modes.out));
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        std::vector<CheckOutcome> out;
        if (!ctx.profile.mig) {
            return out;
        }
        const auto modes = sys.query({.argv = kModeQuery, .timeout = 60s});
        const auto live = parse_modes(modes.out);
        for (const auto& g : live) {
            const auto w = want_for(ctx, g.index);
            if (!w) {
                continue;
            }
            CheckOutcome c;
            c.id = fmt::format("mig.gpu{}", g.index);
            c.step = "mig";
            c.command = display_argv(kModeQuery);
            c.expected = w->enabled ? fmt::format("MIG enabled with {}", describe(w->profiles))
                                    : "MIG disabled";
            if (g.current != w->enabled) {
                c.found = fmt::format(
                    "MIG mode {}{}", g.current.value_or(false) ? "enabled" : "disabled",
                    g.pending == w->enabled ? " (the change is pending a GPU reset)" : "");
                c.fix = "sudo gpuprov apply PROFILE --only mig; a pending mode needs a GPU reset "
                        "(nvidia-smi -i N -r) or a reboot";
            } else if (w->enabled) {
                const auto now = live_layout(sys, g.index);
                c.command = fmt::format("nvidia-smi mig -i {} -lgi; nvidia-smi -L", g.index);
                c.found = fmt::format("MIG enabled with {} ({} MIG devices)",
                                      describe(now.profiles), now.devices);
                c.passed = layout_matches(*w, now);
                if (!c.passed) {
                    c.fix = fmt::format("sudo gpuprov apply PROFILE --only mig (or systemctl "
                                        "restart {})",
                                        kMigUnit);
                }
            } else {
                c.found = "MIG disabled";
                c.passed = true;
            }
            out.push_back(std::move(c));
        }
        if (!modes.ok()) {
            CheckOutcome c;
            c.id = "mig.mode";
            c.step = "mig";
            c.command = display_argv(kModeQuery);
            c.expected = "nvidia-smi reports the MIG mode";
            c.found =
                fmt::format("exit status {}: {}", modes.exit_code, trim(modes.out + modes.err));
            c.fix = "gpuprov doctor";
            out.push_back(std::move(c));
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_mig() {
    return std::make_unique<Mig>();
}

} // namespace gpuprov::steps
