// The Fabric sections of `nvidia-smi -q`, on outputs captured on real machines (byte for byte;
// sources in tests/fixtures/cmd/nvidia-smi/q/README.md).
#include <fake_system.hpp>
#include <gpuprov/smi_fabric.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

namespace {

std::vector<SmiFabric> fixture(const std::string& name) {
    return parse_smi_fabric(read_fixture("cmd/nvidia-smi/q/" + name));
}

} // namespace

TEST(SmiFabric, EightH100SxmRegisteredOn565) {
    const auto f = fixture("q-565-8xh100-sxm-completed.txt");
    ASSERT_EQ(f.size(), 8u);
    EXPECT_EQ(f[0].gpu, "00000000:18:00.0");
    EXPECT_EQ(f[1].gpu, "00000000:2A:00.0");
    EXPECT_EQ(f[0].product, "NVIDIA H100 80GB HBM3");
    for (const auto& g : f) {
        EXPECT_EQ(g.state, "Completed") << g.gpu;
        EXPECT_EQ(g.status, "Success") << g.gpu;
        EXPECT_EQ(g.clique_id, "0");
        EXPECT_EQ(g.cluster_uuid, "00000000-0000-0000-0000-000000000000");
        EXPECT_EQ(g.health_summary, ""); // 565 prints Health → Bandwidth only
        EXPECT_EQ(judge_fabric(g), FabricVerdict::registered);
    }
}

TEST(SmiFabric, A100SxmReportsNoFabricState) {
    // R555 on a 4-GPU A100 SXM board: the section is there, every value N/A.
    const auto f = fixture("q-555-4xa100-sxm-na.txt");
    ASSERT_EQ(f.size(), 4u);
    for (const auto& g : f) {
        EXPECT_EQ(g.state, "N/A");
        EXPECT_EQ(judge_fabric(g), FabricVerdict::not_reported);
    }
    EXPECT_EQ(f[3].product, "NVIDIA A100-SXM4-80GB");
}

TEST(SmiFabric, InProgressExcerptIsPending) {
    // `nvidia-smi -q | grep -A5 "Fabric"` on an H100 SXM whose fabric manager never ran.
    const auto f = fixture("q-570-h100-in-progress-excerpt.txt");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].gpu, ""); // the excerpt has no GPU header
    EXPECT_EQ(f[0].state, "In Progress");
    EXPECT_EQ(f[0].status, "N/A");
    EXPECT_EQ(judge_fabric(f[0]), FabricVerdict::pending);
    EXPECT_EQ(describe_fabric(f[0]), "State In Progress, Status N/A");
}

TEST(SmiFabric, Gb200CompletedButUnhealthyFails) {
    // `grep -E -C3 "ClusterUUID|CliqueId"` on a GB200 node: registered, health Unhealthy.
    const auto f = fixture("q-gb200-unhealthy-excerpt.txt");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].clique_id, "2");
    EXPECT_EQ(f[0].cluster_uuid, "dc6e40c4-d722-4357-9ba6-5291dd461278");
    EXPECT_EQ(f[0].health_summary, "Unhealthy");
    EXPECT_EQ(judge_fabric(f[0]), FabricVerdict::failed);
    EXPECT_EQ(describe_fabric(f[0]), "State Completed, Status Success, Health Unhealthy");
}

TEST(SmiFabric, VerdictsOfEachState) {
    SmiFabric f;
    f.state = "Not Started";
    EXPECT_EQ(judge_fabric(f), FabricVerdict::pending);
    f.state = "Completed";
    f.status = "Success";
    f.health_summary = "Healthy";
    EXPECT_EQ(judge_fabric(f), FabricVerdict::registered);
    f.status = "Insufficient Resources"; // a probe error: Completed, not Success
    EXPECT_EQ(judge_fabric(f), FabricVerdict::failed);
    f.state = "Not Supported";
    EXPECT_EQ(judge_fabric(f), FabricVerdict::not_reported);
    f.state = "Exploded"; // a state nobody documents is not taken as registered
    EXPECT_EQ(judge_fabric(f), FabricVerdict::failed);
}

TEST(SmiFabric, SectionEndsAtTheNextHeadingAndCrIsIgnored) {
    // A Status that belongs to another section after Fabric must not be read as the fabric's.
    const auto f = parse_smi_fabric("GPU 00000000:05:00.0\r\n"
                                    "    Fabric\r\n"
                                    "        State                             : In Progress\r\n"
                                    "    Other\r\n"
                                    "        Status                            : Success\r\n");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].gpu, "00000000:05:00.0");
    EXPECT_EQ(f[0].state, "In Progress");
    EXPECT_EQ(f[0].status, "");
    EXPECT_TRUE(parse_smi_fabric("").empty());
    EXPECT_TRUE(parse_smi_fabric("No devices were found\n").empty());
}

TEST(FmJournal, VersionMismatchAsFabricManagerPrintsIt) {
    // 8x H200: the driver upgraded on disk to 595, the 590 module still loaded.
    auto m =
        parse_fm_version_mismatch(read_fixture("cmd/fabricmanager/journal-595-on-590-module.txt"));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->fabric_manager, "595.71.05");
    EXPECT_EQ(m->driver, "590.48.01");
    EXPECT_TRUE(m->line.find("sprocket nv-fabricmanager[186868]") != std::string::npos);
    // A two-part driver version, with systemd's lines around it.
    m = parse_fm_version_mismatch(read_fixture("cmd/fabricmanager/journal-550-status.txt"));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->fabric_manager, "550.127.05");
    EXPECT_EQ(m->driver, "550.120");
    EXPECT_FALSE(parse_fm_version_mismatch("Started NVIDIA fabric manager service.\n"));
    EXPECT_FALSE(parse_fm_version_mismatch(""));
}
