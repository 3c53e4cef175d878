#include <fake_system.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>

using gpuprov::parse_smi_query;
using gpuprov::testing::read_fixture;

TEST(SmiQuery, ArgvAsksForTheFieldsInParserOrder) {
    const auto argv = gpuprov::smi_query_argv();
    ASSERT_EQ(argv.size(), 3u);
    EXPECT_EQ(argv[0], "nvidia-smi");
    EXPECT_EQ(argv[1].rfind("--query-gpu=index,uuid,name,pci.bus_id,driver_version,", 0), 0u);
    EXPECT_EQ(argv[2], "--format=csv,noheader,nounits");
}

TEST(SmiQuery, R580TwoA100Rows) {
    const auto gpus = parse_smi_query(read_fixture("cmd/nvidia-smi/query-580-a100.csv"));
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].index, 0);
    EXPECT_EQ(gpus[0].uuid, "GPU-34319582-d595-d1c7-d1d2-179bcfa61660");
    EXPECT_EQ(gpus[0].name, "NVIDIA A100-SXM4-40GB");
    EXPECT_EQ(gpus[0].bus_id, "00000000:10:1C.0");
    EXPECT_EQ(gpus[0].driver_version, "580.126.09");
    EXPECT_EQ(gpus[0].memory_total_mib, 40960u);
    EXPECT_EQ(gpus[0].memory_used_mib, 598u);
    EXPECT_DOUBLE_EQ(gpus[0].utilization_percent.value(), 11.0);
    EXPECT_DOUBLE_EQ(gpus[0].temperature_c.value(), 41.0);
    EXPECT_DOUBLE_EQ(gpus[0].power_draw_w.value(), 67.0);
    EXPECT_DOUBLE_EQ(gpus[0].power_limit_w.value(), 400.0);
    EXPECT_EQ(gpus[0].persistence_mode, true);
    EXPECT_EQ(gpus[0].mig_enabled, false);
    EXPECT_EQ(gpus[1].index, 1);
    EXPECT_EQ(gpus[1].bus_id, "00000000:10:1D.0");
    EXPECT_EQ(gpus[1].memory_used_mib, 602u);
}

TEST(SmiQuery, EveryDriverGenerationFixtureParses) {
    struct Case {
        const char* file;
        const char* name;
        const char* driver;
        std::uint64_t total;
    };
    for (const auto& c : {Case{"query-470-a100.csv", "NVIDIA A100-SXM4-80GB", "470.103.01", 81920},
                          Case{"query-535-t4.csv", "Tesla T4", "535.86.10", 15109},
                          Case{"query-535-h100.csv", "NVIDIA H100 80GB HBM3", "535.129.03", 81559},
                          Case{"query-550-h200.csv", "NVIDIA H200", "550.54.14", 143771}}) {
        SCOPED_TRACE(c.file);
        const auto gpus = parse_smi_query(read_fixture(std::string("cmd/nvidia-smi/") + c.file));
        ASSERT_FALSE(gpus.empty());
        EXPECT_EQ(gpus[0].name, c.name);
        EXPECT_EQ(gpus[0].driver_version, c.driver);
        EXPECT_EQ(gpus[0].memory_total_mib, c.total);
    }
}

TEST(SmiQuery, SentinelsBecomeAbsentAndWarningLinesAreSkipped) {
    const auto gpus = parse_smi_query(read_fixture("cmd/nvidia-smi/query-sentinels.csv"));
    ASSERT_EQ(gpus.size(), 3u); // the infoROM warning line is not a row
    EXPECT_EQ(gpus[0].name, "GeForce RTX 2060");
    EXPECT_FALSE(gpus[0].power_draw_w.has_value()); // [Not Supported]
    EXPECT_FALSE(gpus[0].power_limit_w.has_value());
    EXPECT_FALSE(gpus[0].mig_enabled.has_value()); // "[N/A] " with a trailing space
    EXPECT_EQ(gpus[0].persistence_mode, false);
    EXPECT_EQ(gpus[0].memory_used_mib, 682u);
    EXPECT_FALSE(gpus[1].memory_used_mib.has_value()); // [Insufficient Permissions]
    EXPECT_FALSE(gpus[1].utilization_percent.has_value());
    EXPECT_FALSE(gpus[1].power_draw_w.has_value());
    EXPECT_EQ(gpus[1].mig_enabled, true);
    EXPECT_FALSE(gpus[2].temperature_c.has_value()); // bare N/A
    EXPECT_FALSE(gpus[2].mig_enabled.has_value());
    EXPECT_EQ(gpus[2].persistence_mode, true); // "On"
}

TEST(SmiQuery, ErrorTextYieldsNoRows) {
    EXPECT_TRUE(
        parse_smi_query(read_fixture("cmd/nvidia-smi/error-driver-not-loaded.txt")).empty());
    EXPECT_TRUE(parse_smi_query("").empty());
}

// fuzz/fuzz_smi_query found it: a memory value past 2^64 MiB was cast to uint64 (undefined
// behaviour, caught by UBSan). It is no reading at all, so it is absent like a sentinel.
TEST(SmiQuery, MemoryBeyondWhatUint64HoldsIsAbsent) {
    const auto gpus =
        parse_smi_query("0, GPU-1, NVIDIA A100-SXM4-40GB, 00000000:10:1C.0, 580.126.09, 1e55, "
                        "18446744073709551616, 11, 41, 67.00, 400.00, Enabled, Disabled\n"
                        "1, GPU-2, NVIDIA A100-SXM4-40GB, 00000000:10:1D.0, 580.126.09, 40960, "
                        "18446744073709549568, 11, 41, 67.00, 400.00, Enabled, Disabled\n");
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_FALSE(gpus[0].memory_total_mib.has_value());
    EXPECT_FALSE(gpus[0].memory_used_mib.has_value());
    EXPECT_EQ(gpus[1].memory_total_mib, 40960u);
    EXPECT_EQ(gpus[1].memory_used_mib, 18446744073709549568u); // the largest double below 2^64
}

// A GPU index past int's range was cast (4294967296 became GPU 0, beside the real GPU 0). It is
// no index, so the row is no GPU.
TEST(SmiQuery, IndexBeyondIntIsNoGpu) {
    const auto gpus =
        parse_smi_query("4294967296, GPU-1, NVIDIA A100-SXM4-40GB, 00000000:10:1C.0, 580.126.09, "
                        "40960, 598, 11, 41, 67.00, 400.00, Enabled, Disabled\n"
                        "1, GPU-2, NVIDIA A100-SXM4-40GB, 00000000:10:1D.0, 580.126.09, 40960, "
                        "602, 11, 41, 67.00, 400.00, Enabled, Disabled\n");
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0].index, 1);
    EXPECT_EQ(gpus[0].uuid, "GPU-2");
}
