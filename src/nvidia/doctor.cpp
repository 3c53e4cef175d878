#include "doctor_parts.hpp"

#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace nvidia_detail {

std::map<std::string, std::string> driver_packages(const HostFacts& facts) {
    // Packages that put a driver on the host, across NVIDIA's, Ubuntu's, Debian's and RHEL's
    // names (reference §3.2). Toolkit, cuDNN and container packages are not drivers.
    static const char* const kPrefixes[] = {
        "nvidia-driver", "cuda-drivers", "nvidia-dkms",  "libnvidia-compute", "nvidia-kernel",
        "nvidia-open",   "kmod-nvidia",  "nvidia-utils", "nvidia-headless",   "libcuda1",
    };
    std::map<std::string, std::string> out;
    for (const auto& [name, version] : facts.packages) {
        for (const char* prefix : kPrefixes) {
            if (starts_with(name, prefix)) {
                out.emplace(name, version);
                break;
            }
        }
    }
    return out;
}

std::string apply_hint(const DoctorOptions& options, const std::string& step) {
    const auto name = options.profile != nullptr ? options.profile->name : "PROFILE";
    return "gpuprov apply " + name + " --only " + step;
}

} // namespace nvidia_detail

std::vector<Finding> diagnose(const System& sys, const HostFacts& facts,
                              const DoctorOptions& options) {
    using namespace nvidia_detail;
    const DoctorContext ctx{sys, facts, options, query_gpus(sys)};
    std::vector<Finding> out;
    diagnose_driver(ctx, out);
    diagnose_toolkit(ctx, out);
    diagnose_host(ctx, out);
    diagnose_infiniband(ctx, out);
    diagnose_container(ctx, out);
    return out;
}

} // namespace gpuprov
