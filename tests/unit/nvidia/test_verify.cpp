#include "nvidia_test_util.hpp"

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

// An HGX-style H100 host provisioned for a training profile, every tool answering.
void healthy_h100(FakeSystem& sys) {
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-535.txt"));
    sys.on_command({"nvidia-smi", "topo", "-m"},
                   answer_ok(read_fixture("cmd/topo/hgx-h100-8gpu.txt")));
    sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"}, answer_ok("active\n"));
    sys.on_command({"/usr/local/cuda-12.2/bin/nvcc", "--version"},
                   answer_ok(read_fixture("cmd/nvcc/cuda-12.2.txt")));
    sys.add_file("/usr/local/cuda-12.2/version.json",
                 read_fixture("cmd/files/cuda-12.2-version.json"));
    sys.add_file("/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",
                 read_fixture("cmd/files/cudnn_version-8.9.4.h"));
    sys.on_command({"/sbin/ldconfig", "-p"},
                   answer_ok(read_fixture("cmd/ldconfig/cudnn8-nccl-full.txt")));
    sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnccl2"},
                   answer_ok(read_fixture("cmd/dpkg/query-libnccl2.txt")));
}

Profile training_profile() {
    auto p = driver_profile("535", "12.2");
    p.host.gpus =
        GpuRequirement{.count = 2, .model = "H100", .memory_gib = 80, .interconnect = "nvlink"};
    p.cudnn = CudnnSpec{.version = "8.9"};
    p.nccl = true;
    p.tuning.persistence_mode = true;
    return p;
}

} // namespace

TEST(VerifyProfile, HealthyHostAllPassInStepOrder) {
    FakeSystem sys;
    healthy_h100(sys);
    auto facts = debian_facts();
    facts.nvswitch_count = 4;
    sys.on_command({"nvidia-smi", "-q"},
                   answer_ok(read_fixture("cmd/nvidia-smi/q/q-565-8xh100-sxm-completed.txt")));
    const auto p = training_profile();
    const auto checks = verify_profile({p, facts, Matrix::builtin()}, sys);
    for (const auto& c : checks) {
        EXPECT_TRUE(c.passed) << c.id << ": expected " << c.expected << ", found " << c.found;
    }
    EXPECT_TRUE(all_passed(checks));
    EXPECT_EQ(ids_of(checks),
              (std::vector<std::string>{
                  "gpus.count", "gpus.model", "gpus.memory", "gpus.nvlink", "driver.nvidia-smi",
                  "driver.branch", "driver.kernel-module", "driver.flavor", "driver.cuda-support",
                  "fabric-manager.active", "fabric-manager.fabric-state", "cuda.nvcc-release",
                  "cuda.version-json", "cudnn.header", "cudnn.library", "nccl.library",
                  "nccl.package", "tuning.persistence-mode"}));
}

TEST(VerifyProfile, SkippedStepsAreNotChecked) {
    FakeSystem sys;
    healthy_h100(sys);
    auto p = training_profile();
    p.skip_steps = {"cudnn", "nccl", "preflight"};
    const auto facts = debian_facts();
    const auto checks = verify_profile({p, facts, Matrix::builtin()}, sys);
    for (const auto& c : checks) {
        EXPECT_NE(c.step, "cudnn");
        EXPECT_NE(c.step, "nccl");
        EXPECT_NE(c.step, "preflight");
    }
    EXPECT_NE(find_check(checks, "driver.branch"), nullptr);
}

TEST(VerifyProfile, FreshHostFailsWithoutThrowing) {
    FakeSystem sys;
    sys.on_command_prefix({}, [](const Command&) { return answer_missing(); });
    const auto p = training_profile();
    const auto facts = debian_facts();
    const auto checks = verify_profile({p, facts, Matrix::builtin()}, sys);
    ASSERT_FALSE(checks.empty());
    EXPECT_FALSE(all_passed(checks));
    for (const auto& c : checks) {
        EXPECT_FALSE(c.passed) << c.id;
        EXPECT_FALSE(c.fix.empty()) << c.id;
    }
}
