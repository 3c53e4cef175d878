// nouveau (the competing kernel drivers): blacklist the open-source drivers that bind NVIDIA GPUs
// before the NVIDIA module can (nouveau; and nova_core/nova_drm where the kernel has them:
// Ubuntu 26.04's 7.0 kernel ships CONFIG_NOVA_CORE=m and nova_core binds Turing and newer, so
// `modprobe nvidia` fails, beclab/Olares PR#3963, LP #2150845), and regenerate the initramfs of
// every installed kernel, which otherwise still loads them early in boot: the next boot may pick
// a newer kernel than the running one. The step id stays "nouveau" (profiles, journals and the
// resume unit name it).
#include "common.hpp"
#include "steps.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/forecast.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kBlacklist = "/etc/modprobe.d/blacklist-nouveau.conf";

/// The kernels installed on the host, newest-agnostic: the ones whose initramfs the next boot
/// may load. Debian: those initramfs-tools manages (its state directory names them on older
/// releases; on Debian 12 the images with an initrd, which `-k all` regenerates). EL: each
/// /lib/modules/<k> that holds the kernel image (kernel-core installs /lib/modules/<k>/vmlinuz; a
/// directory left by DKMS or kernel-devel alone has none). The running kernel when neither names
/// any.
std::vector<std::string> installed_kernels(const System& sys, const HostFacts& facts) {
    std::vector<std::string> out;
    if (facts.os.family == "rhel") {
        for (const auto& k : sys.list_dir("/lib/modules")) {
            if (sys.exists("/lib/modules/" + k + "/vmlinuz")) {
                out.push_back(k);
            }
        }
    } else {
        out = sys.list_dir("/var/lib/initramfs-tools");
        // initramfs-tools 0.142 (Debian 12) keeps no state there: `update-initramfs -u -k all`
        // takes `linux-version list` (the /boot/vmlinuz-* images) that already have an initrd.
        for (const auto& f : sys.list_dir("/boot")) {
            if (!starts_with(f, "vmlinuz-")) {
                continue;
            }
            const auto k = f.substr(8);
            if (sys.exists("/boot/initrd.img-" + k) &&
                std::find(out.begin(), out.end(), k) == out.end()) {
                out.push_back(k);
            }
        }
    }
    std::sort(out.begin(), out.end());
    if (out.empty() && !facts.kernel.empty()) {
        out.push_back(facts.kernel);
    }
    return out;
}

/// Whether a kernel config enables `symbol` as a module or built in ("CONFIG_X=m" / "=y").
bool config_enables(std::string_view config, std::string_view symbol) {
    for (const auto& line : lines(config)) {
        const auto l = trim(line);
        if (starts_with(l, symbol) && l.size() > symbol.size() && l[symbol.size()] == '=') {
            const auto value = l.substr(symbol.size() + 1);
            return value == "m" || value == "y";
        }
    }
    return false;
}

/// Whether kernel `k` has Nova (nova_core or nova_drm): its config enables it (/boot/config-<k>,
/// or EL's /lib/modules/<k>/config), or its module lists name the module.
bool kernel_has_nova(const System& sys, const std::string& k) {
    for (const auto& file : {"/boot/config-" + k, "/lib/modules/" + k + "/config"}) {
        if (const auto text = sys.read_file(file)) {
            if (config_enables(*text, "CONFIG_NOVA_CORE") ||
                config_enables(*text, "CONFIG_DRM_NOVA")) {
                return true;
            }
        }
    }
    for (const auto* list : {"/modules.dep", "/modules.builtin"}) {
        if (const auto text = sys.read_file("/lib/modules/" + k + list)) {
            if (text->find("/nova_core.ko") != std::string::npos ||
                text->find("/nova_drm.ko") != std::string::npos) {
                return true;
            }
        }
    }
    return false;
}

/// The modules this host's kernels have that compete with the NVIDIA driver for the GPUs.
struct Competing {
    std::vector<std::string> kernels; ///< installed kernels
    bool nova = false;                ///< any of them has nova_core / nova_drm
};

Competing competing(const System& sys, const HostFacts& facts) {
    Competing c;
    c.kernels = installed_kernels(sys, facts);
    c.nova = std::any_of(c.kernels.begin(), c.kernels.end(),
                         [&](const std::string& k) { return kernel_has_nova(sys, k); });
    // A nova_core bound now is proof enough, whatever the files say.
    c.nova = c.nova || facts.nova_core_loaded;
    return c;
}

ManagedFile blacklist_file(const Competing& c) {
    // The two lines of NVIDIA's CUDA installation guide, "Disabling Nouveau"; then Nova's
    // modules, which `blacklist` keeps udev's modalias loading from binding the GPUs.
    std::string text =
        std::string(kManagedHeader) + "blacklist nouveau\noptions nouveau modeset=0\n";
    if (c.nova) {
        text += "blacklist nova_core\nblacklist nova_drm\n";
    }
    return {kBlacklist, text};
}

