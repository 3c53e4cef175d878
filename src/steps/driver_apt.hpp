#pragma once
// The driver on apt, as NVIDIA packages it for the branch and this host's OS (the matrix's
// `packages.debian.driver` schemes): the top-level packages, how the branch is kept from moving,
// and on the pinned scheme the pinning package that goes in first, in its own transaction.
#include "common.hpp"

namespace gpuprov::steps {

struct AptDriver {
    std::string scheme; ///< "suffixed", "pinned", "server" or "signed" (Canonical's)
    BranchLock lock = BranchLock::hold; ///< holds where names carry the branch, else the pin
    std::vector<std::string> roots;     ///< from NVIDIA's repository: cuda-drivers-580, nvidia-open
    std::vector<std::string> from_distro; ///< server: nvidia-driver-<b>-server; signed:
                                          ///< driver_signed.hpp's set
    std::string pin_package;              ///< pinned: nvidia-driver-pinning-595[.71.05]
    std::string version_prefix;           ///< what the roots' versions start with: "595." or
                                          ///< "595.71.05-" (driver.version)
};

/// The driver on this apt host; nullopt with `r` blocked and the reason when NVIDIA packages no
/// such driver (no scheme covers the OS and branch, the open flavour before its first branch).
[[nodiscard]] std::optional<AptDriver> apt_driver(const StepContext& ctx, CheckResult& r);

/// Whether `hold: true` means apt-mark holds on this host (the suffixed scheme), for the parts
/// installed beside the driver that must stay with it (fabric manager, NSCQ).
[[nodiscard]] bool apt_driver_holds(const StepContext& ctx);

/// The driver step's check on apt hosts (after the runfile and lifecycle checks): the scheme's
/// packages of the branch, the pinning package first on the pinned scheme (its pin read from
/// the package for the simulation), the old branch's leftovers removed, holds or unholds as
/// the scheme says.
void check_apt_driver(const StepContext& ctx, const System& sys, const PackageManager& pm,
                      const AptDriver& drv, CheckResult& r);

/// `dpkg --purge NAME`: a pinning package removed by a transaction (or left so by an earlier
/// run) keeps its pin file, a conffile, until purged.
[[nodiscard]] Command pin_purge_command(const std::string& name);

/// The driver's configure phase on apt: purges the pinning packages in dpkg state config-files
/// whose purge the plan showed (check_apt_driver plans them), nothing else.
void purge_pins(System& sys, const AptDriver& drv, const CheckResult& planned);

/// Whether the branch lock holds by its effect: no package of the installed driver closure
/// has an upgrade candidate of another branch (apt-cache policy: what dist-upgrade and
/// unattended-upgrades would install), held ones aside. nullopt where no lock is asked (hold:
/// false on a suffixed branch) or nothing is installed yet.
[[nodiscard]] std::optional<CheckOutcome> branch_lock_outcome(const StepContext& ctx,
                                                              const System& sys);

/// The same judgement over the installed fabric manager, NSCQ, IMEX (and nvidia-modprobe) of
/// the driver's branch: the fabric-manager step's own check, run after it holds them (the
/// driver step's check runs before the fabric-manager step has configured in the same batch).
[[nodiscard]] std::optional<CheckOutcome> fabric_manager_lock_outcome(const StepContext& ctx,
                                                                      const System& sys);

/// The upstream driver version ("595.91.07") the driver step has installed or will install, for
/// the parts that must equal it (fabric manager, NSCQ); empty when unknown.
[[nodiscard]] std::string driver_target_version(const StepContext& ctx, const System& sys,
                                                const PackageManager& pm);

} // namespace gpuprov::steps
