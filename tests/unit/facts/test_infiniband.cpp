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

/// A PCI VPD image as the PCI spec lays it out (6.28: large resource 0x82 identifier string, 0x90
/// VPD-R keywords, 0x78 end tag), with `vendor` in a vendor keyword (V3). CONSTRUCTED, not
/// captured: no public VPD dump of an NVSwitch management function was found; what matters is
/// NVIDIA's own test, `grep -q "SW_MNG"` over the binary file, and a ConnectX NIC of the same PCI
/// id whose VPD lacks the marker (sysadmins' notes quote "SMDL=SW_MNG" for the switch ones).
std::string vpd_image(const std::string& id, const std::string& vendor) {
    std::string out;
    const auto large = [&](char tag, const std::string& body) {
        out += tag;
        out += static_cast<char>(body.size() & 0xff);
        out += static_cast<char>(body.size() >> 8);
        out += body;
    };
    large('\x82', id);
    std::string r = "PN";
    r += static_cast<char>(15);
    r += "MCX750500B-0D00";
    r += "V3";
    r += static_cast<char>(vendor.size());
    r += vendor;
    r += "RV";
    r += static_cast<char>(1);
    r += '\0'; // checksum byte; nobody here checks it
    large('\x90', r);
    out += '\x78';
    out += std::string(16, '\xff'); // sysfs returns the whole VPD window, padding included
    return out;
}

TEST(IbFacts, Nvlink5SwitchesAreTheDevicesWhoseVpdSaysSwMng) {
    FakeSystem sys;
    // HGX B200 shape: two of the four switch management functions, one ConnectX-7 NIC with the
    // same PCI id, and one device whose vpd is missing (unprivileged read, or no VPD at all).
    const auto ib = [&](const std::string& name, const std::string& pci) {
        sys.add_link("/sys/class/infiniband/" + name + "/device", "/sys/devices/pci0000:00/" + pci);
        sys.add_file("/sys/class/infiniband/" + name + "/ports/1/state", "4: ACTIVE\n");
    };
    ib("mlx5_0", "0000:05:00.0");
    ib("mlx5_1", "0000:06:00.0");
    ib("mlx5_2", "0000:1a:00.0");
    ib("mlx5_3", "0000:1b:00.0");
    sys.add_file("/sys/devices/pci0000:00/0000:05:00.0/vpd",
                 vpd_image("Nvidia ConnectX-7 NVSwitch bridge", "SMDL=SW_MNG"));
    sys.add_file("/sys/devices/pci0000:00/0000:06:00.0/vpd",
                 vpd_image("Nvidia ConnectX-7 NVSwitch bridge", "SMDL=SW_MNG"));
    sys.add_file("/sys/devices/pci0000:00/0000:1a:00.0/vpd",
                 vpd_image("Nvidia ConnectX-7 HHHL adapter card", "SMDL=SW_NIC"));
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_EQ(f.infiniband.size(), 4u);
    EXPECT_TRUE(f.infiniband[0].nvswitch);
    EXPECT_TRUE(f.infiniband[1].nvswitch);
    EXPECT_FALSE(f.infiniband[2].nvswitch);
    EXPECT_FALSE(f.infiniband[3].nvswitch);
    EXPECT_EQ(f.infiniband[0].pci_address, "0000:05:00.0");
    EXPECT_EQ(f.nvlink5_switch_count, 2);
    EXPECT_EQ(f.nvswitch_count, 0); // none on PCI as NVIDIA bridges: that count cannot see them
}

TEST(IbParsers, VpdMarkerAnywhereInTheBinary) {
    EXPECT_TRUE(vpd_marks_nvswitch(vpd_image("x", "SMDL=SW_MNG")));
    EXPECT_TRUE(vpd_marks_nvswitch(std::string("\0\0SW_MNG\0", 9)));
    EXPECT_FALSE(vpd_marks_nvswitch(vpd_image("x", "SMDL=SW_NIC")));
    EXPECT_FALSE(vpd_marks_nvswitch("SW_MN"));
    EXPECT_FALSE(vpd_marks_nvswitch(""));
}

} // namespace
} // namespace gpuprov
