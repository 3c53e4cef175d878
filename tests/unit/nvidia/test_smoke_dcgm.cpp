// smoke.dcgm and dcgmi diag's table: real captures (tests/fixtures/cmd/smoke/dcgmi-diag-*.txt,
// DCGM 3.1.8, 3.3.9 and 4.4.2), the exit status DCGM gives (226: DCGM_ST_NVVS_ERROR), and when
// the test runs at all.
#include "nvidia_test_util.hpp"

#include <gpuprov/smoke.hpp>

namespace gpuprov::testing {
namespace {

const std::vector<std::string> kDiag = {"/usr/bin/dcgmi", "diag", "-r", "1"};

TEST(DcgmDiagParse, Dcgm3PassEveryDeploymentCheck) {
    const auto rep = parse_dcgm_diag(read_fixture("cmd/smoke/dcgmi-diag-r1-3.3.9-pass.txt"));
    EXPECT_EQ(rep.dcgm_version, "3.3.9");
    EXPECT_EQ(rep.driver, "560.35.03");
    ASSERT_EQ(rep.rows.size(), 9u);
    EXPECT_EQ(rep.rows[0].category, "Deployment");
    EXPECT_EQ(rep.rows[0].name, "Denylist");
    EXPECT_EQ(rep.rows[8].name, "Inforom");
    for (const auto& r : rep.rows) {
        EXPECT_EQ(r.result, "Pass") << r.name;
    }
    EXPECT_TRUE(rep.failed().empty());
}

TEST(DcgmDiagParse, Dcgm3FailureKeepsItsWrappedErrorTextWhole) {
    const auto rep =
        parse_dcgm_diag(read_fixture("cmd/smoke/dcgmi-diag-r1-3.1.8-persistence-fail.txt"));
    EXPECT_EQ(rep.dcgm_version, "3.1.8");
    ASSERT_EQ(rep.rows.size(), 9u); // the Error row and its continuation are no checks
    const auto failed = rep.failed();
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0]->name, "Persistence Mode");
    ASSERT_EQ(failed[0]->details.size(), 1u);
    const auto& text = failed[0]->details[0];
    // Words DCGM cut across rows come back whole; a cut at a space keeps the space.
    EXPECT_TRUE(contains(text, "Error: Persistence mode for GPU 0 is currently disabled. The "
                               "DCGM diagnostic requires peristence mode to be enabled."))
        << text;
    EXPECT_TRUE(contains(text, "Persistence mode for GPU 1 is currently disabled.")) << text;
    EXPECT_EQ(rep.rows[5].name, "Environment Variables"); // the row after the text is a check
    EXPECT_EQ(rep.rows[5].result, "Pass");
}

TEST(DcgmDiagParse, Dcgm4PluginsWithPerGpuLines) {
    const auto rep = parse_dcgm_diag(read_fixture("cmd/smoke/dcgmi-diag-r2-4.4.2-pass.txt"));
    EXPECT_EQ(rep.dcgm_version, "4.4.2");
    ASSERT_EQ(rep.rows.size(), 3u);
    EXPECT_EQ(rep.rows[0].category, "Deployment");
    EXPECT_EQ(rep.rows[0].name, "software");
    EXPECT_EQ(rep.rows[1].category, "Hardware");
    EXPECT_EQ(rep.rows[2].category, "Integration");
    EXPECT_EQ(rep.rows[2].name, "pcie");
    EXPECT_EQ(rep.rows[2].details, std::vector<std::string>{"GPU0: Pass"});
    EXPECT_TRUE(rep.failed().empty());
}

TEST(DcgmDiagParse, LowerCaseFailOfDcgm4CountsAndOtherTextIsIgnored) {
    auto text = read_fixture("cmd/smoke/dcgmi-diag-r2-4.4.2-pass.txt");
    text.replace(text.find("| software                  | Pass"), 35,
                 "| software                  | Fail");
    const auto rep = parse_dcgm_diag("Error: something else\n" + text + "trailing words\n");
    ASSERT_EQ(rep.failed().size(), 1u);
    EXPECT_EQ(rep.failed()[0]->name, "software");
    EXPECT_TRUE(parse_dcgm_diag("Error: Unable to connect to host engine.\n").rows.empty());
}

