// Issue 22: every PCI id added to the GPU table is detected from sysfs with the table's model,
// architecture, compute capability and memory (tests/fixtures/sysfs/gpus-issue22, one 3D
// controller per id, ids from pci.ids 2026.08.22).
#include "fake_system.hpp"

#include <algorithm>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>
#include <map>

namespace gpuprov {
namespace {

using testing::FakeSystem;

struct Want {
    std::string model;
    std::string name;
    std::string architecture;
    std::string cc;
    int memory_gib;
};

TEST(GpuTable, EachIssue22IdDetectedFromSysfs) {
    FakeSystem sys;
    sys.load_tree("sysfs/gpus-issue22");
    const auto facts = detect_facts(sys, Matrix::builtin());
    const std::map<std::uint16_t, Want> want = {
        {0x1DF6, {"V100S", "V100S PCIe 32GB", "volta", "7.0", 32}},
        {0x20B1, {"A100", "A100 PCIe 40GB", "ampere", "8.0", 40}},
        {0x20BD, {"A800", "A800 SXM4 40GB", "ampere", "8.0", 40}},
        {0x20F3, {"A800", "A800 SXM4 80GB", "ampere", "8.0", 80}},
        {0x20F5, {"A800", "A800 PCIe 80GB", "ampere", "8.0", 80}},
        {0x20F6, {"A800", "A800 PCIe 40GB", "ampere", "8.0", 40}},
        {0x2235, {"A40", "A40", "ampere", "8.6", 48}},
        {0x25B6, {"A2", "A2 or A16", "ampere", "8.6", 16}},
        {0x26B7, {"L20", "L20", "ada", "8.9", 48}},
        {0x26BA, {"L20", "L20", "ada", "8.9", 48}},
        {0x2322, {"H800", "H800 PCIe 80GB", "hopper", "9.0", 80}},
        {0x2324, {"H800", "H800 SXM5 80GB", "hopper", "9.0", 80}},
        {0x2329, {"H20", "H20", "hopper", "9.0", 96}},
        {0x2342, {"GH200", "GH200 96GB HBM3", "hopper", "9.0", 96}},
        {0x2348, {"GH200", "GH200 144GB HBM3e", "hopper", "9.0", 144}},
        {0x2941, {"GB200", "GB200", "blackwell", "10.0", 186}},
        {0x2BB5,
         {"RTX PRO 6000", "RTX PRO 6000 Blackwell Server Edition", "blackwell", "12.0", 96}},
        {0x3182, {"B300", "B300 SXM6 AC", "blackwell", "10.3", 288}},
        {0x31C2, {"GB300", "GB300", "blackwell", "10.3", 288}},
        {0x31C3, {"GB300", "GB300", "blackwell", "10.3", 288}},
    };
    ASSERT_EQ(facts.gpus.size(), want.size());
    for (const auto& g : facts.gpus) {
        SCOPED_TRACE(g.address);
        const auto it = want.find(g.device_id);
        ASSERT_NE(it, want.end());
        EXPECT_EQ(g.model, it->second.model);
        EXPECT_EQ(g.name, it->second.name);
        EXPECT_EQ(g.architecture, it->second.architecture);
        EXPECT_EQ(g.compute_capability, it->second.cc);
        EXPECT_EQ(g.memory_gib, it->second.memory_gib);
    }
}

// 0x25B6 is one PCI id for two boards (pci.ids "GA107GL [A2 / A16]", no subsystem entries):
// PCI cannot tell them apart, so neither is guessed and both model names match it.
TEST(GpuTable, A2AndA16ShareOneIdAndAreNotGuessed) {
    const auto& m = Matrix::builtin();
    const auto* g = m.gpu_by_device(0x25B6);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->name, "A2 or A16");
    EXPECT_TRUE(g->is_model("A2"));
    EXPECT_TRUE(g->is_model("A16"));
    EXPECT_FALSE(g->is_model("A10"));
    ASSERT_EQ(m.gpus_of_model("A16").size(), 1u);
    EXPECT_EQ(m.gpus_of_model("A16").front()->device_id, 0x25B6);
    const auto models = m.gpu_models();
    EXPECT_NE(std::find(models.begin(), models.end(), "A16"), models.end());
}

// Blackwell needs the open modules by its architecture; GH200 is Hopper (both flavours) but
// NVIDIA supports Grace Hopper with the open modules only, so its rows say so.
TEST(GpuTable, OpenOnlyBoards) {
    const auto& m = Matrix::builtin();
    EXPECT_TRUE(m.gpu_by_device(0x2342)->requires_open);
    EXPECT_TRUE(m.gpu_by_device(0x2348)->requires_open);
    EXPECT_FALSE(m.gpu_by_device(0x2330)->requires_open); // H100 SXM5
    EXPECT_FALSE(m.architecture(m.gpu_by_device(0x3182)->architecture)->proprietary_ok);
}

} // namespace
} // namespace gpuprov
