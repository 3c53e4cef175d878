#include "nvidia_test_util.hpp"

#include <gpuprov/local_system.hpp>
#include <gpuprov/metrics.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

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

// Every family gpuprov metrics can write has a series in this one.
MetricsSnapshot full_snapshot() {
    auto full = a100_snapshot();
    full.gpus_on_pci = 2;
    full.driver_loaded = true;
    full.temperature_alert_c = 85;
    full.health = parse_smi_health(read_fixture("cmd/nvidia-smi/health-580-2gpu.csv"));
    full.health_up = true;
    full.nvlink = parse_nvlink_errors(read_fixture("cmd/nvlink/errors-535-a100-gpu0-1.txt"));
    full.xids = parse_xid_events(read_fixture("cmd/xid/journal-45-590.txt"));
    return full;
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

TEST(Metrics, NextBootReadyCarriesTheKernel) {
    MetricsSnapshot s;
    auto text = render_metrics(s);
    EXPECT_EQ(text.find("gpuprov_next_boot_ready"), std::string::npos) << "not forecast: absent";
    s.next_boot = MetricsSnapshot::NextBoot{.ready = false, .kernel = "6.1.0-31-amd64"};
    text = render_metrics(s);
    EXPECT_NE(text.find("# TYPE gpuprov_next_boot_ready gauge\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ngpuprov_next_boot_ready{kernel=\"6.1.0-31-amd64\"} 0\n"),
              std::string::npos)
        << text;
    s.next_boot->ready = true;
    text = render_metrics(s);
    EXPECT_NE(text.find("\ngpuprov_next_boot_ready{kernel=\"6.1.0-31-amd64\"} 1\n"),
              std::string::npos)
        << text;
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

const std::vector<std::string> kJournalctlKernel = {"journalctl", "-k", "-q", "--no-pager"};
const std::vector<std::string> kNvlinkErrors = {"nvidia-smi", "nvlink", "-e"};

TEST(Metrics, CollectReadsSmiHealthKernelLogAndJournal) {
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    sys.on_command(smi_health_argv(),
                   answer_ok(read_fixture("cmd/nvidia-smi/health-580-2gpu.csv")));
    sys.on_command(kNvlinkErrors, answer_ok(read_fixture("cmd/nvlink/errors-535-a100-gpu0-1.txt")));
    sys.on_command(kJournalctlKernel, answer_ok(read_fixture("cmd/xid/journal-45-590.txt")));
    const auto s = collect_metrics(sys); // no journal file: none
    EXPECT_TRUE(s.smi_up);
    EXPECT_EQ(s.gpus.size(), 2u);
    EXPECT_EQ(s.health_up, true);
    EXPECT_EQ(s.health.size(), 2u);
    ASSERT_TRUE(s.nvlink.has_value());
    EXPECT_EQ(s.nvlink->size(), 72u);
    ASSERT_TRUE(s.xids.has_value());
    EXPECT_EQ(s.xids->size(), 7u);
    EXPECT_FALSE(s.journal.has_value());
}

TEST(Metrics, TheTimersProbesLogTheirSizeNotTheirOutput) {
    // Every minute, as root, into /var/log/gpuprov.log: journalctl -k alone is the whole boot's
    // kernel log (issue 26 item 5).
    FakeSystem sys;
    script_query(sys, "query-580-a100.csv");
    sys.on_command(smi_health_argv(),
                   answer_ok(read_fixture("cmd/nvidia-smi/health-580-2gpu.csv")));
    sys.on_command(kNvlinkErrors, answer_ok(read_fixture("cmd/nvlink/errors-535-a100-gpu0-1.txt")));
    sys.on_command(kJournalctlKernel, answer_failed(1, "", "No journal files were found."));
    sys.on_command({"dmesg"}, answer_ok(read_fixture("cmd/xid/dmesg-62-340.txt")));
    (void)collect_metrics(sys);
    ASSERT_EQ(sys.commands_seen.size(), 5u);
    for (const auto& c : sys.commands_seen) {
        EXPECT_FALSE(c.log_output) << display_argv(c.argv);
    }
    EXPECT_TRUE(sys.commands_ran.empty()); // read-only probes, all of them
}

TEST(Metrics, CollectFallsBackToDmesgAndSkipsHealthWithoutSmi) {
    // nvidia-smi fails: the health and NVLink queries are not run (FakeSystem fails the test
    // on any unscripted command). journalctl fails: dmesg is read.
    FakeSystem sys;
    script_query_error(sys, "error-driver-not-loaded.txt");
    sys.on_command(kJournalctlKernel, answer_failed(1, "", "No journal files were found."));
    sys.on_command({"dmesg"}, answer_ok(read_fixture("cmd/xid/dmesg-62-340.txt")));
    auto s = collect_metrics(sys);
    EXPECT_FALSE(s.smi_up);
    EXPECT_FALSE(s.health_up.has_value());
    EXPECT_FALSE(s.nvlink.has_value());
    ASSERT_TRUE(s.xids.has_value());
    ASSERT_EQ(s.xids->size(), 1u);
    EXPECT_EQ((*s.xids)[0].xid, 62);

    // Neither log readable (dmesg_restrict as a user): no Xid series, the log reported down.
    FakeSystem none;
    script_query_error(none, "error-driver-not-loaded.txt");
    none.on_command(kJournalctlKernel, answer_failed(1, "", "No journal files were found."));
    none.on_command({"dmesg"}, answer_failed(1, "",
                                             "dmesg: read kernel buffer failed: "
                                             "Operation not permitted"));
    s = collect_metrics(none);
    EXPECT_FALSE(s.xids.has_value());
    const auto text = render_metrics(s);
    EXPECT_TRUE(has_line(text, "gpuprov_kernel_log_up 0")) << text;
    EXPECT_EQ(text.find("gpuprov_xid_errors_total"), std::string::npos);
}

TEST(Metrics, EccThrottleNvlinkAndXidSeries) {
    auto s = a100_snapshot();
    s.health = parse_smi_health(read_fixture("cmd/nvidia-smi/health-580-2gpu.csv"));
    s.health_up = true;
    s.nvlink = parse_nvlink_errors("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-a)\n"
                                   "\t Link 1: CRC Errors: 891\n");
    s.xids = parse_xid_events(read_fixture("cmd/xid/journal-45-590.txt"));
    const auto text = render_metrics(s);
    const std::string gpu0 = R"(index="0",uuid="GPU-34319582-d595-d1c7-d1d2-179bcfa61660")";
    const std::string gpu1 = R"(index="1",uuid="GPU-5c5b0b2e-9f7a-4c1d-8e3a-2b1f0d9c8e71")";
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_health_query_up 1"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_ecc_mode_enabled{" + gpu0 + "} 1")) << text;
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_ecc_mode_enabled{" + gpu1 + "} 0"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_ecc_errors_total{" + gpu0 +
                                   R"(,error="uncorrected",scope="volatile"} 2)"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_ecc_errors_total{" + gpu0 +
                                   R"(,error="corrected",scope="aggregate"} 40)"));
    // ECC off on GPU 1: no counters at all, rather than zeros.
    EXPECT_EQ(text.find("gpuprov_gpu_ecc_errors_total{" + gpu1), std::string::npos);
    EXPECT_TRUE(has_line(text, "# TYPE gpuprov_gpu_ecc_errors_total counter"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_clock_throttle_active{" + gpu0 +
                                   R"(,reason="hw_thermal_slowdown"} 1)"));
    EXPECT_TRUE(has_line(text, "gpuprov_gpu_clock_throttle_active{" + gpu1 +
                                   R"(,reason="hw_thermal_slowdown"} 0)"));
    EXPECT_TRUE(has_line(
        text, R"(gpuprov_nvlink_errors_total{index="0",uuid="GPU-a",link="1",counter="crc"} 891)"));
    // Seven Xid 45 lines over four devices, counted per device and code.
    EXPECT_TRUE(has_line(text, "gpuprov_kernel_log_up 1"));
    EXPECT_TRUE(has_line(text, R"(gpuprov_xid_errors_total{pci_device="0000:dc:00",xid="45"} 2)"));
    EXPECT_TRUE(has_line(text, R"(gpuprov_xid_errors_total{pci_device="0000:97:00",xid="45"} 1)"));
    EXPECT_TRUE(has_line(text, "# TYPE gpuprov_xid_errors_total counter"));
}

