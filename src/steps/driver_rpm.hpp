#pragma once
// The driver on the rhel family, as NVIDIA packages it. RHEL 8/9: the nvidia-driver dnf module
// stream of the branch and flavour (`<branch>-open`, `<branch>-dkms`), enabled in the same
// transaction that installs its packages. RHEL 10: no module streams; every driver package the
// top-level packages pull in is pinned to the branch's build from the index, and versionlock
// keeps the branch afterwards. dkms from EPEL on all. Names, streams and the EL major without
// streams come from the version matrix (`packages.rhel.driver`).
#include "common.hpp"

namespace gpuprov::steps {

struct RpmDriver {
    ModuleStream module;                   ///< nvidia-driver:580-open (unused when !modular)
    bool modular = true;                   ///< false: NVIDIA publishes no streams (EL 10)
    std::vector<std::string> packages;     ///< the flavour's top-level packages
    std::vector<std::string> other_flavor; ///< the other flavour's packages (removed on a change)
    std::string version_from;              ///< nvidia-driver: the installed driver's version
    std::string dkms;
};

/// The EL major of the host's NVIDIA repository (rhel10 -> 10); 0 when it has none.
[[nodiscard]] int el_major(const HostFacts& facts);

/// Whether gpuprov versionlocks the driver's branch on this rhel host: always where NVIDIA
/// publishes no module streams (EL 10: nothing else keeps dnf in the branch), with
/// `driver.hold` where it does. False off the rhel family or without a driver.
[[nodiscard]] bool rpm_branch_locked(const StepContext& ctx);

/// The package that brings `dnf versionlock` for this EL major (the matrix's
/// packages.rhel.driver.versionlock_plugin); empty when the matrix names none.
[[nodiscard]] std::string versionlock_plugin_package(const StepContext& ctx);

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
/// rpm-md index; without streams their whole driver closure, see rpm_branch_closure), the other
/// flavour's packages removed, the old versionlock released.
void check_rpm_driver(const StepContext& ctx, const System& sys, const PackageManager& pm,
                      const RpmDriver& drv, CheckResult& r);

/// Without module streams nothing keeps dnf inside the branch: nvidia-open requires
/// `nvidia-driver >= V` (floor only) and nvidia-kmod-common requires `nvidia-modprobe` with no
/// version, so dnf takes the newest build of any branch (real dnf:
/// tests/fixtures/cmd/dnf/el10-install-roots.txt pulls nvidia-modprobe 610 for a 595 driver).
/// Returns `roots` followed by every driver package they require, directly or through other
/// driver packages, each resolved through the index's Provides and pinned to the roots' build
/// (the same upstream version; else the newest of `branch`), plus `also` (installed driver
/// packages that must move with the branch) where the index has them at that build. A
/// capability two driver packages provide is left to dnf unless a pinned package provides it;
/// the engine's cross-branch guard catches what dnf then picks.
[[nodiscard]] std::vector<PackagePin> rpm_branch_closure(const PackageIndex& index,
                                                         const std::vector<PackagePin>& roots,
                                                         const std::string& branch,
                                                         const std::vector<std::string>& also);

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
