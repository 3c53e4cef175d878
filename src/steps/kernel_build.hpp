#pragma once
// What DKMS needs for each installed kernel (HostFacts::kernels): its build tree package and,
// once the driver is in, the NVIDIA module built for it. The running kernel alone is not
// enough: dracut and update-initramfs prepare every installed kernel, the next boot may pick
// a newer one, and NVIDIA's DKMS packages build in their %post for the running kernel only.
#include <gpuprov/package_manager.hpp>
#include <gpuprov/step.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov::steps {

/// An installed kernel other than the running one whose build tree is not installed.
struct MissingBuildTree {
    std::string kernel;
    std::vector<PackagePin> packages; ///< kernel-devel-<k> (EL) / linux-headers-<k>
    /// Whether an enabled repository carries every package (asked of apt/dnf); nullopt when
    /// the package manager could not tell, and the transaction's simulation answers instead.
    std::optional<bool> available;
};

/// The packages of one kernel's build tree. EL: kernel-devel-<k> (kernel-headers is the
/// userspace headers glibc builds against, one version only: not per kernel); Debian/Ubuntu:
/// linux-headers-<k>.
[[nodiscard]] std::vector<PackagePin> build_tree_packages(const HostFacts& facts,
                                                          const std::string& kernel);

/// The installed kernels, the running one aside, that have no build tree; each with whether
/// the repositories carry its packages.
[[nodiscard]] std::vector<MissingBuildTree>
missing_build_trees(const HostFacts& facts, const System& sys, const PackageManager& pm);

/// The installed kernels, the running one aside, that DKMS can build for once preflight's
/// transaction is in: a build tree now, or one whose packages are not known to be missing.
[[nodiscard]] std::vector<std::string>
other_buildable_kernels(const HostFacts& facts, const System& sys, const PackageManager& pm);

/// The kernels among `kernels` for which `dkms status` shows no nvidia module installed.
[[nodiscard]] std::vector<std::string>
kernels_without_module(const System& sys, const std::vector<std::string>& kernels);

/// Whether the driver on this host is (or will be) built by DKMS: `dkms status` lists an
/// nvidia module, or the driver step installs a *-dkms package.
[[nodiscard]] bool driver_uses_dkms(const System& sys, const std::vector<PackagePin>& installs);

/// dkms's own answer to "build every AUTOINSTALL module for this kernel".
[[nodiscard]] Command dkms_autoinstall(const std::string& kernel);

} // namespace gpuprov::steps
