// Kernel install hooks (issue 23 item 3). Debian and Ubuntu kernel packages run every
// executable in /etc/kernel/postinst.d/ as `HOOK VERSION IMAGE` through `run-parts
// --exit-on-error` (linux-image postinst; dkms's own hook there builds the module first, "dkms"
// sorting before "zz-"), so a non-zero exit fails the package's configuration before
// zz-update-grub adds the kernel to the menu. EL's kernel-install runs
// /etc/kernel/install.d/*.install as `add VERSION ENTRY_DIR IMAGE`; exit 77 skips the plugins
// after it (50-dracut, 90-loaderentry), so no initramfs and no boot entry are made for the
// refused kernel (kernel-install(8)); 45 sorts after dkms's 40-dkms.install.
#include "kernel_hooks.hpp"

#include <fmt/format.h>
#include <gpuprov/profile.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kDebianHook = "/etc/kernel/postinst.d/zz-gpuprov-forecast";
constexpr const char* kElHook = "/etc/kernel/install.d/45-gpuprov-forecast.install";

/// driver.kernel_guard: block.
bool blocks(const StepContext& ctx) {
    return ctx.profile.driver && ctx.profile.driver->kernel_guard == KernelGuard::block;
}

/// The plan's line on the guard, so a review sees what a later kernel install will meet even
/// when the hook is already in place (no file change to show its header).
std::string guard_note(const StepContext& ctx, const ManagedFile& f) {
    return blocks(ctx)
               ? fmt::format("driver.kernel_guard: block: {} refuses a new kernel that has no "
                             "nvidia module and whose headers are missing (its install fails "
                             "before the boot loader lists it)",
                             f.path)
               : fmt::format("driver.kernel_guard: warn: {} logs a new kernel's forecast and "
                             "warns when it would boot without GPUs; it never refuses the kernel",
                             f.path);
}

} // namespace

ManagedFile kernel_hook_file(const StepContext& ctx) {
    return kernel_hook_file(ctx.facts.os.family, ctx.gpuprov_path, blocks(ctx));
}

ManagedFile kernel_hook_file(std::string_view family, const std::string& gpuprov, bool block) {
    // The script holds no profile value: the binary's path (gpuprov chose it) and a fixed flag.
    const auto& bin = gpuprov;
    const auto guard = block ? " --block" : "";
    const auto header = fmt::format(
        "# Managed by gpuprov (driver step); local edits are replaced.\n"
        "# A newly installed kernel gets a next-boot forecast: is an nvidia module there for it.\n"
        "# driver.kernel_guard: {}\n",
        block ? "block (a kernel no module can be built for is refused)" : "warn");
    // Refresh gpuprov_next_boot_ready now, not at the metrics timer's next tick.
    const auto metrics =
        "systemctl --no-block start gpuprov-metrics.service >/dev/null 2>&1 || true\n";
    if (family == "rhel") {
        return {kElHook,
                fmt::format("#!/bin/sh\n{}[ \"$1\" = add ] || exit 0\n[ -x {} ] || exit 0\n"
                            "{} forecast --hook --kernel \"$2\"{}\nrc=$?\n{}"
                            "# 77: kernel-install skips the remaining plugins (no initramfs, no "
                            "boot entry).\n[ $rc -eq 0 ] || exit 77\nexit 0\n",
                            header, bin, bin, guard, metrics),
                0755};
    }
    return {kDebianHook,
            fmt::format("#!/bin/sh\n{}[ -x {} ] || exit 0\n{} forecast --hook --kernel \"$1\"{}\n"
                        "rc=$?\n{}exit $rc\n",
                        header, bin, bin, guard, metrics),
            0755};
}

void check_kernel_hook(const StepContext& ctx, const System& sys, CheckResult& r) {
    const auto f = kernel_hook_file(ctx);
    r.changes.push_back(note(guard_note(ctx, f)));
    const auto st = sys.stat(f.path);
    if (file_matches(sys, f) && st && (st->mode & 0111) != 0) {
        return;
    }
    r.changes.push_back(file_change(sys, f));
    if (file_matches(sys, f)) {
        r.changes.push_back(note("make " + f.path + " executable (run-parts skips it otherwise)"));
    }
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
}

void apply_kernel_hook(const StepContext& ctx, System& sys) {
    const auto f = kernel_hook_file(ctx);
    const auto st = sys.stat(f.path);
    if (!file_matches(sys, f)) {
        write_managed(sys, f);
    } else if (!st || (st->mode & 0111) == 0) {
        // The right text without its execute bits: write_managed keeps an identical file as it
        // is, so the mode is put right here (run-parts skips a file it cannot execute).
        sys.write_file_atomic(f.path, f.content, f.mode);
    }
}

} // namespace gpuprov::steps
