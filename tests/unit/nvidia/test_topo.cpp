#include <fake_system.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

TEST(Topo, HgxH100EightGpusAllNvlink) {
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/hgx-h100-8gpu.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 8u);
    EXPECT_EQ(topo->gpus[7], "GPU7");
    EXPECT_EQ(topo->links[0][0], "X");
    EXPECT_EQ(topo->links[0][1], "NV18");
    EXPECT_EQ(topo->links[7][6], "NV18");
    EXPECT_TRUE(all_pairs_nvlink(*topo));
    EXPECT_TRUE(any_p2p_path(*topo));
}

TEST(Topo, LegendAfterTheMatrixIsIgnored) {
    const auto text =
        read_fixture("cmd/topo/hgx-h100-8gpu.txt") + "\n" + read_fixture("cmd/topo/legend.txt");
    const auto topo = parse_topo_matrix(text);
    ASSERT_TRUE(topo.has_value());
    EXPECT_EQ(topo->gpus.size(), 8u);
}

TEST(Topo, OldFormatPcieOnlyHasNoP2p) {
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/pcie-4gpu-old-format.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 4u);
    EXPECT_EQ(topo->links[0][1], "PHB");
    EXPECT_EQ(topo->links[2][3], "NODE");
    EXPECT_FALSE(all_pairs_nvlink(*topo));
    EXPECT_FALSE(any_p2p_path(*topo));
}

TEST(Topo, NvlinkBridgedPairsAreNotAllPairs) {
    const auto topo = parse_topo_matrix(read_fixture("cmd/topo/4gpu-nvlink-pairs.txt"));
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus.size(), 4u); // the NIC column and row are not GPUs
    EXPECT_EQ(topo->links[0][1], "NV6");
    EXPECT_EQ(topo->links[0][2], "SYS");
    EXPECT_FALSE(all_pairs_nvlink(*topo));
    EXPECT_TRUE(any_p2p_path(*topo));
}

TEST(Topo, NoMatrixInErrorOutput) {
    EXPECT_FALSE(parse_topo_matrix(read_fixture("cmd/nvidia-smi/error-nvml-mismatch.txt")));
    // A single GPU cannot be "all pairs NVLink".
    const auto one = parse_topo_matrix("\tGPU0\tCPU Affinity\nGPU0\t X \t0-7\n");
    ASSERT_TRUE(one.has_value());
    EXPECT_FALSE(all_pairs_nvlink(*one));
}

TEST(Topo, UnderlinedHeaderPastedWithSpaces) {
    // The R590+ underline around the header, in a copy whose TABs became spaces.
    const auto topo = parse_topo_matrix("        \x1b[4mGPU0    GPU1    CPU Affinity\x1b[0m\n"
                                        "GPU0     X      NV18    0-7\n"
                                        "GPU1    NV18     X      0-7\n");
    ASSERT_TRUE(topo.has_value());
    ASSERT_EQ(topo->gpus, (std::vector<std::string>{"GPU0", "GPU1"}));
    EXPECT_EQ(topo->links[1][0], "NV18");
    EXPECT_TRUE(all_pairs_nvlink(*topo));
}

TEST(Topo, BracketsThatAreNotRenditionCodesStay) {
    // "[m" without its ESC is not taken for a code, so a header made of it is no header.
    EXPECT_FALSE(parse_topo_matrix("\t[mGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\tNV1\t X \n").has_value());
}
