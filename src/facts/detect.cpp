// Assembles HostFacts from the per-fact readers. Everything here is file reads through System;
// no command runs, so `plan` pays a few milliseconds for facts, not nvidia-smi's second.
#include "detectors.hpp"

#include <algorithm>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::string repo_arch_of(const std::string& machine) {
    if (machine == "x86_64") {
        return "x86_64";
    }
    if (machine == "aarch64") {
        return "sbsa"; // NVIDIA's server-Arm repo; "arm64" there is Jetson cross packages
    }
    return {};
}

std::string pkg_arch_of(const std::string& machine, const std::string& family) {
    if (family == "debian") {
        if (machine == "x86_64") {
            return "amd64";
        }
        if (machine == "aarch64") {
            return "arm64";
        }
        return {};
    }
    if (family == "rhel" && (machine == "x86_64" || machine == "aarch64")) {
        return machine;
    }
    return {};
}

} // namespace

HostFacts detect_facts(const System& sys, const Matrix& matrix) {
    using namespace facts_detail;
    HostFacts facts;
    facts.os = read_os(sys);
    facts.arch = sys.machine();
    facts.repo_arch = repo_arch_of(facts.arch);
    facts.pkg_arch = pkg_arch_of(facts.arch, facts.os.family);
    if (const auto release = sys.read_file("/proc/sys/kernel/osrelease")) {
        facts.kernel = std::string(trim(*release));
    }
    facts.kernel_headers = has_build_link(sys, facts.kernel);
    read_pci(sys, matrix, facts);
    facts.infiniband = read_infiniband(sys);
    facts.nvlink5_switch_count =
        static_cast<int>(std::count_if(facts.infiniband.begin(), facts.infiniband.end(),
                                       [](const IbDevice& d) { return d.nvswitch; }));
    facts.peermem_loaded = sys.exists("/sys/module/nvidia_peermem");
    facts.nouveau_loaded = read_module_loaded(sys, "nouveau");
    facts.nova_core_loaded =
        read_module_loaded(sys, "nova_core") || !gpus_bound_to_nova_core(facts).empty();
    facts.secure_boot = read_secure_boot(sys);
    facts.driver = read_loaded_driver(sys);
    facts.cuda = read_cuda_installs(sys);
    facts.cuda_default_link = read_cuda_default_link(sys);
    facts.cudnn = read_cudnn(sys);
    // dpkg's status file, or `rpm -qa` (the one command facts run, and only when an rpm
    // database exists; cached while the database files are unchanged).
    facts.packages = read_nvidia_packages(sys, facts.os.family);
    facts.runfile_driver = detect_runfile_driver(sys, facts.packages);
    read_el_facts(sys, facts);
    facts.kernels = read_installed_kernels(sys, facts);
    facts.memory_bytes = read_memory(sys);
    facts.root_disk = sys.disk_space("/");
    return facts;
}

} // namespace gpuprov