/// What the blacklist names, for messages.
std::string blacklisted_words(const Competing& c) {
    return c.nova ? "nouveau, nova_core and nova_drm" : "nouveau";
}

/// The initramfs images the next boot may use, and the commands that regenerate them.
struct Initramfs {
    /// One command per image on EL (dracut per kernel); one for all on Debian. Empty: no
    /// initramfs tooling (containers, some clouds).
    std::vector<Command> commands;
    std::vector<std::string> images; ///< images[i] is regenerated by commands[min(i, size-1)]
    bool per_image = false;          ///< commands[i] regenerates images[i] alone
};

Initramfs initramfs(const System& sys, const HostFacts& facts, const Competing& c) {
    Initramfs out;
    if (facts.os.family == "rhel") {
        // dracut alone rebuilds only the running kernel's image: one call per installed kernel,
        // image and version named, so each is exact in the plan.
        out.per_image = true;
        for (const auto& k : c.kernels) {
            const auto image = "/boot/initramfs-" + k + ".img";
            out.images.push_back(image);
            out.commands.push_back(
                Command{.argv = {"dracut", "--force", image, k}, .timeout = 900s});
        }
        return out;
    }
    if (!sys.exists("/usr/sbin/update-initramfs") && !sys.exists("/sbin/update-initramfs")) {
        return out;
    }
    out.commands.push_back(
        Command{.argv = {"update-initramfs", "-u", "-k", "all"}, .timeout = 900s});
    for (const auto& k : c.kernels) {
        out.images.push_back("/boot/initrd.img-" + k);
    }
    return out;
}

/// The images not regenerated after the blacklist was last written (older, or missing), so
/// early boot may still load a blacklisted driver; empty when every image is newer.
std::vector<std::size_t> stale_images(const System& sys, const Initramfs& ir) {
    std::vector<std::size_t> out;
    const auto blacklist = sys.stamp(kBlacklist);
    if (!blacklist) {
        return out;
    }
    for (std::size_t i = 0; i < ir.images.size(); ++i) {
        const auto st = sys.stamp(ir.images[i]);
        if (!st || st->mtime_ns <= blacklist->mtime_ns) {
            out.push_back(i);
        }
    }
    return out;
}

/// The commands that regenerate `which` images (all of them on Debian: one command).
std::vector<Command> commands_for(const Initramfs& ir, const std::vector<std::size_t>& which) {
    if (!ir.per_image) {
        return which.empty() ? std::vector<Command>{} : ir.commands;
    }
    std::vector<Command> out;
    for (const auto i : which) {
        out.push_back(ir.commands[i]);
    }
    return out;
}

std::vector<std::size_t> all_images(const Initramfs& ir) {
    std::vector<std::size_t> out(ir.images.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = i;
    }
    return out;
}

std::string loaded_note(const HostFacts& f) {
    const auto name = competing_driver_loaded(f);
    return name.empty() ? std::string()
                        : name + " is loaded now: the NVIDIA driver loads after a reboot";
}

