// monitoring.node_exporter: Debian's prometheus-node-exporter installed from the distro, its
// textfile collector pointed at the profile's directory by editing ARGS in place.
#include "../../../src/steps/node_exporter_args.hpp"
#include "host_builder.hpp"

#include <gpuprov/error.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using namespace gpuprov::steps;
using Strings = std::vector<std::string>;

namespace {

// The file Debian 12's prometheus-node-exporter 1.5.0-1+b6 ships (tests/fixtures/cmd/README.md).
std::string debian_defaults() {
    return read_fixture("cmd/files/prometheus-node-exporter.default");
}

const std::string kFlag = "--collector.textfile.directory=";

Profile node_exporter_profile(const std::string& dir) {
    auto p = load_test_profile();
    p.monitoring->node_exporter = true;
    p.monitoring->textfile_dir = dir;
    return p;
}

// The converged monitoring of host_builder, for the profile's directory.
void converge_monitoring(TestHost& host, const std::string& dir) {
    converge_config(host);
    auto& sys = host.sys;
    sys.add_file(kMetricsService,
                 kManaged +
                     "[Unit]\nDescription=gpuprov GPU metrics for the node_exporter "
                     "textfile collector\n\n[Service]\nType=oneshot\n"
                     "ExecStart=/usr/local/bin/gpuprov metrics --textfile " +
                     dir + " --temperature-alert-c 85\n");
    sys.add_dir(dir);
}

// Converged, with the package installed and `defaults` as its file.
void installed_host(TestHost& host, const std::string& dir, const std::string& defaults) {
    converge_monitoring(host, dir);
    host.set_package("prometheus-node-exporter", "1.5.0-1+b6");
    host.sys.add_file(kNodeExporterDefaults, defaults);
}

} // namespace

// ---- the ARGS merge ----

TEST(NodeExporterArgs, DebianFileAndTheDefaultDirectoryNeedNoEdit) {
    const auto file = debian_defaults();
    EXPECT_EQ(node_exporter_textfile_dir(file), "/var/lib/prometheus/node-exporter");
    const auto m = merge_node_exporter_args(file, "/var/lib/prometheus/node-exporter");
    EXPECT_FALSE(m.changed);
    EXPECT_TRUE(m.problem.empty());
    EXPECT_EQ(m.content, file);
}

TEST(NodeExporterArgs, FlagAddedInsideArgsAndEveryOtherLineKept) {
    const auto file = debian_defaults();
    const auto m = merge_node_exporter_args(file, "/srv/metrics");
    ASSERT_TRUE(m.changed);
    auto expected = file;
    expected.replace(expected.find("ARGS=\"\""), 7, "ARGS=\"" + kFlag + "/srv/metrics\"");
    EXPECT_EQ(m.content, expected);
    EXPECT_EQ(node_exporter_textfile_dir(m.content), "/srv/metrics");
    // Idempotent: merging again changes nothing.
    EXPECT_FALSE(merge_node_exporter_args(m.content, "/srv/metrics").changed);
}

TEST(NodeExporterArgs, AdminsFlagsKeptAndOnlyTheDirectoryValueReplaced) {
    const std::string file = "# local\nARGS=\"--web.listen-address=:9101 " + kFlag +
                             "/old/dir --collector.systemd\"\nOTHER=1\n";
    const auto m = merge_node_exporter_args(file, "/srv/metrics");
    ASSERT_TRUE(m.changed);
    EXPECT_EQ(m.content, "# local\nARGS=\"--web.listen-address=:9101 " + kFlag +
                             "/srv/metrics --collector.systemd\"\nOTHER=1\n");
    // The two-word form, single quotes, a bare value, a later assignment winning.
    EXPECT_EQ(merge_node_exporter_args("ARGS='--collector.textfile.directory /a'\n", "/b").content,
              "ARGS='--collector.textfile.directory /b'\n");
    EXPECT_EQ(merge_node_exporter_args("ARGS=--collector.systemd\n", "/b").content,
              "ARGS=\"--collector.systemd " + kFlag + "/b\"\n");
    EXPECT_EQ(node_exporter_textfile_dir("ARGS=\"" + kFlag + "/a\"\nARGS=\"\"\n"),
              "/var/lib/prometheus/node-exporter");
    // No ARGS line at all: one is appended, the rest untouched.
    EXPECT_EQ(merge_node_exporter_args("# empty\n", "/b").content,
              "# empty\nARGS=\"" + kFlag + "/b\"\n");
}

TEST(NodeExporterArgs, ArgsItCannotEditSafelyAreRefusedWithTheFix) {
    for (const std::string file :
         {"ARGS=\"--a \\\n --b\"\n", "ARGS=\"--collector.filesystem.ignored=$X\"\n", "ARGS=\"--a\n",
          "ARGS=--a --b\n", "ARGS=\"--a\" extra\n"}) {
        SCOPED_TRACE(file);
        const auto m = merge_node_exporter_args(file, "/srv/metrics");
        EXPECT_FALSE(m.changed);
        EXPECT_TRUE(contains(m.problem, "/etc/default/prometheus-node-exporter line 1"))
            << m.problem;
        EXPECT_TRUE(contains(m.problem, "add " + kFlag + "/srv/metrics to ARGS yourself"))
            << m.problem;
        EXPECT_FALSE(node_exporter_textfile_dir(file).has_value());
    }
}

