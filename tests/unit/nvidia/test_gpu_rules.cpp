// driver.flavor auto and the architecture rules on GPUs detected from sysfs fixtures
// (tests/fixtures/sysfs/): open where NVIDIA requires it (Blackwell, Grace Hopper) or
// recommends it (Turing+ from R560), proprietary where the open modules do not load
// (Volta), and unknown or mixed GPUs reported, never guessed.
#include <fake_system.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/gpu_rules.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;

bool has(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

HostFacts facts_of(const std::string& tree) {
    FakeSystem sys;
    if (!tree.empty()) {
        sys.load_tree("sysfs/" + tree);
    }
    return detect_facts(sys, Matrix::builtin());
}

Profile auto_profile(const std::string& branch) {
    Profile p;
    p.name = "test";
    p.driver = DriverSpec{.branch = branch};
    return p;
}

TEST(DriverFlavorAuto, IsTheDefault) {
    EXPECT_EQ(DriverSpec{}.flavor, "auto");
}

TEST(DriverFlavorAuto, OpenOnAFoundB200BecauseNvidiaRequiresIt) {
    const auto c = driver_flavor(auto_profile("580"), facts_of("hgx-b200"), Matrix::builtin());
    EXPECT_TRUE(c.automatic);
    EXPECT_EQ(c.flavor, "open");
    EXPECT_TRUE(has(c.why, "8× B200 (blackwell) found at 0000:11:00.0")) << c.why;
    EXPECT_TRUE(has(c.why, "NVIDIA supports Blackwell and Grace Hopper with the open kernel "
                           "modules only"))
        << c.why;
}

TEST(DriverFlavorAuto, OpenOnAFoundGh200EvenOnABranchBeforeR560) {
    // Hopper runs both flavours, Grace Hopper only the open one: the row says so, not the arch.
    const auto c = driver_flavor(auto_profile("550"), facts_of("gh200"), Matrix::builtin());
    EXPECT_EQ(c.flavor, "open");
    EXPECT_TRUE(has(c.why, "1× GH200 144GB HBM3e (hopper) found at 0000:11:00.0")) << c.why;
    EXPECT_TRUE(has(c.why, "open kernel modules only")) << c.why;
}

TEST(DriverFlavorAuto, OpenOnADeclaredGh200WhenNoGpuIsFound) {
    auto p = auto_profile("580");
    p.host.gpus = GpuRequirement{.count = 1, .model = std::string("GH200")};
    const auto c = driver_flavor(p, facts_of(""), Matrix::builtin());
    EXPECT_EQ(c.flavor, "open");
    EXPECT_TRUE(has(c.why, "GH200 144GB HBM3e (hopper), host.gpus.model")) << c.why;
}

TEST(DriverFlavorAuto, ProprietaryOnAFoundV100) {
    const auto c = driver_flavor(auto_profile("580"), facts_of("v100-sxm2"), Matrix::builtin());
    EXPECT_EQ(c.flavor, "proprietary");
    EXPECT_TRUE(has(c.why, "4× V100 SXM2 16GB (volta)")) << c.why;
    EXPECT_TRUE(has(c.why, "Maxwell, Pascal, or Volta")) << c.why;
}

TEST(DriverFlavorAuto, TuringAndNewerFollowNvidiasDefaultForTheBranch) {
    HostFacts f; // one A100 PCIe 40GB (ampere)
    f.gpus.push_back(PciGpu{.address = "0000:08:00.0", .vendor_id = 0x10de, .device_id = 0x20B1});
    const auto open = driver_flavor(auto_profile("580"), f, Matrix::builtin());
    EXPECT_EQ(open.flavor, "open");
    EXPECT_TRUE(has(open.why, "Turing or newer on branch 580")) << open.why;
    EXPECT_TRUE(has(open.why, "Starting in the 560 driver release series")) << open.why;
    const auto old = driver_flavor(auto_profile("550"), f, Matrix::builtin());
    EXPECT_EQ(old.flavor, "proprietary");
    EXPECT_TRUE(has(old.why, "branch 550 predates R560")) << old.why;
}

TEST(DriverFlavorAuto, UnknownGpuIsReportedNotGuessed) {
    HostFacts f;
    f.gpus.push_back(PciGpu{.address = "0000:3b:00.0", .vendor_id = 0x10de, .device_id = 0x9999});
    const auto c = driver_flavor(auto_profile("580"), f, Matrix::builtin());
    EXPECT_EQ(c.flavor, "");
    EXPECT_TRUE(has(c.why, "0x9999 at 0000:3b:00.0 is not in gpuprov's GPU table")) << c.why;
    const auto problems = found_gpu_problems(auto_profile("580"), f, Matrix::builtin());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_TRUE(has(problems[0].fix, "set driver.flavor to open")) << problems[0].fix;
}

TEST(DriverFlavorAuto, MixedBlackwellAndVoltaIsReportedNotGuessed) {
    HostFacts f;
    f.gpus.push_back(PciGpu{.address = "0000:17:00.0", .vendor_id = 0x10de, .device_id = 0x2901});
    f.gpus.push_back(PciGpu{.address = "0000:31:00.0", .vendor_id = 0x10de, .device_id = 0x1DB1});
    const auto c = driver_flavor(auto_profile("580"), f, Matrix::builtin());
    EXPECT_EQ(c.flavor, "");
    EXPECT_TRUE(has(c.why, "1× B200 (blackwell) found at 0000:17:00.0 need the open kernel "
                           "modules and 1× V100 SXM2 16GB (volta) found at 0000:31:00.0 cannot "
                           "load them"))
        << c.why;
}

TEST(DriverFlavorAuto, MixedTuringAndVoltaTakeTheOneFlavourBothLoad) {
    HostFacts f;
    f.gpus.push_back(PciGpu{.address = "0000:17:00.0", .vendor_id = 0x10de, .device_id = 0x1EB8});
    f.gpus.push_back(PciGpu{.address = "0000:31:00.0", .vendor_id = 0x10de, .device_id = 0x1DB1});
    const auto c = driver_flavor(auto_profile("580"), f, Matrix::builtin());
    EXPECT_EQ(c.flavor, "proprietary");
}

TEST(DriverFlavorAuto, NoGpuAndNoModelTakesNvidiasDefaultAndSaysSo) {
    const auto c = driver_flavor(auto_profile("595"), facts_of(""), Matrix::builtin());
    EXPECT_EQ(c.flavor, "open");
    EXPECT_TRUE(has(c.why, "no NVIDIA GPU found and no host.gpus.model")) << c.why;
}

TEST(DriverFlavorExplicit, IsKeptAsWritten) {
    auto p = auto_profile("580");
    for (const std::string f : {"open", "proprietary", "server"}) {
        p.driver->flavor = f;
        const auto c = driver_flavor(p, facts_of("hgx-b200"), Matrix::builtin());
        EXPECT_EQ(c.flavor, f);
        EXPECT_FALSE(c.automatic);
    }
}

TEST(FoundGpuRules, OpenOnAFoundV100IsRefused) {
    auto p = auto_profile("580");
    p.driver->flavor = "open";
    const auto problems = found_gpu_problems(p, facts_of("v100-sxm2"), Matrix::builtin());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_TRUE(has(problems[0].problem, "driver.flavor open does not support 4× V100 SXM2 16GB"))
        << problems[0].problem;
    EXPECT_EQ(problems[0].fix, "set driver.flavor to proprietary or auto");
}

TEST(FoundGpuRules, Cuda13OnAFoundV100IsRefused) {
    auto p = auto_profile("580");
    p.cuda = CudaSpec{.version = "13.0"};
    const auto problems = found_gpu_problems(p, facts_of("v100-sxm2"), Matrix::builtin());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_TRUE(has(problems[0].problem, "CUDA 13.0 no longer builds code for 4× V100 SXM2 16GB"))
        << problems[0].problem;
    EXPECT_TRUE(has(problems[0].problem, "the last release that does is 12.9"))
        << problems[0].problem;
}

TEST(FoundGpuRules, B300NeedsItsOwnFirstBranch) {
    HostFacts f;
    f.gpus.push_back(PciGpu{.address = "0000:17:00.0", .vendor_id = 0x10de, .device_id = 0x3182});
    auto p = auto_profile("570");
    const auto problems = found_gpu_problems(p, f, Matrix::builtin());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_TRUE(has(problems[0].problem, "driver branch 570 does not support 1× B300 SXM6 AC"))
        << problems[0].problem;
    EXPECT_EQ(problems[0].fix, "set driver.branch to \"575\" or newer");
}

TEST(FoundGpuRules, NothingFoundJudgesNothingHere) {
    auto p = auto_profile("595");
    p.driver->flavor = "proprietary";
    EXPECT_TRUE(found_gpu_problems(p, facts_of(""), Matrix::builtin()).empty());
}

} // namespace
} // namespace gpuprov
