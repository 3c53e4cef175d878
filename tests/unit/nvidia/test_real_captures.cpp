// Our parsers on outputs other people captured on real machines, copied byte for byte (sources
// in tests/fixtures/cmd/README.md). Several are cut where the stored copy of the issue ends; the
// parsers only need the part that is there.
#include <fake_system.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

namespace {

struct BannerCase {
    const char* file;
    const char* smi;
    const char* driver;
    const char* cuda;
};

} // namespace

TEST(RealCaptures, SmiBannersR550ToR610) {
    for (const auto& c : {
             // R550: leptonai/gpud's e2e mock, a whole table with the processes box.
             BannerCase{"table-550-a10-gpud.txt", "550.127.05", "550.127.05", "12.4"},
             BannerCase{"table-550-rtx4070.txt", "550.40.07", "550.40.07", "12.4"},
             // A two-part driver version.
             BannerCase{"table-550-tesla-p4.txt", "550.135", "550.135", "12.4"},
             // R575: three lines only (date, rule, banner), trailing spaces after the date.
             BannerCase{"banner-575-livepeer.txt", "575.57.08", "575.57.08", "12.9"},
             BannerCase{"table-580-5090-4090.txt", "580.82.09", "580.82.09", "13.0"},
             // Processes listed, and no blank line between the GPU and processes boxes.
             BannerCase{"table-580-rtx5090-laptop.txt", "580.65.06", "580.65.06", "13.0"},
             BannerCase{"table-590-rtx6000d.txt", "590.44.01", "590.44.01", "13.1"},
             BannerCase{"banner-595-club3090.txt", "595.58.03", "595.58.03", "13.2"},
             // R610: "KMD Version:" and "CUDA UMD Version:" instead of Driver/CUDA Version.
             BannerCase{"table-610-2x5090.txt", "610.57.04", "610.57.04", "13.3"},
             BannerCase{"table-610-rtx3080-laptop.txt", "610.43.03", "610.43.03", "13.3"},
         }) {
        SCOPED_TRACE(c.file);
        const auto b = parse_smi_banner(read_fixture(std::string("cmd/nvidia-smi/") + c.file));
        ASSERT_TRUE(b.has_value());
        EXPECT_EQ(b->smi_version, c.smi);
        EXPECT_EQ(b->driver_version, c.driver);
        EXPECT_EQ(b->cuda_version, c.cuda);
    }
}

TEST(RealCaptures, SmiBanner575WithCudaNotAvailable) {
    // shkhln/libc6-shim#14: the driver answered but CUDA did not, "CUDA Version: N/A". The driver
    // version is still there; the CUDA version is absent, not "N" or "N/A".
    const auto b = parse_smi_banner(read_fixture("cmd/nvidia-smi/table-575-rtx5070-cuda-na.txt"));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->smi_version, "575.64.03");
    EXPECT_EQ(b->driver_version, "575.64.03");
    EXPECT_EQ(b->cuda_version, "");
}

TEST(RealCaptures, SmiBannerR331HasNoCudaVersion) {
    // cBio/cbio-cluster#38: driver 331 printed no CUDA version at all, and the banner box is
    // narrower than the table under it.
    const auto b = parse_smi_banner(read_fixture("cmd/nvidia-smi/table-331-gtx680-no-cuda.txt"));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->smi_version, "331.62");
    EXPECT_EQ(b->driver_version, "331.62");
    EXPECT_EQ(b->cuda_version, "");
}

TEST(RealCaptures, SmiBannerUnderWslHasTheWindowsDriverVersion) {
    // feuyeux/hello-ai: under WSL nvidia-smi is the Linux build (555.42.06) while the driver is
    // the Windows one (555.97); the driver version is the one after "Driver Version:".
    const auto b = parse_smi_banner(read_fixture("cmd/nvidia-smi/banner-555-wsl.txt"));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->smi_version, "555.42.06");
    EXPECT_EQ(b->driver_version, "555.97");
    EXPECT_EQ(b->cuda_version, "12.5");
}

