#include "nvidia_test_util.hpp"

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

Profile gpu_profile(int count, std::optional<std::string> model, std::optional<int> memory,
                    std::optional<std::string> interconnect = std::nullopt) {
    Profile p;
    p.name = "gpus";
    p.host.gpus = GpuRequirement{
        .count = count, .model = model, .memory_gib = memory, .interconnect = interconnect};
    return p;
}

std::vector<CheckOutcome> run_gpus(const FakeSystem& sys, const Profile& p) {
    const HostFacts facts = debian_facts();
    return check_gpus({p, facts, Matrix::builtin()}, sys);
}

const std::vector<std::string> kTopo = {"nvidia-smi", "topo", "-m"};

} // namespace

TEST(GpuNameMatch, RealNvidiaSmiNames) {
    EXPECT_TRUE(gpu_name_matches_model("NVIDIA A100-SXM4-80GB", "A100"));
    EXPECT_TRUE(gpu_name_matches_model("NVIDIA A100 80GB PCIe", "a100"));
    EXPECT_TRUE(gpu_name_matches_model("Tesla T4", "T4"));
    EXPECT_TRUE(gpu_name_matches_model("NVIDIA H100 80GB HBM3", "H100"));
    EXPECT_TRUE(gpu_name_matches_model("NVIDIA H200", "H200"));
    EXPECT_FALSE(gpu_name_matches_model("NVIDIA A100-SXM4-80GB", "A10"));
    EXPECT_FALSE(gpu_name_matches_model("NVIDIA H200", "H100"));
    EXPECT_FALSE(gpu_name_matches_model("NVIDIA L40S", "L40"));
}

TEST(CheckGpus, TwoA100Of40GibPass) {
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    const auto checks = run_gpus(sys, gpu_profile(2, "A100", 40));
    EXPECT_EQ(ids_of(checks),
              (std::vector<std::string>{"gpus.count", "gpus.model", "gpus.memory"}));
    for (const auto& c : checks) {
        EXPECT_TRUE(c.passed) << c.id << ": " << c.found;
        EXPECT_EQ(c.step, "preflight");
    }
}

TEST(CheckGpus, FortyGibPartRefusedForEighty) {
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    const auto memory_all = run_gpus(sys, gpu_profile(2, "A100", 80));
    const auto* memory = find_check(memory_all, "gpus.memory");
    ASSERT_NE(memory, nullptr);
    EXPECT_FALSE(memory->passed);
    EXPECT_EQ(memory->found, "40960 MiB on the smallest GPU");
}

TEST(CheckGpus, MarketedSizesPassDespiteReservedMemory) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv"); // 81559 MiB for an "80GB" part
    const auto h100 = run_gpus(sys, gpu_profile(2, "H100", 80));
    EXPECT_TRUE(find_check(h100, "gpus.memory")->passed);
    script_query(sys, "query-535-t4.csv"); // 15109 MiB for a "16GB" part
    const auto t4 = run_gpus(sys, gpu_profile(1, "T4", 16));
    EXPECT_TRUE(find_check(t4, "gpus.memory")->passed);
}

TEST(CheckGpus, WrongModelAndMissingGpu) {
    FakeSystem sys;
    script_query(sys, "query-535-t4.csv");
    const auto checks = run_gpus(sys, gpu_profile(4, "A100", std::nullopt));
    EXPECT_FALSE(find_check(checks, "gpus.count")->passed);
    EXPECT_EQ(find_check(checks, "gpus.count")->found, "1 (Tesla T4)");
    EXPECT_FALSE(find_check(checks, "gpus.model")->passed);
    EXPECT_EQ(find_check(checks, "gpus.model")->found, "Tesla T4");
}

TEST(CheckGpus, NvlinkOnHgxPasses) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.on_command(kTopo, answer_ok(read_fixture("cmd/topo/hgx-h100-8gpu.txt")));
    const auto nvlink_all = run_gpus(sys, gpu_profile(2, "H100", 80, "nvlink"));
    const auto* nvlink = find_check(nvlink_all, "gpus.nvlink");
    ASSERT_NE(nvlink, nullptr);
    EXPECT_TRUE(nvlink->passed) << nvlink->found;
}

TEST(CheckGpus, NvlinkPairsOnlyFailsNamingTheGap) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.on_command(kTopo, answer_ok(read_fixture("cmd/topo/4gpu-nvlink-pairs.txt")));
    const auto nvlink_all = run_gpus(sys, gpu_profile(4, "H100", std::nullopt, "nvlink"));
    const auto* nvlink = find_check(nvlink_all, "gpus.nvlink");
    ASSERT_NE(nvlink, nullptr);
    EXPECT_FALSE(nvlink->passed);
    EXPECT_EQ(nvlink->found, "GPU0-GPU2: SYS");
}

TEST(CheckGpus, NvlinkPassesOnRealR590Capture) {
    // The underlined header R590+ prints used to leave "no GPU matrix in the output".
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.on_command(kTopo, answer_ok(read_fixture("cmd/topo/b300-8gpu-590-sglang.txt")));
    const auto nvlink_all = run_gpus(sys, gpu_profile(2, std::nullopt, std::nullopt, "nvlink"));
    const auto* nvlink = find_check(nvlink_all, "gpus.nvlink");
    ASSERT_NE(nvlink, nullptr);
    EXPECT_TRUE(nvlink->passed) << nvlink->found;
    EXPECT_EQ(nvlink->found, "NVLink between every pair");
}

TEST(CheckGpus, NvlinkFailsOnCubeMeshNamingThePcieOnlyPair) {
    FakeSystem sys;
    script_query(sys, "query-535-h100.csv");
    sys.on_command(kTopo, answer_ok(read_fixture("cmd/topo/v100-8gpu-cube-mesh-580.txt")));
    const auto nvlink_all = run_gpus(sys, gpu_profile(2, std::nullopt, std::nullopt, "nvlink"));
    const auto* nvlink = find_check(nvlink_all, "gpus.nvlink");
    ASSERT_NE(nvlink, nullptr);
    EXPECT_FALSE(nvlink->passed);
    EXPECT_EQ(nvlink->found, "GPU0-GPU5: SYS");
}

TEST(CheckGpus, PcieInterconnectRunsNoTopology) {
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    const auto checks = run_gpus(sys, gpu_profile(2, "A100", 40, "pcie"));
    EXPECT_EQ(find_check(checks, "gpus.nvlink"), nullptr);
    EXPECT_EQ(sys.queries.size(), 1u);
}

TEST(CheckGpus, SmiFailureStopsAfterCount) {
    FakeSystem sys;
    script_query_error(sys, "error-driver-not-loaded.txt");
    const auto checks = run_gpus(sys, gpu_profile(1, "T4", 16));
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_FALSE(checks[0].passed);
}
