// The health parsers over real captures (tests/fixtures/cmd/README.md) and the shapes the
// documented output rules allow.
#include <fake_system.hpp>
#include <gpuprov/gpu_health.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

namespace {

std::optional<bool> throttle(const SmiHealth& h, const std::string& reason) {
    for (const auto& [r, active] : h.throttle) {
        if (r == reason) {
            return active;
        }
    }
    return std::nullopt;
}

} // namespace

TEST(SmiHealth, FullQueryOfARealH200MapsColumnsByName) {
    // 214 columns with units (what nvidia_gpu_exporter parses); only the health ones count.
    const auto rows = parse_smi_health(read_fixture("cmd/nvidia-smi/query-all-580-h200.csv"));
    ASSERT_EQ(rows.size(), 1u);
    const auto& h = rows[0];
    EXPECT_EQ(h.index, 0);
    EXPECT_EQ(h.uuid, "GPU-00000000-0000-0000-0000-000000000000");
    EXPECT_EQ(h.ecc_enabled, true);
    EXPECT_EQ(h.ecc_corrected_volatile, 0.0);
    EXPECT_EQ(h.ecc_corrected_aggregate, 0.0);
    EXPECT_EQ(h.ecc_uncorrected_volatile, 0.0);
    EXPECT_EQ(h.ecc_uncorrected_aggregate, 0.0);
    // Eight reasons; the two bitmask columns are not reasons of their own.
    EXPECT_EQ(h.throttle.size(), 8u);
    EXPECT_EQ(throttle(h, "gpu_idle"), true);
    EXPECT_EQ(throttle(h, "hw_thermal_slowdown"), false);
    EXPECT_EQ(throttle(h, "sync_boost"), false);
    EXPECT_FALSE(throttle(h, "active"));
    EXPECT_FALSE(throttle(h, "supported"));
}

TEST(SmiHealth, CountsAndSentinelsPerGpu) {
    const auto rows = parse_smi_health(read_fixture("cmd/nvidia-smi/health-580-2gpu.csv"));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].ecc_corrected_volatile, 12.0);
    EXPECT_EQ(rows[0].ecc_corrected_aggregate, 40.0);
    EXPECT_EQ(rows[0].ecc_uncorrected_volatile, 2.0);
    EXPECT_EQ(rows[0].ecc_uncorrected_aggregate, 3.0);
    EXPECT_EQ(throttle(rows[0], "hw_slowdown"), true);
    EXPECT_EQ(throttle(rows[0], "hw_thermal_slowdown"), true);
    EXPECT_EQ(throttle(rows[0], "sw_power_cap"), false);
    // ECC off: the counters are [N/A], absent rather than 0; [Not Supported] reason left out.
    EXPECT_EQ(rows[1].ecc_enabled, false);
    EXPECT_FALSE(rows[1].ecc_corrected_volatile);
    EXPECT_FALSE(rows[1].ecc_uncorrected_aggregate);
    EXPECT_FALSE(throttle(rows[1], "sync_boost"));
    EXPECT_EQ(throttle(rows[1], "gpu_idle"), true);
}

TEST(SmiHealth, OldThrottleReasonNames) {
    const auto rows = parse_smi_health(read_fixture("cmd/nvidia-smi/health-470-old-names.csv"));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].throttle.size(), 8u);
    EXPECT_EQ(throttle(rows[0], "sw_power_cap"), true);
}

TEST(SmiHealth, WarningLinesAndBrokenRowsSkipped) {
    const auto rows = parse_smi_health("WARNING: infoROM is corrupted at gpu 0000:00:1E.0\n"
                                       "index, uuid, ecc.mode.current\n"
                                       "0, GPU-a, Enabled\n"
                                       "1, GPU-b\n"
                                       "x, GPU-c, Enabled\n");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].uuid, "GPU-a");
    EXPECT_TRUE(parse_smi_health("").empty());
    EXPECT_TRUE(parse_smi_health("0, GPU-a, Enabled\n").empty()); // no header: no mapping
}

TEST(SmiHealth, BarePrefixColumnIsNoThrottleReason) {
    // fuzz_smi_health's property (found writing it): a column named only "clocks_event_reasons."
    // gave a reason "" (an empty reason label in the metrics).
    const auto rows =
        parse_smi_health("index, clocks_event_reasons., clocks_event_reasons.sync_boost\n"
                         "0, Active, Not Active\n");
    ASSERT_EQ(rows.size(), 1u);
    ASSERT_EQ(rows[0].throttle.size(), 1u);
    EXPECT_EQ(rows[0].throttle[0].first, "sync_boost");
}

TEST(SmiHealth, AsksByTheNamesEveryDriverAccepts) {
    const auto argv = smi_health_argv();
    ASSERT_EQ(argv.size(), 3u);
    EXPECT_EQ(argv[0], "nvidia-smi");
    EXPECT_NE(argv[1].find("clocks_throttle_reasons.hw_thermal_slowdown"), std::string::npos);
    EXPECT_NE(argv[1].find("ecc.errors.uncorrected.volatile.total"), std::string::npos);
    // The header is kept: the parser needs it.
    EXPECT_EQ(argv[2], "--format=csv,nounits");
}