TEST(RealCaptures, SmiTablesAreNotFailures) {
    for (const char* file : {"table-550-a10-gpud.txt", "table-575-rtx5070-cuda-na.txt",
                             "table-580-5090-4090.txt", "table-610-2x5090.txt"}) {
        SCOPED_TRACE(file);
        EXPECT_EQ(classify_smi_failure(read_fixture(std::string("cmd/nvidia-smi/") + file)),
                  SmiFailure::none);
    }
}

TEST(RealCaptures, TopoHgxH100PastedWithSpaces) {
    // HazyResearch/ThunderKittens#167: the TABs nvidia-smi prints became spaces when pasted.
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/hgx-h100-8gpu-spaces.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 8u);
    EXPECT_EQ(topo->gpus[0], "GPU0");
    EXPECT_EQ(topo->gpus[7], "GPU7");
    EXPECT_EQ(topo->links[0][0], "X");
    EXPECT_EQ(topo->links[0][7], "NV18");
    EXPECT_EQ(topo->links[7][0], "NV18");
    EXPECT_EQ(topo->links[7][7], "X");
    EXPECT_TRUE(all_pairs_nvlink(*topo));
    EXPECT_TRUE(any_p2p_path(*topo));
}

namespace {

struct TopoCase {
    const char* file;
    std::size_t gpus;
    bool all_nvlink;
    const char* cell_0_1;
};

} // namespace

TEST(RealCaptures, TopoNvlinkHostsWithNicColumns) {
    for (const auto& c : {
             // R590 on 8×B300: the header underlined, as the issue kept it ("[4m", no ESC).
             TopoCase{"b300-8gpu-590-sglang.txt", 8, true, "NV18"},
             // The same underline with its ESC bytes, 2 GPUs and 2 NICs.
             TopoCase{"2gpu-nv12-colorized.txt", 2, true, "NV12"},
             TopoCase{"a100-4gpu-nic-580.txt", 4, true, "NV12"},
             TopoCase{"h200-8gpu-570-8nic.txt", 8, true, "NV18"},
             // A copy that lost the header's leading TAB.
             TopoCase{"h100-8gpu-580-12nic-no-leading-tab.txt", 8, true, "NV18"},
             // The V100 hybrid cube mesh: NVLink, but not between every pair.
             TopoCase{"v100-8gpu-cube-mesh-580.txt", 8, false, "NV1"},
         }) {
        SCOPED_TRACE(c.file);
        const auto topo = parse_topo_matrix(read_fixture(std::string("cmd/topo/") + c.file));
        ASSERT_TRUE(topo.has_value());
        ASSERT_EQ(topo->gpus.size(), c.gpus);
        EXPECT_EQ(topo->gpus.front(), "GPU0");
        EXPECT_EQ(topo->gpus.back(), "GPU" + std::to_string(c.gpus - 1));
        EXPECT_EQ(topo->links[0][0], "X");
        EXPECT_EQ(topo->links[0][1], c.cell_0_1);
        EXPECT_EQ(topo->links[c.gpus - 1][c.gpus - 1], "X");
        EXPECT_EQ(all_pairs_nvlink(*topo), c.all_nvlink);
        EXPECT_TRUE(any_p2p_path(*topo));
    }
}

TEST(RealCaptures, TopoCubeMeshKeepsSysPairs) {
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/v100-8gpu-cube-mesh-580.txt"));
    ASSERT_TRUE(topo.has_value());
    EXPECT_EQ(topo->links[0][5], "SYS");
    EXPECT_EQ(topo->links[5][0], "SYS");
    EXPECT_EQ(topo->links[1][5], "NV2");
    EXPECT_EQ(topo->links[7][6], "NV2");
}

