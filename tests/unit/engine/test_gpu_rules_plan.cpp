// Issue 22: NVIDIA's architecture rules judged at plan against the GPUs found on the PCI bus,
// whatever the profile declares (here: no host.gpus.model at all). Preflight blocks with
// NVIDIA's reason and the fix; the driver step says which flavour `auto` chose and why.
#include "host_builder.hpp"

using namespace gpuprov;
using namespace gpuprov::enginetest;

namespace {

/// The engine profile (branch 550, no host.gpus) with the driver and libraries changed.
Profile profile_with(const std::string& branch, const std::string& flavor,
                     std::optional<std::string> cuda = std::nullopt,
                     std::optional<std::string> cudnn = std::nullopt) {
    auto p = load_test_profile();
    p.host.gpus.reset();
    p.driver->branch = branch;
    p.driver->flavor = flavor;
    if (cuda) {
        p.cuda = CudaSpec{.version = *cuda};
    }
    if (cudnn) {
        p.cudnn = CudnnSpec{.version = *cudnn};
    }
    return p;
}

TEST(GpuRulesAtPlan, ProprietaryOnAFoundB200IsRefusedWithNvidiasReason) {
    TestHost host({.gpus = 8, .device_id = 0x2901, .nvswitches = 0}); // HGX B200
    const auto p = profile_with("580", "proprietary");
    StepRunner run(host, p);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "driver.flavor proprietary (proprietary kernel modules) does "
                                   "not support 8× B200 (blackwell) found at 0000:07:00.0"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "open kernel modules only")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "No devices were found")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "fix: set driver.flavor to open or auto")) << r.reason;
}

TEST(GpuRulesAtPlan, OpenOnAFoundB200Passes) {
    TestHost host({.gpus = 8, .device_id = 0x2901, .nvswitches = 0});
    // The engine profile's CUDA 12.4 cannot build for Blackwell (12.8+): refused on the GPUs
    // found, though the profile names no model.
    const auto cuda124 = profile_with("580", "open");
    const auto old = StepRunner(host, cuda124).check("preflight");
    EXPECT_TRUE(contains(old.reason, "CUDA 12.4 cannot build code for 8× B200")) << old.reason;
    const auto p = profile_with("580", "open", "12.8");
    StepRunner run(host, p);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
}

TEST(GpuRulesAtPlan, Branch595OnAFoundV100IsRefused) {
    TestHost host({.gpus = 4, .device_id = 0x1db1, .nvswitches = 0}); // V100 SXM2 16GB
    const auto p = profile_with("595", "proprietary");
    StepRunner run(host, p);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "driver branch 595 no longer supports 4× V100 SXM2 16GB "
                                   "(volta) found at"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "NVIDIA's last driver branch for volta is R580")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "fix: set driver.branch to \"580\" or older")) << r.reason;
}

TEST(GpuRulesAtPlan, LatestCudnn9OnAFoundV100IsRefusedNamingTheLastBuildForIt) {
    TestHost host({.gpus = 4, .device_id = 0x1db1, .nvswitches = 0});
    const auto p = profile_with("580", "proprietary", "12.8", "9");
    StepRunner run(host, p);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "cuDNN 9 (the newest build for CUDA 12.8, 9.17-9.24) does not "
                                   "support compute capability 7.0"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "lists compute capability 7.5 and newer only")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "The last cuDNN release NVIDIA lists for compute capability "
                                   "7.0 is 9.10"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "set cudnn.version to \"9.10\"")) << r.reason;
}

TEST(GpuRulesAtPlan, Cudnn910OnAFoundV100Passes) {
    TestHost host({.gpus = 4, .device_id = 0x1db1, .nvswitches = 0});
    const auto p = profile_with("580", "proprietary", "12.8", "9.10");
    StepRunner run(host, p);
    const auto r = run.check("preflight");
    EXPECT_FALSE(contains(r.reason, "cuDNN")) << r.reason;
}

TEST(GpuRulesAtPlan, AutoOnAFoundB200InstallsTheOpenModulesAndSaysWhy) {
    TestHost host({.gpus = 8, .device_id = 0x2901, .nvswitches = 0});
    const auto p = profile_with("550", "auto");
    StepRunner run(host, p);
    // Branch 550 predates Blackwell (570): preflight says so, and the driver step still shows
    // the flavour auto chose and NVIDIA's reason.
    const auto pre = run.check("preflight");
    EXPECT_TRUE(contains(pre.reason, "driver branch 550 does not support 8× B200")) << pre.reason;
    EXPECT_FALSE(contains(pre.reason, "driver.flavor")) << pre.reason;
    const auto r = run.check("driver");
    const auto it = std::find_if(r.changes.begin(), r.changes.end(), [](const Change& c) {
        return c.kind == Change::Kind::note && contains(c.detail, "driver.flavor auto");
    });
    ASSERT_NE(it, r.changes.end()) << r.reason;
    EXPECT_TRUE(contains(it->detail, "driver.flavor auto: open kernel modules (8× B200 "
                                     "(blackwell) found at 0000:07:00.0"))
        << it->detail;
    EXPECT_TRUE(contains(it->detail, "open kernel modules only")) << it->detail;
}

} // namespace