TEST(Xid, SyslogDmesgAndJournalLines) {
    const auto syslog = parse_xid_events(read_fixture("cmd/xid/syslog-79-fallen-off-bus.txt"));
    ASSERT_EQ(syslog.size(), 1u); // "GPU at ... has fallen off the bus" is not an Xid line
    EXPECT_EQ(syslog[0].device, "0000:01:00");
    EXPECT_EQ(syslog[0].xid, 79);

    const auto dmesg = parse_xid_events(read_fixture("cmd/xid/dmesg-62-340.txt"));
    ASSERT_EQ(dmesg.size(), 1u);
    EXPECT_EQ(dmesg[0].xid, 62);

    const auto journal = parse_xid_events(read_fixture("cmd/xid/journal-45-590.txt"));
    ASSERT_EQ(journal.size(), 7u);
    EXPECT_EQ(journal[0].device, "0000:dc:00");
    EXPECT_EQ(journal[0].xid, 45); // "caused by previous Xid 149" is text, not a second event
    EXPECT_EQ(journal[3].device, "0000:97:00");
}

TEST(Xid, OldFormatWithoutPciPrefixAndMalformedLines) {
    const auto events = parse_xid_events("[ 5.1] NVRM: Xid (0000:03:00): 14, Channel 00000001\n"
                                         "[ 5.2] NVRM: Xid (PCI:0000:03:00): abc\n"
                                         "[ 5.3] NVRM: Xid (PCI:0000:03:00) 13\n"
                                         "[ 5.4] NVRM: GPU at PCI:0000:03:00: GPU-x\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].device, "0000:03:00");
    EXPECT_EQ(events[0].xid, 14);
}

TEST(NvlinkErrors, RealA100CaptureEveryLinkAndCounter) {
    const auto counts = parse_nvlink_errors(read_fixture("cmd/nvlink/errors-535-a100-gpu0-1.txt"));
    ASSERT_EQ(counts.size(), 2u * 12u * 3u);
    EXPECT_EQ(counts[0].gpu, 0);
    EXPECT_EQ(counts[0].uuid, "GPU-fde0a018-ad1a-bbec-ccf6-50a9f64bd178");
    EXPECT_EQ(counts[0].link, 0);
    EXPECT_EQ(counts[0].counter, "replay");
    EXPECT_EQ(counts[1].counter, "recovery");
    EXPECT_EQ(counts[2].counter, "crc");
    EXPECT_EQ(counts.back().gpu, 1);
    EXPECT_EQ(counts.back().link, 11);
    EXPECT_EQ(counts.back().uuid, "GPU-264fc0d9-c23f-c1eb-4fc3-40237af3cebc");
}

TEST(NvlinkErrors, ValuesSentinelsAndStrayLines) {
    const auto counts = parse_nvlink_errors("\t Link 0: CRC Errors: 5\n" // before any GPU line
                                            "GPU 2: NVIDIA H100 80GB HBM3\n"
                                            "\t Link 1: CRC Errors: 891\n"
                                            "\t Link 2: Replay Errors: N/A\n"
                                            "\t Link 3: 26.562 GB/s\n"
                                            "\t Link 4: Rx remote Errors: 7\n");
    ASSERT_EQ(counts.size(), 2u);
    EXPECT_EQ(counts[0].gpu, 2);
    EXPECT_EQ(counts[0].uuid, "");
    EXPECT_EQ(counts[0].link, 1);
    EXPECT_EQ(counts[0].value, 891.0);
    EXPECT_EQ(counts[1].counter, "rx_remote");
}

TEST(NvlinkErrors, ValuesThatAreNoCountsAreSkipped) {
    // fuzz_nvlink_errors' property (found writing it): strtod reads "nan", "inf" and negatives,
    // which the metrics exported as counter values (gpuprov_nvlink_errors_total NaN).
    const auto counts = parse_nvlink_errors("GPU 0: NVIDIA A100 (UUID: GPU-a)\n"
                                            "\t Link 0: CRC Errors: nan\n"
                                            "\t Link 0: Replay Errors: inf\n"
                                            "\t Link 0: Recovery Errors: -3\n"
                                            "\t Link 1: CRC Errors: 1e3\n");
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts[0].link, 1);
    EXPECT_EQ(counts[0].value, 1000.0);
}

// Indices and link numbers past int's range were cast and wrapped (GPU 4294967298 became GPU
// 2); now such a line is no GPU, no link, no row.
TEST(SmiHealth, IndicesBeyondIntAreNoReading) {
    const auto rows = parse_smi_health("index, uuid, ecc.mode.current\n"
                                       "4294967296, GPU-a, Enabled\n"
                                       "2, GPU-b, Enabled\n");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].index, 2);
    const auto counts = parse_nvlink_errors("GPU 0: NVIDIA H100 80GB HBM3\n"
                                            "GPU 4294967298: NVIDIA H100 80GB HBM3\n"
                                            "\t Link 1: CRC Errors: 891\n"
                                            "GPU 1: NVIDIA H100 80GB HBM3\n"
                                            "\t Link 4294967297: CRC Errors: 5\n"
                                            "\t Link 2: CRC Errors: 6\n");
    ASSERT_EQ(counts.size(), 1u) << "GPU 4294967298's link is no GPU 0's, the wrapped link none";
    EXPECT_EQ(counts[0].gpu, 1);
    EXPECT_EQ(counts[0].link, 2);
}