// ---- plan, apply, verify ----

TEST(NodeExporterStep, NotInstalledPlansThePackageAndTheEditAfterIt) {
    TestHost host;
    const auto profile = node_exporter_profile("/srv/metrics");
    converge_monitoring(host, "/srv/metrics");
    StepRunner run(host, profile);
    const auto r = run.check("monitoring");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(specs(r.installs), Strings{"prometheus-node-exporter"});
    // The package's own file is not there yet: a note, not a diff against nothing.
    EXPECT_TRUE(targets(r, Change::Kind::file).empty());
    bool noted = false;
    for (const auto& c : r.changes) {
        noted = noted || contains(c.detail, kFlag + "/srv/metrics");
    }
    EXPECT_TRUE(noted);
}

TEST(NodeExporterStep, ApplyEditsTheInstalledFileRestartsAndVerifies) {
    TestHost host;
    const auto profile = node_exporter_profile("/srv/metrics");
    installed_host(host, "/srv/metrics", debian_defaults());
    StepRunner run(host, profile);

    auto verified = run.step("monitoring").verify(run.ctx(), host.sys);
    ASSERT_EQ(verified.size(), 2u);
    EXPECT_FALSE(verified[1].passed);
    EXPECT_TRUE(contains(verified[1].found, "/var/lib/prometheus/node-exporter"))
        << verified[1].found;

    const auto r = run.check("monitoring");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kNodeExporterDefaults});

    host.clear_records();
    const Strings restart{"systemctl", "try-restart", "prometheus-node-exporter.service"};
    host.sys.on_command(restart, CommandResult{});
    EXPECT_EQ(run.step("monitoring").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    const auto written = host.sys.read_file(kNodeExporterDefaults);
    ASSERT_TRUE(written);
    EXPECT_TRUE(contains(*written, "# Set the command-line arguments")); // comments kept
    EXPECT_TRUE(contains(*written, "ARGS=\"" + kFlag + "/srv/metrics\"\n"));
    // ARGS is read at start: the running exporter is restarted onto the new directory.
    EXPECT_EQ(std::count(host.sys.commands_ran.begin(), host.sys.commands_ran.end(), restart), 1);
    EXPECT_EQ(run.check("monitoring").status, StepStatus::satisfied);
    verified = run.step("monitoring").verify(run.ctx(), host.sys);
    ASSERT_EQ(verified.size(), 2u);
    EXPECT_EQ(verified[1].id, "monitoring.node_exporter");
    EXPECT_TRUE(verified[1].passed) << verified[1].found;
}

TEST(NodeExporterStep, DefaultDirectoryNeedsOnlyThePackage) {
    TestHost host;
    const auto profile = node_exporter_profile("/var/lib/prometheus/node-exporter");
    converge_config(host);
    host.set_package("prometheus-node-exporter", "1.5.0-1+b6");
    host.sys.add_file(kNodeExporterDefaults, debian_defaults());
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("monitoring").status, StepStatus::satisfied);
    const auto verified = run.step("monitoring").verify(run.ctx(), host.sys);
    ASSERT_EQ(verified.size(), 2u);
    EXPECT_TRUE(verified[1].passed);
}

TEST(NodeExporterStep, UneditableArgsBlockAndChangeNothing) {
    TestHost host;
    const auto profile = node_exporter_profile("/srv/metrics");
    installed_host(host, "/srv/metrics", "ARGS=\"--a \\\n --b\"\n");
    StepRunner run(host, profile);
    const auto r = run.check("monitoring");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "add " + kFlag + "/srv/metrics to ARGS yourself")) << r.reason;
}

TEST(NodeExporterStep, ElHostsAreBlockedWithTheManualWay) {
    FakeSystem sys;
    sys.load_tree("hosts/rhel-9");
    const auto profile = node_exporter_profile("/var/lib/prometheus/node-exporter");
    StepRunner run(sys, profile);
    const auto r = run.check("monitoring");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "--collector.textfile.directory=/var/lib/prometheus/"
                                   "node-exporter"))
        << r.reason;
}

TEST(NodeExporterStep, FailedRestartFailsTheStepWithSystemctlsWords) {
    TestHost host;
    const auto profile = node_exporter_profile("/srv/metrics");
    installed_host(host, "/srv/metrics", debian_defaults());
    host.sys.on_command({"systemctl", "try-restart", "prometheus-node-exporter.service"},
                        CommandResult{.exit_code = 1,
                                      .err = "Job for prometheus-node-exporter.service failed "
                                             "because the control process exited with error "
                                             "code.\n"});
    StepRunner run(host, profile);
    const auto r = run.check("monitoring");
    try {
        (void)run.step("monitoring").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
        FAIL() << "apply succeeded";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "control process exited")) << e.what();
    }
}
