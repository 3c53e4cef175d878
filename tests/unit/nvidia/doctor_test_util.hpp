#pragma once
#include "nvidia_test_util.hpp"

#include <gpuprov/doctor.hpp>

namespace gpuprov::testing {

/// A driver-installed Ubuntu host whose every probe answers cleanly; tests break one thing.
struct DoctorHost {
    FakeSystem sys;
    HostFacts facts = debian_facts();
    DoctorOptions options;

    DoctorHost() {
        PciGpu gpu; // the H100 the scripted nvidia-smi answers for
        gpu.address = "0000:17:00.0";
        gpu.vendor_id = 0x10de;
        gpu.device_id = 0x2330;
        gpu.class_code = 0x030200;
        gpu.driver = "nvidia";
        facts.gpus.push_back(gpu);
        facts.packages = {{"nvidia-driver-535", "535.129.03-0ubuntu1"},
                          {"libnvidia-compute-535", "535.129.03-0ubuntu1"}};
        script_query(sys, "query-535-h100.csv");
        sys.on_command({"dkms", "status"},
                       answer_ok(read_fixture("cmd/dkms/ubuntu-535-old-kernel.txt")));
        sys.on_command({"dpkg", "--audit"}, answer_ok(""));
        sys.on_command({"nvidia-smi"},
                       answer_ok(read_fixture("cmd/nvidia-smi/table-535-h100.txt")));
        // The H100 with MIG disabled (doctor's MIG probe, doctor_mig.cpp).
        sys.on_command({"nvidia-smi", "--query-gpu=index,mig.mode.current,mig.mode.pending",
                        "--format=csv,noheader"},
                       answer_ok("0, Disabled, Disabled\n"));
        sys.on_command({"nvidia-smi", "topo", "-m"},
                       answer_ok(read_fixture("cmd/topo/hgx-h100-8gpu.txt")));
        sys.set_env("PATH", "/usr/local/cuda/bin:/usr/bin:/bin");
    }
    [[nodiscard]] std::vector<Finding> run() const { return diagnose(sys, facts, options); }
};

inline std::vector<std::string> finding_ids(const std::vector<Finding>& all) {
    std::vector<std::string> ids;
    for (const auto& f : all) {
        ids.push_back(f.id);
    }
    return ids;
}

inline const Finding* find_finding(const std::vector<Finding>& all, std::string_view id) {
    for (const auto& f : all) {
        if (f.id == id) {
            return &f;
        }
    }
    return nullptr;
}

} // namespace gpuprov::testing
