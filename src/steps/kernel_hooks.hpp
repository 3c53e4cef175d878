#pragma once
// The kernel install hooks the driver step installs: a new kernel gets a next-boot forecast
// (gpuprov forecast --hook) the moment its package is configured, logged and exported as
// gpuprov_next_boot_ready; with driver.kernel_guard: block, a kernel no module can be built for
// is refused.
#include "common.hpp"

namespace gpuprov::steps {

/// The hook file for this host's family: Debian/Ubuntu's /etc/kernel/postinst.d/, EL's
/// kernel-install plugin directory /etc/kernel/install.d/.
[[nodiscard]] ManagedFile kernel_hook_file(const StepContext& ctx);
/// The same from its parts: the OS family ("debian", "rhel"), the binary the hook runs, and
/// whether it refuses a kernel no module can be built for.
[[nodiscard]] ManagedFile kernel_hook_file(std::string_view family, const std::string& gpuprov,
                                           bool block);
/// Plans the hook: a file change (and pending) when it is missing, different or not executable.
void check_kernel_hook(const StepContext& ctx, const System& sys, CheckResult& r);
/// Writes the hook (mode 0755) unless it is already in place.
void apply_kernel_hook(const StepContext& ctx, System& sys);

} // namespace gpuprov::steps