class Nouveau final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "nouveau"; }
    [[nodiscard]] std::string_view summary() const override {
        return "blacklist the competing kernel drivers (nouveau, nova_core) and rebuild every "
               "initramfs";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.nouveau_blacklist) {
            r.status = StepStatus::skipped;
            r.reason = "profile sets nouveau.blacklist: false";
            return r;
        }
        const auto c = competing(sys, ctx.facts);
        const auto file = blacklist_file(c);
        const auto ir = initramfs(sys, ctx.facts, c);
        const auto loaded = loaded_note(ctx.facts);
        if (file_matches(sys, file)) {
            // The file alone does nothing at boot: every image must have been regenerated since
            // it was written (a run killed before the regeneration left only the file).
            const auto stale =
                ir.commands.empty() ? std::vector<std::size_t>{} : stale_images(sys, ir);
            if (stale.empty()) {
                if (ir.commands.empty()) {
                    r.reason = "blacklisted; this host has no initramfs tooling to regenerate";
                } else if (!loaded.empty()) {
                    r.reason = "blacklisted; " + competing_driver_loaded(ctx.facts) +
                               " stays loaded until the next reboot";
                }
                return r;
            }
            r.status = StepStatus::pending;
            r.reason = fmt::format("{} is older than {}: regenerate the initramfs",
                                   ir.images[stale.front()], kBlacklist);
            for (const auto& cmd : commands_for(ir, stale)) {
                r.changes.push_back(command_change(cmd, r.reason));
            }
            if (!loaded.empty()) {
                r.changes.push_back(note(loaded));
            }
            return r;
        }
        r.status = StepStatus::pending;
        r.changes.push_back(file_change(sys, file));
        if (!ir.commands.empty()) {
            const auto why = "so early boot does not load " + blacklisted_words(c);
            for (const auto& cmd : ir.commands) {
                r.changes.push_back(command_change(cmd, why));
            }
        } else {
            r.changes.push_back(note("no initramfs tooling on this host: nothing to regenerate"));
        }
        if (!loaded.empty()) {
            r.changes.push_back(note(loaded));
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::prepare) {
            return StepStatus::done;
        }
        const auto c = competing(sys, ctx.facts);
        const auto file = blacklist_file(c);
        const bool wrote = !file_matches(sys, file);
        write_managed(sys, file);
        const auto ir = initramfs(sys, ctx.facts, c);
        // Freshly written: every image predates it. Otherwise only the stale ones.
        const auto which = wrote ? all_images(ir) : stale_images(sys, ir);
        try {
            for (const auto& cmd : commands_for(ir, which)) {
                run_checked(sys, cmd);
            }
        } catch (const Error&) {
            // Without matching initramfs images the blacklist would be half-done; undo what this
            // run wrote so the next run retries both (a blacklist already in place stays: the
            // next run sees the stale images and regenerates them).
            if (wrote) {
                restore_managed(sys, kBlacklist);
            }
            throw;
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.nouveau_blacklist) {
            return {};
        }
        const auto c = competing(sys, ctx.facts);
        const auto now = sys.read_file(kBlacklist);
        const auto has = [&](std::string_view line) {
            return now && ("\n" + *now).find("\nblacklist " + std::string(line) + "\n") !=
                              std::string::npos;
        };
        std::vector<std::string> missing;
        if (!has("nouveau")) {
            missing.emplace_back("nouveau");
        }
        if (c.nova) {
            for (const auto* m : {"nova_core", "nova_drm"}) {
                if (!has(m)) {
                    missing.emplace_back(m);
                }
            }
        }
        const bool ok = missing.empty();
        std::vector<CheckOutcome> out{CheckOutcome{
            .id = "nouveau.blacklisted",
            .step = "nouveau",
            .passed = ok,
            .command = kBlacklist,
            .excerpt = now.value_or(""),
            .expected = c.nova ? "blacklist nouveau, nova_core and nova_drm (this host's kernels "
                                 "have Nova)"
                               : "blacklist nouveau / options nouveau modeset=0",
            .found = ok ? "present" : "not blacklisted: " + join(missing, ", "),
            .fix = ok ? "" : "gpuprov apply PROFILE --only nouveau"}};
        const auto ir = initramfs(sys, ctx.facts, c);
        if (ok && !ir.commands.empty()) {
            const auto stale = stale_images(sys, ir);
            std::vector<std::string> names;
            std::vector<std::string> fixes;
            for (const auto i : stale) {
                names.push_back(ir.images[i]);
            }
            for (const auto& cmd : commands_for(ir, stale)) {
                fixes.push_back(display_argv(cmd.argv));
            }
            out.push_back(CheckOutcome{
                .id = "nouveau.initramfs",
                .step = "nouveau",
                .passed = stale.empty(),
                .command = join(ir.images, ", "),
                .expected = "every installed kernel's image regenerated after " +
                            std::string(kBlacklist) + " was written",
                .found = stale.empty() ? "regenerated" : join(names, ", ") + " older (or missing)",
                .fix = join(fixes, "; ")});
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_nouveau() {
    return std::make_unique<Nouveau>();
}

} // namespace gpuprov::steps

namespace gpuprov {

// The forecast asks this step's own judges: one list of installed kernels, one rule for "the
// initramfs carries the blacklist" (regenerated after it was written).
std::vector<std::string> installed_kernel_releases(const System& sys, const HostFacts& facts) {
    return steps::installed_kernels(sys, facts);
}

std::vector<InitramfsJudgement> judge_initramfs_blacklist(const System& sys,
                                                          const HostFacts& facts) {
    std::vector<InitramfsJudgement> out;
    if (!sys.exists(steps::kBlacklist)) {
        return out;
    }
    const auto c = steps::competing(sys, facts);
    const auto ir = steps::initramfs(sys, facts, c);
    if (ir.commands.empty()) {
        return out;
    }
    const auto stale = steps::stale_images(sys, ir);
    for (std::size_t i = 0; i < ir.images.size() && i < c.kernels.size(); ++i) {
        out.push_back(
            {.kernel = c.kernels[i],
             .image = ir.images[i],
             .carries_blacklist = std::find(stale.begin(), stale.end(), i) == stale.end()});
    }
    return out;
}

} // namespace gpuprov
