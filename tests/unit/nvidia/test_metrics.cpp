#include "nvidia_test_util.hpp"

#include <gpuprov/local_system.hpp>
#include <gpuprov/metrics.hpp>

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

MetricsSnapshot a100_snapshot() {
    MetricsSnapshot s;
    s.smi_up = true;
    s.gpus = parse_smi_query(read_fixture("cmd/nvidia-smi/query-580-a100.csv"));
    Journal j;
    j.run_started_at = "2026-03-01T10:00:00Z";
    j.run_finished_at = "2026-03-01T10:12:30Z";
    j.reboot_pending = true;
    j.steps.push_back({.id = "driver",
                       .status = "reboot-required",
                       .started_at = "2026-03-01T10:01:00Z",
                       .finished_at = "2026-03-01T10:10:00Z"});
    j.steps.push_back({.id = "nouveau", .status = "done", .started_at = "2026-03-01T10:00:10Z"});
    s.journal = j;
    return s;
}

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

} // namespace

TEST(Metrics, GpuGaugesFromTheQuery) {
    const auto text = render_metrics(a100_snapshot());
    const std::string gpu0 = R"({index="0",uuid="GPU-34319582-d595-d1c7-d1d2-179bcfa61660"})";
    EXPECT_TRUE(has_line(text, "gpuprov_nvidia_smi_up 1"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_utilization_ratio" + gpu0 + " 0.11")) << text;
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_memory_used_bytes" + gpu0 + " 627048448"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_memory_total_bytes" + gpu0 + " 42949672960"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_temperature_celsius" + gpu0 + " 41"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_power_draw_watts" + gpu0 + " 67"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_power_limit_watts" + gpu0 + " 400"));
    EXPECT_TRUE(has_line(
        text,
        R"(gpuprov_gpu_info{index="0",uuid="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",name="NVIDIA A100-SXM4-40GB",pci_bus_id="00000000:10:1C.0",driver_version="580.126.09"} 1)"));
    EXPECT_TRUE(has_line(text, "# TYPE gpuprov_gpu_temperature_celsius gauge"));
}

TEST(Metrics, JournalStateOneHot) {
    const auto text = render_metrics(a100_snapshot());
    EXPECT_TRUE(has_line(text, "gpuprov_reboot_pending 1"));
    EXPECT_TRUE(has_line(text, "gpuprov_last_run_timestamp_seconds 1772359950"));
    EXPECT_TRUE(has_line(text, R"(gpuprov_step_status{step="driver",status="reboot-required"} 1)"));
    EXPECT_TRUE(has_line(text, R"(gpuprov_step_status{step="driver",status="done"} 0)"));
    EXPECT_TRUE(has_line(text, R"(gpuprov_step_status{step="nouveau",status="done"} 1)"));
    EXPECT_TRUE(
        has_line(text, R"(gpuprov_step_last_change_timestamp_seconds{step="driver"} 1772359800)"));
    EXPECT_TRUE(
        has_line(text, R"(gpuprov_step_last_change_timestamp_seconds{step="nouveau"} 1772359210)"));
}

TEST(Metrics, SentinelValuesAreLeftOutAndSmiDownHasNoGpus) {
    MetricsSnapshot s;
    s.smi_up = true;
    s.gpus = parse_smi_query(read_fixture("cmd/nvidia-smi/query-sentinels.csv"));
    const auto text = render_metrics(s);
    EXPECT_EQ(text.find(R"(gpuprov_gpu_power_draw_watts{index="0")"), std::string::npos);
    EXPECT_NE(text.find(R"(gpuprov_gpu_temperature_celsius{index="0")"), std::string::npos);

    const auto down = render_metrics(MetricsSnapshot{});
    EXPECT_TRUE(has_line(down, "gpuprov_nvidia_smi_up 0"));
    EXPECT_EQ(down.find("gpuprov_gpu_info{"), std::string::npos);
    EXPECT_EQ(down.find("gpuprov_step_status"), std::string::npos);
}

TEST(Metrics, HostSeriesTheAlertRulesCompare) {
    auto s = a100_snapshot();
    auto text = render_metrics(s);
    EXPECT_NE(text.find("\ngpuprov_gpus_visible 2\n"), std::string::npos) << text;
    // Unknown to the snapshot (no facts, no --temperature-alert-c): left out, not 0.
    EXPECT_EQ(text.find("gpuprov_gpus_on_pci"), std::string::npos);
    EXPECT_EQ(text.find("gpuprov_driver_loaded"), std::string::npos);
    EXPECT_EQ(text.find("gpuprov_gpu_temperature_alert_celsius"), std::string::npos);

    s.gpus_on_pci = 4;
    s.driver_loaded = true;
    s.temperature_alert_c = 80;
    text = render_metrics(s);
    EXPECT_NE(text.find("\ngpuprov_gpus_on_pci 4\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ngpuprov_driver_loaded 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ngpuprov_gpu_temperature_alert_celsius 80\n"), std::string::npos) << text;

    // nvidia-smi down: no GPU visible, the bus and the module still reported.
    MetricsSnapshot down;
    down.gpus_on_pci = 4;
    down.driver_loaded = false;
    text = render_metrics(down);
    EXPECT_NE(text.find("\ngpuprov_gpus_visible 0\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ngpuprov_driver_loaded 0\n"), std::string::npos) << text;
}

TEST(Metrics, LabelValuesEscaped) {
    EXPECT_EQ(escape_label_value(R"(a"b\c)"
                                 "\n"),
              R"(a\"b\\c\n)");
    MetricsSnapshot s;
    s.smi_up = true;
    s.gpus.push_back(SmiGpu{.index = 0, .uuid = "GPU-x", .name = "Odd \"name\""});
    EXPECT_NE(render_metrics(s).find(R"(name="Odd \"name\"")"), std::string::npos);
}

TEST(Metrics, Rfc3339) {
    EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0.0);
    EXPECT_EQ(parse_rfc3339("2026-03-01T10:00:00Z"), 1772359200.0);
    EXPECT_EQ(parse_rfc3339("2026-03-01T12:00:00+02:00"), 1772359200.0);
    EXPECT_EQ(parse_rfc3339("2026-03-01T10:00:00.5Z"), 1772359200.5);
    EXPECT_FALSE(parse_rfc3339("yesterday"));
    EXPECT_FALSE(parse_rfc3339("2026-03-01T10:00:00"));
}

TEST(Metrics, TextfileWrittenAtomicallyUnderDir) {
    FakeSystem sys;
    write_textfile(sys, "/var/lib/prometheus/node-exporter", "gpuprov_nvidia_smi_up 0\n");
    ASSERT_EQ(sys.files_written.size(), 1u);
    EXPECT_EQ(sys.files_written[0], "/var/lib/prometheus/node-exporter/gpuprov.prom");
}

TEST(Metrics, CollectReadsSmiAndJournal) {
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    const auto s = collect_metrics(sys); // no journal file: none
    EXPECT_TRUE(s.smi_up);
    EXPECT_EQ(s.gpus.size(), 2u);
    EXPECT_FALSE(s.journal.has_value());
}

TEST(Metrics, PromtoolAcceptsTheOutput) {
    LocalSystem local;
    auto full = a100_snapshot();
    full.gpus_on_pci = 2;
    full.driver_loaded = true;
    full.temperature_alert_c = 85;
    for (const auto& snapshot : {a100_snapshot(), MetricsSnapshot{}, full}) {
        Command cmd;
        cmd.argv = {"promtool", "check", "metrics"};
        cmd.timeout = std::chrono::seconds(30);
        cmd.stdin_data = render_metrics(snapshot);
        const auto r = local.query(cmd);
        if (r.not_found) {
            GTEST_SKIP() << "promtool is not installed (scripts/test.sh installs it)";
        }
        EXPECT_TRUE(r.ok()) << r.out << r.err << "\n" << *cmd.stdin_data;
    }
}
