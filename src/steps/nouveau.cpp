// nouveau: blacklist the open-source driver so the NVIDIA module can bind the GPUs, and rebuild
// the initramfs, which otherwise still loads nouveau early in boot.
#include "common.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kBlacklist = "/etc/modprobe.d/blacklist-nouveau.conf";

ManagedFile blacklist_file() {
    // The two lines of NVIDIA's CUDA installation guide, "Disabling Nouveau".
    return {kBlacklist,
            std::string(kManagedHeader) + "blacklist nouveau\noptions nouveau modeset=0\n"};
}

std::optional<Command> initramfs_command(const System& sys, const HostFacts& facts) {
    if (facts.os.family == "rhel") {
        return Command{.argv = {"dracut", "--force"}, .timeout = 900s};
    }
    if (sys.exists("/usr/sbin/update-initramfs") || sys.exists("/sbin/update-initramfs")) {
        return Command{.argv = {"update-initramfs", "-u"}, .timeout = 900s};
    }
    return std::nullopt; // no initramfs tooling (containers, some cloud images): nothing to rebuild
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
        if (file_matches(sys, file)) {
            if (ctx.facts.nouveau_loaded) {
                r.reason = "blacklisted; nouveau stays loaded until the next reboot";
            }
            return r;
        }
        r.status = StepStatus::pending;
        r.changes.push_back(file_change(sys, file));
        if (const auto cmd = initramfs_command(sys, ctx.facts)) {
            r.changes.push_back(command_change(*cmd, "so early boot does not load nouveau"));
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
        write_managed(sys, blacklist_file());
        if (const auto cmd = initramfs_command(sys, ctx.facts)) {
            try {
                run_checked(sys, *cmd);
            } catch (const Error&) {
                // Without a matching initramfs the blacklist would be half-done; undo it so the
                // next run retries both.
                restore_managed(sys, kBlacklist);
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
        return {CheckOutcome{.id = "nouveau.blacklisted",
                             .step = "nouveau",
                             .passed = ok,
                             .command = kBlacklist,
                             .excerpt = now.value_or(""),
                             .expected = "blacklist nouveau / options nouveau modeset=0",
                             .found = ok ? "present" : "missing",
                             .fix = ok ? "" : "gpuprov apply PROFILE --only nouveau"}};
    }
};

} // namespace

std::unique_ptr<Step> make_nouveau() {
    return std::make_unique<Nouveau>();
}

} // namespace gpuprov::steps