TEST(RealCaptures, TopoFivePcieGpusPastedWithSpaces) {
    // noonghunna/club-3090#46 (driver 580.126.20): two NUMA nodes, no NVLink, no PIX/PXB.
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/5gpu-pcie-spaces.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 5u);
    EXPECT_EQ(topo->links[0][1], "SYS");
    EXPECT_EQ(topo->links[1][2], "PHB");
    EXPECT_EQ(topo->links[1][3], "NODE");
    EXPECT_EQ(topo->links[4][3], "PHB");
    EXPECT_EQ(topo->links[4][4], "X");
    EXPECT_FALSE(all_pairs_nvlink(*topo));
    EXPECT_FALSE(any_p2p_path(*topo));
}

TEST(RealCaptures, TopoTwoGpusPhbPastedWithSpaces) {
    // noonghunna/club-3090#104 (driver 595.58.03).
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/2gpu-phb-spaces.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 2u);
    EXPECT_EQ(topo->links[0][1], "PHB");
    EXPECT_EQ(topo->links[1][0], "PHB");
    EXPECT_FALSE(all_pairs_nvlink(*topo));
    EXPECT_FALSE(any_p2p_path(*topo));
}

TEST(RealCaptures, TopoSingleGpuWithTabsAndEmptyCells) {
    // Project-HAMi/HAMi#99: one Tesla P4, TABs kept, NUMA Affinity N/A, doubled TABs.
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/1gpu-tesla-p4-tabs.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 1u);
    EXPECT_EQ(topo->links[0][0], "X");
    EXPECT_FALSE(all_pairs_nvlink(*topo));
    EXPECT_FALSE(any_p2p_path(*topo));
}

TEST(RealCaptures, NvccReleases) {
    struct Case {
        const char* file;
        const char* release;
        const char* version;
    };
    for (const auto& c :
         {Case{"cuda-12.5.txt", "12.5", "12.5.82"}, Case{"cuda-11.5.txt", "11.5", "11.5.119"},
          Case{"cuda-11.1.txt", "11.1", "11.1.105"}, Case{"cuda-11.0.221.txt", "11.0", "11.0.221"},
          // CUDA 7.5 prints no Build line.
          Case{"cuda-7.5.txt", "7.5", "7.5.17"}}) {
        SCOPED_TRACE(c.file);
        const auto v = parse_nvcc_version(read_fixture(std::string("cmd/nvcc/") + c.file));
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(v->release, c.release);
        EXPECT_EQ(v->version, c.version);
    }
}

TEST(RealCaptures, ProcDriverVersionOpenModules) {
    // Ubuntu 24.04, nvidia-driver-565-open (nix-community/nixGL#186): NVIDIA's build host
    // "dvs-builder@U16-A24-9-2" and the build date follow the version.
    const auto ubuntu = parse_proc_driver_version(
        read_fixture("cmd/files/proc-driver-version-565-open-ubuntu.txt"));
    ASSERT_TRUE(ubuntu.has_value());
    EXPECT_EQ(ubuntu->version, "565.57.01");
    EXPECT_TRUE(ubuntu->open_module);

    // Arch Linux nvidia-open-dkms (nix-community/nixGL#121): no build date, trailing spaces.
    const auto arch =
        parse_proc_driver_version(read_fixture("cmd/files/proc-driver-version-525-open-arch.txt"));
    ASSERT_TRUE(arch.has_value());
    EXPECT_EQ(arch->version, "525.60.11");
    EXPECT_TRUE(arch->open_module);

    // Blackwell on aarch64 (a GB10, Ubuntu 24.04): "for aarch64" before the version, the
    // GCC line's version-shaped numbers after it.
    const auto gb10 = parse_proc_driver_version(
        read_fixture("cmd/files/proc-driver-version-580-open-aarch64-gb10.txt"));
    ASSERT_TRUE(gb10.has_value());
    EXPECT_EQ(gb10->version, "580.126.09");
    EXPECT_TRUE(gb10->open_module);
}
