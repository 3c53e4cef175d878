// The `mig:` key: the short form, mig-parted's map and entry forms (NVIDIA/mig-parted
// examples/config.yaml), and errors at the value with the profiles each GPU offers.
#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;
using Devices = std::vector<std::pair<std::string, int>>;

TEST(MigProfile, ShortFormAllSevenSlices) {
    const auto p = load("name: x\nmig: {mode: enabled, layout: {all: [1g.10gb x7]}}\n");
    ASSERT_TRUE(p.mig);
    EXPECT_TRUE(p.mig->enabled);
    ASSERT_EQ(p.mig->layout.size(), 1U);
    EXPECT_TRUE(p.mig->layout[0].all);
    EXPECT_EQ(p.mig->layout[0].devices, (Devices{{"1g.10gb", 7}}));
    EXPECT_EQ(p.mig->for_gpu(3), &p.mig->layout[0]);
}

TEST(MigProfile, MapFormAndPerGpuEntriesWin) {
    const auto p = load("name: x\nmig:\n  layout:\n    all: {\"3g.40gb\": 1, \"2g.20gb\": 1, "
                        "\"1g.10gb\": 2}\n    \"1\": [7g.80gb]\n");
    ASSERT_EQ(p.mig->layout.size(), 2U);
    EXPECT_EQ(p.mig->layout[0].devices, (Devices{{"3g.40gb", 1}, {"2g.20gb", 1}, {"1g.10gb", 2}}));
    EXPECT_EQ(p.mig->for_gpu(1)->devices, (Devices{{"7g.80gb", 1}}));
    EXPECT_EQ(p.mig->for_gpu(0), &p.mig->layout[0]);
}

TEST(MigProfile, MigPartedEntries) {
    const auto p = load("name: x\nmig:\n  layout:\n    - devices: [0, 1, 2, 3]\n      "
                        "mig-enabled: false\n    - devices: [4]\n      mig-enabled: true\n      "
                        "mig-devices:\n        \"1g.5gb\": 7\n");
    ASSERT_EQ(p.mig->layout.size(), 2U);
    EXPECT_FALSE(p.mig->layout[0].mig_enabled);
    EXPECT_EQ(p.mig->layout[0].gpus, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(p.mig->for_gpu(4)->devices, (Devices{{"1g.5gb", 7}}));
    EXPECT_EQ(p.mig->for_gpu(5), nullptr);
}

TEST(MigProfile, UnknownProfileNamesTheBoardsAndTheirProfiles) {
    const auto e = load_error("name: x\nmig:\n  layout: {all: [1g.11gb x7]}\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(contains(e.message(), "unknown MIG profile '1g.11gb'")) << e.what();
    EXPECT_TRUE(contains(e.message(), "did you mean '1g.10gb'")) << e.what();
    EXPECT_TRUE(contains(e.message(), "A100 SXM4 40GB")) << e.what();
    EXPECT_TRUE(contains(e.message(), "H200 SXM 141GB")) << e.what();
    EXPECT_TRUE(contains(e.message(), "7g.141gb")) << e.what();
}

TEST(MigProfile, MoreThanSevenSlicesIsRefused) {
    const auto e = load_error("name: x\nmig: {layout: {all: [3g.40gb x2, 2g.20gb]}}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "needs 8 compute slices; a GPU has 7")) << e.what();
}

TEST(MigProfile, BadCountsModesAndShapes) {
    EXPECT_TRUE(contains(load_error("name: x\nmig: {layout: {all: [1g.10gb x9]}}\n").message(),
                         "the count after 'x' must be 1 to 7"));
    EXPECT_TRUE(contains(load_error("name: x\nmig: {mode: on}\n").message(),
                         "'mig.mode' must be one of enabled, disabled"));
    EXPECT_TRUE(
        contains(load_error("name: x\nmig: {mode: disabled, layout: {all: [1g.10gb]}}\n").message(),
                 "needs mig.mode: enabled"));
    EXPECT_TRUE(contains(load_error("name: x\nmig: {layout: {gpu0: [1g.10gb]}}\n").message(),
                         "'mig.layout.gpu0' must be all, a GPU index"));
    EXPECT_TRUE(contains(load_error("name: x\nmig: {layout: [{devices: all, mig-enabled: "
                                    "false, mig-devices: {1g.10gb: 1}}]}\n")
                             .message(),
                         "needs mig-enabled: true"));
    const auto e = load_error("name: x\nmig:\n  layout:\n    - {devices: all, mig-device: {}}\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "did you mean 'mig-devices'")) << e.what();
}

TEST(MigProfile, DisabledEverywhere) {
    const auto p = load("name: x\nmig: {mode: disabled}\n");
    EXPECT_FALSE(p.mig->enabled);
    EXPECT_TRUE(p.mig->layout.empty());
    EXPECT_FALSE(load("name: x\n").mig);
}

} // namespace
} // namespace gpuprov
