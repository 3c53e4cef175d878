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
    // The profile this host is provisioned with: the one given to doctor, else the one the
    // last apply used (the journal), so the fix can be pasted as it is.
    std::string name = "<your profile>";
    if (options.profile != nullptr) {
        name = options.profile->name;
    } else if (options.journal != nullptr && !options.journal->profile.empty()) {
        name = options.journal->profile;
    }
    return "gpuprov apply " + name + " --only " + step;
}

namespace {

/// No NVIDIA GPU on the PCI bus, and nvidia-smi sees none either: the driver findings
/// ("install the driver") would send the reader the wrong way on a host that has no GPU.
bool no_nvidia_gpu(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!ctx.facts.gpus.empty() || ctx.smi.result.ok()) {
        return false;
    }
    Finding f{.id = "no-nvidia-gpu", .severity = "error"};
    f.summary = "no NVIDIA GPU on the PCI bus";
    f.evidence.push_back({"/sys/bus/pci/devices",
                          "no device of vendor 0x10de with a display or 3D controller class "
                          "(0x03xx)"});
    f.fix = "run on a host with an NVIDIA GPU: on a cloud VM a GPU instance type with the GPU "
            "attached (`lspci -d 10de:` lists it); on bare metal a seated, powered card that "
            "the firmware enables (above-4G decoding for data-centre GPUs)";
    out.push_back(std::move(f));
    return true;
}

} // namespace

} // namespace nvidia_detail

std::vector<Finding> diagnose(const System& sys, const HostFacts& facts,
                              const DoctorOptions& options) {
    using namespace nvidia_detail;
    const DoctorContext ctx{sys, facts, options, query_gpus(sys)};
    std::vector<Finding> out;
    if (!no_nvidia_gpu(ctx, out)) {
        diagnose_driver(ctx, out);
    }
    diagnose_toolkit(ctx, out);
    diagnose_host(ctx, out);
    diagnose_infiniband(ctx, out);
    diagnose_fabric(ctx, out);
    diagnose_mig(ctx, out);
    diagnose_container(ctx, out);
    return out;
}

} // namespace gpuprov
