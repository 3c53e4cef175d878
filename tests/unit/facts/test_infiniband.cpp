// InfiniBand facts from sysfs: the node_exporter collector's real fixture tree (prometheus/procfs,
// tests/fixtures/README.md), the HCA on the ubuntu-22.04 fixture host, and broken files.
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;

TEST(IbParsers, RatesAsTheKernelPrintsThem) {
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("40 Gb/sec (4X QDR)\n"), 40);
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("25 Gb/sec (1X EDR)"), 25);
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("200 Gb/sec (4X HDR)"), 200);
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
    // Not a rate: no minimum may accept it.
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps(""), 0);
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("fast"), 0);
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("200 Mb/sec"), 0);
    EXPECT_DOUBLE_EQ(parse_ib_rate_gbps("2x0 Gb/sec"), 0);
}

TEST(IbParsers, StateNamesDropTheNumber) {
    EXPECT_EQ(parse_ib_state("4: ACTIVE\n"), "ACTIVE");
    EXPECT_EQ(parse_ib_state("5: LinkUp"), "LinkUp");
    EXPECT_EQ(parse_ib_state("1: DOWN"), "DOWN");
    EXPECT_EQ(parse_ib_state("ACTIVE"), "ACTIVE");
    EXPECT_EQ(parse_ib_state(""), "");
}

TEST(IbFacts, TheNodeExporterFixtureTree) {
    FakeSystem sys;
    sys.load_tree("sysfs/infiniband-procfs");
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_EQ(f.infiniband.size(), 2u);
    const auto& cx3 = f.infiniband[0];
    EXPECT_EQ(cx3.name, "mlx4_0");
    ASSERT_EQ(cx3.ports.size(), 2u);
    EXPECT_EQ(cx3.ports[0].number, 1);
    EXPECT_EQ(cx3.ports[0].state, "ACTIVE");
    EXPECT_EQ(cx3.ports[0].phys_state, "LinkUp");
    EXPECT_EQ(cx3.ports[0].rate, "40 Gb/sec (4X QDR)");
    EXPECT_DOUBLE_EQ(cx3.ports[0].rate_gbps, 40);
    // The captured file ends in an empty line; the link layer is still InfiniBand.
    EXPECT_EQ(cx3.ports[1].link_layer, "InfiniBand");
    const auto& cx4 = f.infiniband[1];
    EXPECT_EQ(cx4.name, "mlx5_0");
    ASSERT_EQ(cx4.ports.size(), 1u);
    EXPECT_DOUBLE_EQ(cx4.ports[0].rate_gbps, 25);
    EXPECT_TRUE(cx4.pci_address.empty()); // the fixture has no device link
    EXPECT_FALSE(f.peermem_loaded);
}

TEST(IbFacts, TheHcaOnTheUbuntu2204HostIsSeenBeforeAnyRdmaDriver) {
    FakeSystem sys;
    sys.load_tree("hosts/ubuntu-22.04");
    const auto f = detect_facts(sys, Matrix::builtin());
    // 0000:0c:00.0: Mellanox (0x15b3) ConnectX-6 (0x101b), class 0x020700.
    EXPECT_EQ(f.ib_hca_pci, std::vector<std::string>{"0000:0c:00.0"});
    EXPECT_TRUE(f.infiniband.empty());
    EXPECT_EQ(f.gpus.size(), 4u); // the GPUs are still found past the non-NVIDIA functions
}

TEST(IbFacts, DeviceLinkNamesThePciFunctionAndOddPortsAreSkipped) {
    FakeSystem sys;
    const std::string dev = "/sys/class/infiniband/mlx5_0/";
    sys.add_link(dev + "device", "../../../0000:0c:00.0");
    sys.add_file(dev + "ports/1/state", "4: ACTIVE\n");
    sys.add_file(dev + "ports/1/rate", "200 Gb/sec (4X HDR)\n");
    sys.add_file(dev + "ports/1/link_layer", "InfiniBand\n");
    sys.add_file(dev + "ports/lost+found/state", "4: ACTIVE\n");
    sys.add_file(dev + "ports/2/state", "1: DOWN\n"); // no rate or link_layer files
    sys.add_dir("/sys/module/nvidia_peermem");
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_EQ(f.infiniband.size(), 1u);
    EXPECT_EQ(f.infiniband[0].pci_address, "0000:0c:00.0");
    ASSERT_EQ(f.infiniband[0].ports.size(), 2u);
    EXPECT_EQ(f.infiniband[0].ports[1].state, "DOWN");
    EXPECT_DOUBLE_EQ(f.infiniband[0].ports[1].rate_gbps, 0);
    EXPECT_TRUE(f.infiniband[0].ports[1].link_layer.empty());
    EXPECT_TRUE(f.peermem_loaded);
}

} // namespace
} // namespace gpuprov
