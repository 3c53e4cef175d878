// A runfile-installed driver blocks the driver step with the fix; a packaged one does not.
#include "host_builder.hpp"

using namespace gpuprov;
using namespace gpuprov::enginetest;

namespace {

TEST(RunfileDriverStep, BlocksTheDriverStepWithTheUninstallFix) {
    TestHost host;
    host.sys.add_file("/usr/bin/nvidia-uninstall", "");
    host.sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07", "");
    const auto profile = load_test_profile();
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_TRUE(contains(r.reason, "a driver 550.90.07 installed with NVIDIA's .run installer"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "/usr/bin/nvidia-uninstall (the runfile's installer) exists"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "Remove it first: sudo nvidia-installer --uninstall, reboot"))
        << r.reason;
}

TEST(RunfileDriverStep, WithoutTheInstallerTheRunFileItselfUninstalls) {
    TestHost host;
    host.sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01", "");
    const auto profile = load_test_profile();
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "sudo sh NVIDIA-Linux-x86_64-535.183.01.run --uninstall"))
        << r.reason;
}

TEST(RunfileDriverStep, APackagedDriverIsNotARunfileOne) {
    TestHost host;
    host.sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so." + kDriverVersion, "");
    host.set_package("libnvidia-compute-550", kDriverVersion + "-1");
    const auto profile = load_test_profile();
    StepRunner run(host, profile);
    EXPECT_NE(run.check("driver").status, StepStatus::blocked);
}

} // namespace