TEST(Metrics, PromtoolAcceptsTheOutput) {
    LocalSystem local;
    for (const auto& snapshot : {a100_snapshot(), MetricsSnapshot{}, full_snapshot()}) {
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

namespace {

// The "expr" of every target and the templating queries, anywhere in the dashboard.
void collect_queries(const nlohmann::json& j, std::vector<std::string>& out) {
    if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            if ((key == "expr" || key == "definition") && value.is_string()) {
                out.push_back(value.get<std::string>());
            } else {
                collect_queries(value, out);
            }
        }
    } else if (j.is_array()) {
        for (const auto& v : j) {
            collect_queries(v, out);
        }
    }
}

} // namespace

TEST(Metrics, GrafanaDashboardIsJsonAndQueriesOnlySeriesGpuprovWrites) {
    const auto path = std::string(GPUPROV_DIST_DIR) + "/grafana/gpuprov-dashboard.json";
    LocalSystem local;
    const auto text = local.read_file(path);
    ASSERT_TRUE(text.has_value()) << path;
    nlohmann::json dashboard;
    ASSERT_NO_THROW(dashboard = nlohmann::json::parse(*text)) << path << " is not valid JSON";
    EXPECT_EQ(dashboard.at("uid"), "gpuprov-hosts");
    ASSERT_TRUE(dashboard.at("panels").is_array());

    std::set<std::string> families;
    const std::regex type_line("# TYPE (\\S+) ");
    const auto rendered = render_metrics(full_snapshot());
    for (std::sregex_iterator it(rendered.begin(), rendered.end(), type_line), end; it != end;
         ++it) {
        families.insert((*it)[1]);
    }

    std::vector<std::string> queries;
    collect_queries(dashboard, queries);
    EXPECT_GE(queries.size(), 20u);
    // A name followed by a selector or a range is a metric; label names are followed by "=".
    const std::regex metric("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*[{\\[,)]");
    std::set<int> ids;
    for (const auto& q : queries) {
        SCOPED_TRACE(q);
        std::size_t named = 0;
        for (std::sregex_iterator it(q.begin(), q.end(), metric), end; it != end; ++it) {
            const std::string name = (*it)[1];
            if (name == "instance" || name == "by" || name == "on") {
                continue; // label_values(…, instance), by (...), on (...)
            }
            EXPECT_TRUE(families.count(name)) << name << " is not a metric gpuprov writes";
            ++named;
        }
        EXPECT_GE(named, 1u) << "names no gpuprov metric";
    }
    for (const auto& panel : dashboard.at("panels")) {
        EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << "duplicate panel id";
        EXPECT_TRUE(panel.contains("gridPos"));
    }
}
