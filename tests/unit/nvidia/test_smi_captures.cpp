// The default table, its banner and the --query-gpu CSV as real Hopper, Blackwell and Grace
// hosts printed them (R535 to R610), copied byte for byte from other people's captures
// (sources in tests/fixtures/cmd/README.md): every value a capture shows is asserted.
#include <fake_system.hpp>
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

namespace {

std::string smi_fixture(const std::string& file) {
    return read_fixture("cmd/nvidia-smi/" + file);
}

struct Row {
    int index;
    const char* bus_id;
    double temp;
    double power;
    std::uint64_t used;
};

// The values every GPU of one capture shares, and those each GPU has of its own.
struct TableCase {
    const char* file;
    const char* driver;
    const char* cuda;
    const char* name;
    double power_cap;
    std::uint64_t total;
    std::vector<Row> rows;
};

void expect_table(const TableCase& c) {
    SCOPED_TRACE(c.file);
    const auto text = smi_fixture(c.file);
    const auto banner = parse_smi_banner(text);
    ASSERT_TRUE(banner.has_value());
    EXPECT_EQ(banner->smi_version, c.driver);
    EXPECT_EQ(banner->driver_version, c.driver);
    EXPECT_EQ(banner->cuda_version, c.cuda);
    EXPECT_EQ(classify_smi_failure(text), SmiFailure::none);
    const auto gpus = parse_smi_table(text);
    ASSERT_EQ(gpus.size(), c.rows.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const auto& g = gpus[i];
        const auto& r = c.rows[i];
        SCOPED_TRACE(r.bus_id);
        EXPECT_EQ(g.index, r.index);
        EXPECT_EQ(g.name, c.name);
        EXPECT_FALSE(g.name_truncated);
        EXPECT_EQ(g.persistence_mode, true);
        EXPECT_EQ(g.bus_id, r.bus_id);
        EXPECT_EQ(g.display_active, false);
        EXPECT_EQ(g.volatile_ecc, "0");
        EXPECT_EQ(g.fan_percent, std::nullopt); // "N/A": no fans on these boards
        EXPECT_EQ(g.temperature_c, r.temp);
        EXPECT_EQ(g.perf_state, "P0");
        EXPECT_EQ(g.power_draw_w, r.power);
        EXPECT_EQ(g.power_cap_w, c.power_cap);
        EXPECT_EQ(g.memory_used_mib, r.used);
        EXPECT_EQ(g.memory_total_mib, c.total);
        EXPECT_EQ(g.utilization_percent, 0.0);
        EXPECT_EQ(g.compute_mode, "Default");
        EXPECT_EQ(g.mig_enabled, false);
    }
}

} // namespace

TEST(SmiCaptures, Gb200TrayR580OnAarch64) {
    // Four GB200s of an NVL72 compute tray: PCI domains 8, 9, 0x18, 0x19, 1200 W each.
    expect_table({"table-580-gb200-4gpu.txt",
                  "580.126.09",
                  "13.0",
                  "NVIDIA GB200",
                  1200,
                  189471,
                  {{0, "00000008:01:00.0", 29, 162, 0},
                   {1, "00000009:01:00.0", 29, 149, 0},
                   {2, "00000018:01:00.0", 29, 153, 0},
                   {3, "00000019:01:00.0", 29, 172, 0}}});
}

TEST(SmiCaptures, Gh200R580) {
    // A 480GB GH200 shows its 96 GB of HBM (97871 MiB), in PCI domain 9.
    expect_table({"table-580-gh200.txt",
                  "580.95.05",
                  "13.0",
                  "NVIDIA GH200 480GB",
                  700,
                  97871,
                  {{0, "00000009:01:00.0", 24, 85, 0}}});
}

