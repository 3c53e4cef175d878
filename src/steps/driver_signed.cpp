#include "driver_signed.hpp"

#include <cctype>
#include <gpuprov/gpu_rules.hpp>

namespace gpuprov {

std::string ubuntu_kernel_flavour(std::string_view kernel) {
    // <upstream version>-<ABI number>-<flavour>: the flavour is what follows the ABI number.
    const auto first = kernel.find('-');
    if (first == std::string_view::npos) {
        return {};
    }
    const auto abi_end = kernel.find('-', first + 1);
    if (abi_end == std::string_view::npos || abi_end == first + 1 || abi_end + 1 >= kernel.size()) {
        return {};
    }
    for (auto i = first + 1; i < abi_end; ++i) {
        if (std::isdigit(static_cast<unsigned char>(kernel[i])) == 0) {
            return {};
        }
    }
    return std::string(kernel.substr(abi_end + 1));
}

} // namespace gpuprov

namespace gpuprov::steps {

std::vector<std::string> signed_module_packages(const std::string& branch, bool open,
                                                const std::string& kernel) {
    const auto flavour = ubuntu_kernel_flavour(kernel);
    if (flavour.empty()) {
        return {};
    }
    // ubuntu-drivers' "flavour" of a driver: <branch>-server[-open] (NvidiaPkgNameInfo).
    const auto series = branch + "-server" + (open ? "-open" : "");
    return {
        "nvidia-headless-no-dkms-" + series,
        // The utilities come from the closed series for both module flavours (nvidia-smi).
        "nvidia-utils-" + branch + "-server",
        // This kernel's module, by ABI: the flavour metapackage alone would follow the newest
        // kernel in the archive, which may not be the one running.
        "linux-modules-nvidia-" + series + "-" + kernel,
        // The flavour metapackage: versioned with linux-image-<flavour>, so the kernel update
        // that brings a new ABI brings its module too.
        "linux-modules-nvidia-" + series + "-" + flavour,
    };
}

bool signed_modules_chosen(const StepContext& ctx) {
    return ctx.profile.driver && ctx.facts.os.id == "ubuntu" &&
           ctx.facts.secure_boot.value_or(false) &&
           driver_flavor(ctx.profile, ctx.facts, ctx.matrix).flavor == "server";
}

} // namespace gpuprov::steps
