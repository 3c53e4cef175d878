#pragma once
// Secure Boot on Ubuntu: Canonical's signed precompiled NVIDIA modules (linux-restricted-modules)
// instead of the DKMS package, whose module is unsigned and rejected by the kernel. The choice
// follows ubuntu-drivers --gpgpu (canonical/ubuntu-drivers-common@d3d7856,
// UbuntuDrivers/detect.py: _build_installation_list, get_linux_modules_metapackage,
// _get_headless_no_dkms_metapackage): the headless no-DKMS userspace, the module package built
// for the running kernel's ABI, and the module metapackage of the kernel's flavour, which moves
// with the kernel metapackage so a kernel update brings its module.
#include "common.hpp"

#include <gpuprov/kernel_flavour.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov::steps {

/// Canonical's package set for driver `branch` (server series; `open`: its open modules) on the
/// running `kernel`, in install order: nvidia-headless-no-dkms-<b>-server[-open],
/// nvidia-utils-<b>-server, linux-modules-nvidia-<b>-server[-open]-<kernel> (this kernel's
/// module) and linux-modules-nvidia-<b>-server[-open]-<flavour> (the next kernels'). Empty when
/// the kernel release has no flavour.
[[nodiscard]] std::vector<std::string> signed_module_packages(const std::string& branch, bool open,
                                                              const std::string& kernel);

/// Whether the driver step installs Canonical's signed modules: Ubuntu, Secure Boot on, the
/// `server` flavour (Ubuntu's own driver series; NVIDIA's repository publishes no signed
/// modules for Ubuntu).
[[nodiscard]] bool signed_modules_chosen(const StepContext& ctx);

} // namespace gpuprov::steps