TEST(SmiCaptures, B300SevenGpusR610) {
    // R610's "KMD Version" / "CUDA UMD Version" banner; the longest name of the three columns.
    expect_table({"table-610-b300-7gpu.txt",
                  "610.57.04",
                  "13.3",
                  "NVIDIA B300 SXM6 AC",
                  1100,
                  275040,
                  {{0, "00000000:1A:00.0", 28, 181, 0},
                   {1, "00000000:69:00.0", 40, 184, 0},
                   {2, "00000000:DB:00.0", 37, 183, 0},
                   {3, "00000001:1A:00.0", 29, 179, 0},
                   {4, "00000001:69:00.0", 42, 184, 0},
                   {5, "00000001:B5:00.0", 29, 181, 0},
                   {6, "00000001:DB:00.0", 38, 182, 0}}});
}

TEST(SmiCaptures, H200AndH100R590) {
    expect_table({"table-590-h200-exporter.txt",
                  "590.48.01",
                  "13.1",
                  "NVIDIA H200",
                  700,
                  143771,
                  {{0, "00000000:83:00.0", 28, 77, 0}}});
    expect_table({"table-590-h100-exporter.txt",
                  "590.48.01",
                  "13.1",
                  "NVIDIA H100 80GB HBM3",
                  700,
                  81559,
                  {{0, "00000000:00:09.0", 41, 69, 0}}});
}

TEST(SmiCaptures, B200R610CutAfterTheSecondGpusFirstRow) {
    // sgl-project/sglang#27487 as stored: GPU 1 has only its first row.
    const auto gpus = parse_smi_table(smi_fixture("table-610-b200.txt"));
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].name, "NVIDIA B200");
    EXPECT_EQ(gpus[0].memory_total_mib, 183359u);
    EXPECT_EQ(gpus[0].power_draw_w, 139.0);
    EXPECT_EQ(gpus[0].power_cap_w, 1000.0);
    EXPECT_EQ(gpus[0].mig_enabled, false);
    EXPECT_EQ(gpus[1].index, 1);
    EXPECT_EQ(gpus[1].bus_id, "00000000:68:00.0");
    EXPECT_EQ(gpus[1].memory_total_mib, std::nullopt);
    EXPECT_EQ(gpus[1].mig_enabled, std::nullopt);
}

TEST(SmiCaptures, MigEnabledTablesR590) {
    // With MIG on, the GPU's ECC cell reads "On", GPU-Util is "N/A", and a "MIG devices" box
    // (four columns) and a processes box follow: neither is a GPU.
    struct Case {
        const char* file;
        const char* name;
        const char* bus_id;
        double temp;
        double power;
        std::uint64_t used;
        std::uint64_t total;
    };
    for (const auto& c : {Case{"table-590-h200-mig-exporter.txt", "NVIDIA H200", "00000000:83:00.0",
                               28, 78, 55, 143771},
                          // Under load: three processes listed with their GI/CI ids.
                          Case{"table-590-h100-mig-load-exporter.txt", "NVIDIA H100 80GB HBM3",
                               "00000000:00:09.0", 52, 432, 11125, 81559}}) {
        SCOPED_TRACE(c.file);
        const auto text = smi_fixture(c.file);
        const auto banner = parse_smi_banner(text);
        ASSERT_TRUE(banner.has_value());
        EXPECT_EQ(banner->driver_version, "590.48.01");
        EXPECT_EQ(banner->cuda_version, "13.1");
        const auto gpus = parse_smi_table(text);
        ASSERT_EQ(gpus.size(), 1u);
        EXPECT_EQ(gpus[0].name, c.name);
        EXPECT_EQ(gpus[0].bus_id, c.bus_id);
        EXPECT_EQ(gpus[0].volatile_ecc, "On");
        EXPECT_EQ(gpus[0].temperature_c, c.temp);
        EXPECT_EQ(gpus[0].power_draw_w, c.power);
        EXPECT_EQ(gpus[0].power_cap_w, 700.0);
        EXPECT_EQ(gpus[0].memory_used_mib, c.used);
        EXPECT_EQ(gpus[0].memory_total_mib, c.total);
        EXPECT_EQ(gpus[0].utilization_percent, std::nullopt);
        EXPECT_EQ(gpus[0].compute_mode, "Default");
        EXPECT_EQ(gpus[0].mig_enabled, true);
    }
}

