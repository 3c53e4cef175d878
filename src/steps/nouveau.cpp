// nouveau: blacklist the open-source driver so the NVIDIA module can bind the GPUs, and rebuild
// the initramfs, which otherwise still loads nouveau early in boot.
#include "common.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kBlacklist = "/etc/modprobe.d/blacklist-nouveau.conf";

ManagedFile blacklist_file() {
    // The two lines of NVIDIA's CUDA installation guide, "Disabling Nouveau".
    return {kBlacklist,
            std::string(kManagedHeader) + "blacklist nouveau\noptions nouveau modeset=0\n"};
}

/// The initramfs images the next boot may use, and the command that regenerates them.
struct Initramfs {
    std::optional<Command> command; ///< nullopt: no initramfs tooling (containers, some clouds)
    std::vector<std::string> images;
};

Initramfs initramfs(const System& sys, const HostFacts& facts) {
    Initramfs out;
    if (facts.os.family == "rhel") {
        // dracut rebuilds the running kernel's image by default.
        out.command = Command{.argv = {"dracut", "--force"}, .timeout = 900s};
        out.images = {"/boot/initramfs-" + facts.kernel + ".img"};
        return out;
    }
    if (!sys.exists("/usr/sbin/update-initramfs") && !sys.exists("/sbin/update-initramfs")) {
        return out;
    }
    // Every kernel initramfs-tools manages (its state directory names them, and `-k all`
    // regenerates exactly those): the next boot may pick a newer kernel than the running one.
    out.command = Command{.argv = {"update-initramfs", "-u", "-k", "all"}, .timeout = 900s};
    for (const auto& version : sys.list_dir("/var/lib/initramfs-tools")) {
        out.images.push_back("/boot/initrd.img-" + version);
    }
    if (out.images.empty()) {
        out.images = {"/boot/initrd.img-" + facts.kernel};
    }
    return out;
}

/// The first image that was not regenerated after the blacklist was last written (older, or
/// missing), so early boot may still load nouveau; nullopt when every image is newer.
std::optional<std::string> stale_image(const System& sys, const Initramfs& ir) {
    const auto blacklist = sys.stamp(kBlacklist);
    if (!blacklist) {
        return std::nullopt;
    }
    for (const auto& image : ir.images) {
        const auto st = sys.stamp(image);
        if (!st || st->mtime_ns <= blacklist->mtime_ns) {
            return image;
        }
    }
    return std::nullopt;
}

class Nouveau final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "nouveau"; }
    [[nodiscard]] std::string_view summary() const override {
        return "blacklist nouveau and rebuild the initramfs";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.nouveau_blacklist) {
            r.status = StepStatus::skipped;
            r.reason = "profile sets nouveau.blacklist: false";
            return r;
        }
        const auto file = blacklist_file();
        const auto ir = initramfs(sys, ctx.facts);
        if (file_matches(sys, file)) {
            // The file alone does nothing at boot: the initramfs must have been regenerated
            // since it was written (a run killed before update-initramfs left only the file).
            const auto stale = ir.command ? stale_image(sys, ir) : std::nullopt;
            if (!stale) {
                if (!ir.command) {
                    r.reason = "blacklisted; this host has no initramfs tooling to regenerate";
                } else if (ctx.facts.nouveau_loaded) {
                    r.reason = "blacklisted; nouveau stays loaded until the next reboot";
                }
                return r;
            }
            r.status = StepStatus::pending;
            r.reason =
                fmt::format("{} is older than {}: regenerate the initramfs", *stale, kBlacklist);
            r.changes.push_back(command_change(*ir.command, r.reason));
            if (ctx.facts.nouveau_loaded) {
                r.changes.push_back(
                    note("nouveau is loaded now: the NVIDIA driver loads after a reboot"));
            }
            return r;
        }
        r.status = StepStatus::pending;
        r.changes.push_back(file_change(sys, file));
        if (ir.command) {
            r.changes.push_back(command_change(*ir.command, "so early boot does not load nouveau"));
        } else {
            r.changes.push_back(note("no initramfs tooling on this host: nothing to regenerate"));
        }
        if (ctx.facts.nouveau_loaded) {
            r.changes.push_back(
                note("nouveau is loaded now: the NVIDIA driver loads after a reboot"));
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::prepare) {
            return StepStatus::done;
        }
        const bool wrote = !file_matches(sys, blacklist_file());
        write_managed(sys, blacklist_file());
        const auto ir = initramfs(sys, ctx.facts);
        if (ir.command && (wrote || stale_image(sys, ir))) {
            try {
                run_checked(sys, *ir.command);
            } catch (const Error&) {
                // Without a matching initramfs the blacklist would be half-done; undo what this
                // run wrote so the next run retries both (a blacklist already in place stays:
                // the next run sees the stale image and regenerates it).
                if (wrote) {
                    restore_managed(sys, kBlacklist);
                }
                throw;
            }
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.nouveau_blacklist) {
            return {};
        }
        const auto now = sys.read_file(kBlacklist);
        const bool ok = now && now->find("blacklist nouveau") != std::string::npos;
        std::vector<CheckOutcome> out{
            CheckOutcome{.id = "nouveau.blacklisted",
                         .step = "nouveau",
                         .passed = ok,
                         .command = kBlacklist,
                         .excerpt = now.value_or(""),
                         .expected = "blacklist nouveau / options nouveau modeset=0",
                         .found = ok ? "present" : "missing",
                         .fix = ok ? "" : "gpuprov apply PROFILE --only nouveau"}};
        const auto ir = initramfs(sys, ctx.facts);
        if (ok && ir.command) {
            const auto stale = stale_image(sys, ir);
            out.push_back(CheckOutcome{
                .id = "nouveau.initramfs",
                .step = "nouveau",
                .passed = !stale,
                .command = join(ir.images, ", "),
                .expected = "regenerated after " + std::string(kBlacklist) + " was written",
                .found = stale ? *stale + " is older (or missing)" : "regenerated",
                .fix = stale ? display_argv(ir.command->argv) : ""});
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_nouveau() {
    return std::make_unique<Nouveau>();
}

} // namespace gpuprov::steps
