#pragma once
// The driver on the rhel family, as NVIDIA packages it for RHEL 8/9: the nvidia-driver dnf
// module stream of the branch and flavour (`<branch>-open`, `<branch>-dkms`), enabled in the
// same transaction that installs its packages, dkms from EPEL, versionlock over the closure.
// Names and streams come from the version matrix (`packages.rhel.driver`).
#include "common.hpp"

namespace gpuprov::steps {

struct RpmDriver {
    ModuleStream module;                   ///< nvidia-driver:580-open
    std::vector<std::string> packages;     ///< the flavour's top-level packages
    std::vector<std::string> other_flavor; ///< the other flavour's packages (removed on a change)
    std::string version_from;              ///< nvidia-driver: the installed driver's version
    std::string dkms;
};

/// Installed packages of the driver's closure, on either family: the installed ones of `roots`
/// and every driver package they pull in (nvidia-driver-<b>, libnvidia-*, kmod-nvidia-*).
/// Holding only the meta package would let the package manager move the rest (NVIDIA's
/// cuda-drivers-<b> depends with `>=`).
[[nodiscard]] std::vector<std::string>
installed_driver_closure(const System& sys, const PackageManager& pm,
                         const std::vector<std::string>& roots);

/// The rhel family's driver for the profile; nullopt (r blocked) when the matrix has no rpm
/// names or the flavour has no module stream.
[[nodiscard]] std::optional<RpmDriver> rpm_driver(const StepContext& ctx, CheckResult& r);

/// The driver's module stream as the transaction must enable it (switching from another
/// stream of the module when one is enabled); nullopt when it is enabled already
/// (/etc/dnf/modules.d, the facts' module_streams).
[[nodiscard]] std::optional<ModuleStream> stream_to_enable(const StepContext& ctx,
                                                           const RpmDriver& drv);

/// The driver step's check on dnf hosts: the module stream enabled (switched from another
/// stream when one is), the flavour's packages of the branch installed (pinned from the
/// rpm-md index), the other flavour's packages removed, the old versionlock released.
void check_rpm_driver(const StepContext& ctx, const System& sys, const PackageManager& pm,
                      const RpmDriver& drv, CheckResult& r);

/// The upstream driver version ("580.95.05") the driver step has installed or will install on
/// the rhel family (the version_from package's), for the parts that must equal it (fabric
/// manager); empty when unknown.
[[nodiscard]] std::string rpm_driver_target_version(const StepContext& ctx, const System& sys,
                                                    const PackageManager& pm);

/// Kernel packages `hold_kernel` locks on the rhel family: the installed kernel packages
/// (dnf's installonly kernel set), so `dnf update` brings no kernel the module is not built for.
[[nodiscard]] std::vector<std::string> rpm_kernel_packages(const System& sys,
                                                           const PackageManager& pm);

} // namespace gpuprov::steps