struct SmokeDcgm : ::testing::Test {
    FakeSystem sys;
    Profile profile = driver_profile("550", "12.4");
    HostFacts facts = debian_facts();

    SmokeDcgm() {
        PciGpu g;
        g.address = "0000:18:00.0";
        g.vendor_id = 0x10de;
        g.device_id = 0x2335;
        g.class_code = 0x030200;
        facts.gpus = {g};
        script_query(sys, "query-550-h200.csv");
        profile.cuda.reset(); // smoke.cuda then skips without running nvcc
        profile.monitoring = MonitoringSpec{};
    }
    std::vector<SmokeOutcome> run() {
        return run_smoke({profile, facts, "/tmp/gpuprov-smoke-x", {}}, sys);
    }
    std::optional<SmokeOutcome> dcgm() {
        for (auto& o : run()) {
            if (o.id == "smoke.dcgm") {
                return o;
            }
        }
        return std::nullopt;
    }
    void diag_prints(const std::string& fixture, int exit_code) {
        sys.add_file("/usr/bin/dcgmi", "");
        auto r = answer_ok(read_fixture("cmd/smoke/" + fixture));
        r.exit_code = exit_code;
        sys.on_command(kDiag, r);
    }
};

TEST_F(SmokeDcgm, NotRunWithoutDcgmOrTheProfileAsking) {
    EXPECT_FALSE(dcgm().has_value());
    EXPECT_EQ(run().size(), 3u);
}

TEST_F(SmokeDcgm, PassingTableAndExitZeroPasses) {
    diag_prints("dcgmi-diag-r1-3.3.9-pass.txt", 0);
    const auto o = dcgm();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, SmokeStatus::passed) << o->reason;
    EXPECT_EQ(o->command, "/usr/bin/dcgmi diag -r 1");
    EXPECT_EQ(o->found, "9 checks passed (DCGM 3.3.9)");
}

TEST_F(SmokeDcgm, AFailedCheckFailsWithItsErrorText) {
    diag_prints("dcgmi-diag-r1-3.1.8-persistence-fail.txt", 226);
    const auto o = dcgm();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o->reason, "failed 1 check: Persistence Mode: Fail (Error: Persistence "
                                    "mode for GPU 0 is currently disabled."))
        << o->reason;
    // A Fail row fails the test even when dcgmi's exit status says nothing.
    diag_prints("dcgmi-diag-r1-3.1.8-persistence-fail.txt", 0);
    EXPECT_EQ(dcgm()->status, SmokeStatus::failed);
}

TEST_F(SmokeDcgm, NoHostEngineFailsOnTheExitStatus) {
    sys.add_file("/usr/bin/dcgmi", "");
    sys.on_command(kDiag, CommandResult{.exit_code = 235,
                                        .err = "Error: unable to establish a connection to the "
                                               "specified host: localhost\n"});
    const auto o = dcgm();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, SmokeStatus::failed);
    EXPECT_EQ(o->reason, "dcgmi diag exit status 235 (DCGM status -21)");
    EXPECT_TRUE(contains(o->fix, "nvidia-dcgm")) << o->fix;
}

TEST_F(SmokeDcgm, ProfileAskingWithoutDcgmiFails) {
    profile.monitoring->dcgm = true;
    const auto o = dcgm();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o->reason, "/usr/bin/dcgmi is not installed")) << o->reason;
}

TEST_F(SmokeDcgm, SkippedWithTheOthersWhenNoGpuAnswers) {
    diag_prints("dcgmi-diag-r1-3.3.9-pass.txt", 0);
    facts.gpus.clear();
    const auto o = dcgm();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, SmokeStatus::skipped);
    EXPECT_TRUE(contains(o->reason, "no NVIDIA GPU on PCI")) << o->reason;
}

TEST_F(SmokeDcgm, AsRootAWritableDcgmiIsRefusedAndNotRun) {
    diag_prints("dcgmi-diag-r1-3.3.9-pass.txt", 0);
    sys.set_mode("/usr/bin/dcgmi", 0777);
    const auto o = dcgm();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, SmokeStatus::failed);
    EXPECT_TRUE(contains(o->reason, "refusing to run /usr/bin/dcgmi as root")) << o->reason;
}

} // namespace
} // namespace gpuprov::testing
