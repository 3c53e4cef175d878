#include "nvidia_test_util.hpp"

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

std::vector<CheckOutcome> run_driver(const FakeSystem& sys, const Profile& p) {
    const HostFacts facts = debian_facts();
    return check_driver({p, facts, Matrix::builtin()}, sys);
}

} // namespace

TEST(CheckDriver, HealthyR535H100PassesEveryCheck) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-535.txt"));
    const auto checks = run_driver(sys, driver_profile("535", "12.2"));
    EXPECT_EQ(ids_of(checks), (std::vector<std::string>{"driver.nvidia-smi", "driver.branch",
                                                        "driver.kernel-module", "driver.flavor",
                                                        "driver.cuda-support"}));
    for (const auto& c : checks) {
        EXPECT_TRUE(c.passed) << c.id << ": " << c.found;
        EXPECT_TRUE(c.fix.empty()) << c.id;
        EXPECT_EQ(c.step, "driver");
    }
    EXPECT_EQ(find_check(checks, "driver.branch")->found, "535.129.03");
}

TEST(CheckDriver, ProbesWithABoundedTimeout) {
    FakeSystem sys;
    std::chrono::milliseconds seen{0};
    sys.on_command_prefix({"nvidia-smi"}, [&](const Command& cmd) {
        seen = cmd.timeout;
        return answer_ok(read_fixture("cmd/nvidia-smi/query-535-h100.csv"));
    });
    (void)run_driver(sys, driver_profile("535"));
    EXPECT_EQ(seen, std::chrono::milliseconds(30000));
}

TEST(CheckDriver, WrongBranchFailsWithFix) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-535.txt"));
    const auto checks = run_driver(sys, driver_profile("550"));
    const auto* branch = find_check(checks, "driver.branch");
    ASSERT_NE(branch, nullptr);
    EXPECT_FALSE(branch->passed);
    EXPECT_EQ(branch->expected, "branch 550");
    EXPECT_NE(branch->fix.find("gpuprov apply test --only driver"), std::string::npos);
}

TEST(CheckDriver, LoadedModuleOlderThanUserspaceFails) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-515.txt"));
    const auto module_all = run_driver(sys, driver_profile("535"));
    const auto* module = find_check(module_all, "driver.kernel-module");
    ASSERT_NE(module, nullptr);
    EXPECT_FALSE(module->passed);
    EXPECT_EQ(module->found, "515.76");
    EXPECT_NE(module->fix.find("reboot"), std::string::npos);
}

TEST(CheckDriver, OpenFlavorReadFromProcVersion) {
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-580-open.txt"));
    auto p = driver_profile("580");
    p.driver->flavor = "open";
    const auto checks = run_driver(sys, p);
    EXPECT_TRUE(find_check(checks, "driver.flavor")->passed);
    // The capture's module (580.142) is not the query's userspace (580.126.09).
    EXPECT_FALSE(find_check(checks, "driver.kernel-module")->passed);
    p.driver->flavor = "proprietary";
    const auto proprietary = run_driver(sys, p);
    EXPECT_FALSE(find_check(proprietary, "driver.flavor")->passed);
}

TEST(CheckDriver, R535RunsCuda124UnderMinorVersionCompatibility) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-535.txt"));
    const auto support_all = run_driver(sys, driver_profile("535", "12.4"));
    const auto* support = find_check(support_all, "driver.cuda-support");
    ASSERT_NE(support, nullptr);
    EXPECT_TRUE(support->passed) << support->found;
    EXPECT_NE(support->expected.find(">= 525.60.13 (minor version compatibility for CUDA 12.x"),
              std::string::npos)
        << support->expected;
    EXPECT_NE(support->expected.find("550.54.14"), std::string::npos) << support->expected;
}

TEST(CheckDriver, DriverTooOldForProfileCuda) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-535.txt"));
    const auto support_all = run_driver(sys, driver_profile("535", "13.0"));
    const auto* support = find_check(support_all, "driver.cuda-support");
    ASSERT_NE(support, nullptr);
    EXPECT_FALSE(support->passed);
    EXPECT_NE(support->expected.find(">= 580.65.06"), std::string::npos) << support->expected;
}

TEST(CheckDriver, NotLoadedIsOneFailedCheck) {
    FakeSystem sys;
    script_query_error(sys, "error-driver-not-loaded.txt");
    const auto checks = run_driver(sys, driver_profile("535", "12.2"));
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[0].found, "the NVIDIA kernel module is not loaded");
    EXPECT_NE(checks[0].excerpt.find("couldn't communicate"), std::string::npos);
    EXPECT_NE(checks[0].fix.find("gpuprov doctor"), std::string::npos);
}

TEST(CheckDriver, MissingNvidiaSmiIsAFailureNotACrash) {
    FakeSystem sys;
    sys.on_command(smi_query_argv(), answer_missing());
    const auto checks = run_driver(sys, driver_profile("535"));
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].found, "nvidia-smi is not installed");
    EXPECT_NE(checks[0].fix.find("--only driver"), std::string::npos);
}

TEST(CheckDriver, NvmlMismatchNamed) {
    FakeSystem sys;
    script_query_error(sys, "error-nvml-mismatch.txt");
    const auto checks = run_driver(sys, driver_profile("535"));
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].found, "NVML driver/library version mismatch");
}

TEST(CheckDriver, NoDriverInProfileNoChecks) {
    FakeSystem sys; // no command scripted: running one would fail the test
    Profile p;
    p.name = "none";
    EXPECT_TRUE(run_driver(sys, p).empty());
}

// A GPU bound to nova_core fails verify even while nvidia-smi answers for the others.
TEST(CheckDriver, AGpuBoundToNovaCoreFails) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.add_file("/proc/driver/nvidia/version",
                 read_fixture("cmd/files/proc-driver-version-535.txt"));
    HostFacts facts = debian_facts();
    PciGpu gpu;
    gpu.address = "0000:3b:00.0";
    gpu.driver = "NovaCore";
    facts.gpus.push_back(gpu);
    const auto p = driver_profile("535");
    const auto checks = check_driver({p, facts, Matrix::builtin()}, sys);
    const auto* bound = find_check(checks, "driver.bound");
    ASSERT_NE(bound, nullptr);
    EXPECT_FALSE(bound->passed);
    EXPECT_EQ(bound->found, "0000:3b:00.0 bound to nova_core");
    EXPECT_NE(bound->fix.find("--only nouveau"), std::string::npos) << bound->fix;
    // Without it the check is not there at all (the healthy list above stays as it was).
    facts.gpus.back().driver = "nvidia";
    const auto healthy = check_driver({p, facts, Matrix::builtin()}, sys);
    EXPECT_EQ(find_check(healthy, "driver.bound"), nullptr);
}