TEST(SmiCaptures, OlderLayoutsAndConsumerBoards) {
    // R535's narrower Bus-Id column, cut inside GPU 1's first row (gvisor#10413).
    const auto h100 = parse_smi_table(smi_fixture("table-535-h100.txt"));
    ASSERT_EQ(h100.size(), 1u);
    EXPECT_EQ(h100[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(h100[0].bus_id, "00000000:04:00.0");
    EXPECT_EQ(h100[0].power_draw_w, 113.0);
    EXPECT_EQ(h100[0].memory_used_mib, 72459u);
    EXPECT_EQ(h100[0].memory_total_mib, 81559u);

    // The legacy layout: two rows per GPU, "MIG M." N/A in a third.
    const auto t4 = parse_smi_table(smi_fixture("table-legacy-t4.txt"));
    ASSERT_EQ(t4.size(), 1u);
    EXPECT_EQ(t4[0].name, "Tesla T4");
    EXPECT_EQ(t4[0].power_cap_w, 70.0);
    EXPECT_EQ(t4[0].memory_total_mib, 15109u);
    EXPECT_EQ(t4[0].mig_enabled, std::nullopt);

    // R331: no MIG row, N/A for the performance state, power and display.
    const auto gtx = parse_smi_table(smi_fixture("table-331-gtx680-no-cuda.txt"));
    ASSERT_EQ(gtx.size(), 3u);
    EXPECT_EQ(gtx[2].bus_id, "0000:83:00.0");
    EXPECT_EQ(gtx[2].fan_percent, 30.0);
    EXPECT_EQ(gtx[2].perf_state, "");
    EXPECT_EQ(gtx[2].power_draw_w, std::nullopt);
    EXPECT_EQ(gtx[2].display_active, std::nullopt);
    EXPECT_EQ(gtx[2].volatile_ecc, "");
    EXPECT_EQ(gtx[2].utilization_percent, std::nullopt);

    // A long name nvidia-smi cut; the display is on; two processes follow without a blank line.
    const auto laptop = parse_smi_table(smi_fixture("table-580-rtx5090-laptop.txt"));
    ASSERT_EQ(laptop.size(), 1u);
    EXPECT_EQ(laptop[0].name, "NVIDIA GeForce RTX 5090 ...");
    EXPECT_TRUE(laptop[0].name_truncated);
    EXPECT_EQ(laptop[0].display_active, true);

    // "E. Process" is one compute mode of two words.
    const auto a100 = parse_smi_table(smi_fixture("table-580-a100.txt"));
    ASSERT_EQ(a100.size(), 2u);
    EXPECT_EQ(a100[0].compute_mode, "E. Process");
    EXPECT_EQ(a100[1].utilization_percent, 7.0);

    // Fans in percent, ECC off.
    const auto p4 = parse_smi_table(smi_fixture("table-550-tesla-p4.txt"));
    ASSERT_EQ(p4.size(), 1u);
    EXPECT_EQ(p4[0].volatile_ecc, "Off");
    const auto rtx = parse_smi_table(smi_fixture("table-610-2x5090.txt"));
    ASSERT_EQ(rtx.size(), 2u);
    EXPECT_EQ(rtx[0].fan_percent, 41.0);
}

TEST(SmiCaptures, NoGpuBoxNoGpus) {
    EXPECT_TRUE(parse_smi_table(smi_fixture("error-driver-not-loaded.txt")).empty());
    EXPECT_TRUE(parse_smi_table(smi_fixture("banner-575-livepeer.txt")).empty());
    EXPECT_TRUE(parse_smi_table("").empty());
}

TEST(SmiCaptures, FullQueryCsvWithUnitsAndHeader) {
    // `--query-gpu=<every field> --format=csv` (212-214 columns, units in the header and the
    // values, identifiers masked by the capture tool).
    struct Case {
        const char* file;
        const char* driver;
        const char* name;
        const char* bus_id;
        std::uint64_t total;
        std::uint64_t used;
        std::optional<double> util;
        double temp;
        double power;
        bool mig;
    };
    for (const auto& c : {
             Case{"query-all-580-h200.csv", "580.173.02", "NVIDIA H200", "00000000:83:00.0", 143771,
                  0, 0.0, 37, 85.12, false},
             Case{"query-all-590-h100-exporter.csv", "590.48.01", "NVIDIA H100 80GB HBM3",
                  "00000000:00:09.0", 81559, 0, 0.0, 41, 69.85, false},
             // MIG on: utilization.gpu is "[N/A]".
             Case{"query-all-590-h200-mig-exporter.csv", "590.48.01", "NVIDIA H200",
                  "00000000:83:00.0", 143771, 55, std::nullopt, 28, 78.28, true},
         }) {
        SCOPED_TRACE(c.file);
        const auto gpus = parse_smi_query(smi_fixture(c.file));
        ASSERT_EQ(gpus.size(), 1u);
        const auto& g = gpus[0];
        EXPECT_EQ(g.index, 0);
        EXPECT_EQ(g.uuid, "GPU-00000000-0000-0000-0000-000000000000");
        EXPECT_EQ(g.name, c.name);
        EXPECT_EQ(g.bus_id, c.bus_id);
        EXPECT_EQ(g.driver_version, c.driver);
        EXPECT_EQ(g.memory_total_mib, c.total);
        EXPECT_EQ(g.memory_used_mib, c.used);
        EXPECT_EQ(g.utilization_percent, c.util);
        EXPECT_EQ(g.temperature_c, c.temp);
        EXPECT_EQ(g.power_draw_w, c.power);
        EXPECT_EQ(g.power_limit_w, 700.0);
        EXPECT_EQ(g.persistence_mode, true);
        EXPECT_EQ(g.mig_enabled, c.mig);
        EXPECT_EQ(g.compute_cap, "9.0");
    }
}

TEST(SmiCaptures, B300QueryWithoutIndexColumn) {
    // `--query-gpu=driver_version,name,compute_cap --format=csv` on 7×B300: rows in index order.
    const auto gpus = parse_smi_query(smi_fixture("query-610-b300-compute-cap.csv"));
    ASSERT_EQ(gpus.size(), 7u);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        EXPECT_EQ(gpus[i].index, static_cast<int>(i));
        EXPECT_EQ(gpus[i].driver_version, "610.57.04");
        EXPECT_EQ(gpus[i].name, "NVIDIA B300 SXM6 AC");
        EXPECT_EQ(gpus[i].compute_cap, "10.3");
        EXPECT_EQ(gpus[i].memory_total_mib, std::nullopt);
    }
}

TEST(SmiCaptures, HealthColumnsOfTheFullQueryR590) {
    // The same CSVs through the health parser (ECC counters, clock event reasons by name), MIG
    // on or off: ECC on, no errors, the GPU idle and nothing else slowing it.
    for (const char* file :
         {"query-all-590-h100-exporter.csv", "query-all-590-h200-mig-exporter.csv"}) {
        SCOPED_TRACE(file);
        const auto rows = parse_smi_health(smi_fixture(file));
        ASSERT_EQ(rows.size(), 1u);
        const auto& h = rows[0];
        EXPECT_EQ(h.uuid, "GPU-00000000-0000-0000-0000-000000000000");
        EXPECT_EQ(h.ecc_enabled, true);
        EXPECT_EQ(h.ecc_corrected_volatile, 0.0);
        EXPECT_EQ(h.ecc_uncorrected_volatile, 0.0);
        EXPECT_EQ(h.ecc_corrected_aggregate, 0.0);
        EXPECT_EQ(h.ecc_uncorrected_aggregate, 0.0);
        ASSERT_EQ(h.throttle.size(), 8u);
        for (const auto& [reason, active] : h.throttle) {
            EXPECT_EQ(active, reason == "gpu_idle") << reason;
        }
    }
}
