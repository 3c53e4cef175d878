#include "fake_system.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;

TEST(Journal, RoundTripsThroughAtomicWrite) {
    gpuprov::testing::FakeSystem sys;
    Journal j;
    j.profile = "cv-train";
    j.result = "reboot-required";
    j.reboot_pending = true;
    j.runs = 2;
    auto& s = j.upsert("driver");
    s.status = "reboot-required";
    s.versions["cuda-drivers-550"] = "550.54.15-1";
    j.upsert("driver").message = "nouveau is bound";
    save_journal(sys, j);
    EXPECT_EQ(sys.files_written, std::vector<std::string>{kJournalPath});
    const auto back = load_journal(sys);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->profile, "cv-train");
    EXPECT_TRUE(back->reboot_pending);
    ASSERT_EQ(back->steps.size(), 1u);
    EXPECT_EQ(back->step("driver")->message, "nouveau is bound");
    EXPECT_EQ(back->step("driver")->versions.at("cuda-drivers-550"), "550.54.15-1");
    EXPECT_EQ(back->step("cuda-toolkit"), nullptr);
}

TEST(Journal, MissingIsNulloptCorruptIsAnError) {
    gpuprov::testing::FakeSystem sys;
    EXPECT_FALSE(load_journal(sys));
    sys.add_file(kJournalPath, "{ not json");
    EXPECT_THROW((void)load_journal(sys), HostError);
}

TEST(Journal, Rfc3339IsUtc) {
    const auto tp = std::chrono::sys_days{std::chrono::year{2026} / 12 / 1} +
                    std::chrono::hours{13} + std::chrono::minutes{5} + std::chrono::seconds{9};
    EXPECT_EQ(rfc3339(tp), "2026-12-01T13:05:09Z");
}

TEST(Journal, RebootBudgetFieldsRoundTripAndOldFilesStillLoad) {
    gpuprov::testing::FakeSystem sys;
    Journal j;
    j.boot_id = "9f1c2d1e-0000-4000-8000-000000000001";
    auto& s = j.upsert("driver");
    s.status = "reboot-required";
    s.reboot_boot_id = j.boot_id;
    s.reboot_requested_at = "2026-12-02T10:00:00Z";
    save_journal(sys, j);
    const auto back = load_journal(sys);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->boot_id, j.boot_id);
    EXPECT_EQ(back->step("driver")->reboot_boot_id, j.boot_id);
    EXPECT_EQ(back->step("driver")->reboot_requested_at, "2026-12-02T10:00:00Z");

    // A state.json written before these fields existed.
    const auto old = journal_from_json_text(
        R"({"schema":1,"profile":"cv-train","result":"reboot-required","reboot_pending":true,
            "runs":1,"steps":[{"id":"driver","status":"reboot-required","message":"m",
            "started_at":"","finished_at":"","versions":{}}]})");
    EXPECT_EQ(old.boot_id, "");
    ASSERT_NE(old.step("driver"), nullptr);
    EXPECT_EQ(old.step("driver")->reboot_boot_id, "");
    EXPECT_EQ(old.step("driver")->status, "reboot-required");
}

TEST(Journal, CorruptJournalIsMovedAsideForApply) {
    gpuprov::testing::FakeSystem sys;
    sys.add_file(kJournalPath, "{\"schema\": 1, \"steps\": [trunc");
    const auto r = load_journal_or_move_aside(sys);
    EXPECT_FALSE(r.journal);
    ASSERT_FALSE(r.moved_to.empty());
    EXPECT_EQ(r.moved_to.rfind(std::string(kJournalPath) + ".corrupt-", 0), 0u) << r.moved_to;
    EXPECT_EQ(r.moved_to.find(':'), std::string::npos) << r.moved_to;
    EXPECT_EQ(sys.file(r.moved_to), "{\"schema\": 1, \"steps\": [trunc");
    EXPECT_FALSE(sys.exists(kJournalPath));
    // A readable one stays where it is.
    save_journal(sys, Journal{.profile = "cv-train"});
    const auto ok = load_journal_or_move_aside(sys);
    ASSERT_TRUE(ok.journal);
    EXPECT_EQ(ok.journal->profile, "cv-train");
    EXPECT_TRUE(ok.moved_to.empty());
}

TEST(Journal, WrongTypesAreACleanErrorNotAnAbort) {
    gpuprov::testing::FakeSystem sys;
    sys.add_file(kJournalPath, R"({"runs": "many", "steps": 3})");
    EXPECT_THROW((void)load_journal(sys), HostError);
    sys.add_file(kJournalPath, "[1, 2]");
    EXPECT_THROW((void)load_journal(sys), HostError);
}

TEST(Journal, InvalidUtf8InAMessageStillWritesValidJson) {
    gpuprov::testing::FakeSystem sys;
    Journal j;
    j.upsert("cuda-repo").message = "E: Failed to fetch \xff\xfe bad bytes";
    EXPECT_NO_THROW(save_journal(sys, j));
    const auto text = sys.file(kJournalPath).value_or("");
    EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos) << text; // U+FFFD
    const auto back = load_journal(sys);
    ASSERT_TRUE(back);
    EXPECT_NE(back->step("cuda-repo")->message.find("bad bytes"), std::string::npos);
}

TEST(Journal, BootIdIsTrimmedAndEmptyWhenMissing) {
    gpuprov::testing::FakeSystem sys;
    EXPECT_EQ(current_boot_id(sys), "");
    sys.add_file(kBootIdPath, "0b5e6f2a-1111-4222-8333-444455556666\n");
    EXPECT_EQ(current_boot_id(sys), "0b5e6f2a-1111-4222-8333-444455556666");
}

// The journal keeps the last runs, newest first, each with what its steps did and how long
// they took, so `status` can answer "what happened on the last few boots?".
TEST(JournalHistory, EachNewRunArchivesThePreviousOneUpToTen) {
    gpuprov::Journal j;
    EXPECT_TRUE((j.archive_last_run(), j.history.empty())); // never ran: nothing to keep
    for (int run = 0; run < 12; ++run) {
        j.archive_last_run();
        j.run_started_at = fmt::format("2026-12-03T08:{:02d}:00Z", run);
        j.run_finished_at = fmt::format("2026-12-03T08:{:02d}:30Z", run);
        j.result = run == 11 ? "running" : "done";
        auto& driver = j.upsert("driver");
        driver.status = "done";
        driver.started_at = fmt::format("2026-12-03T08:{:02d}:05Z", run);
        driver.finished_at = fmt::format("2026-12-03T08:{:02d}:17Z", run);
        driver.versions = {{"cuda-drivers-550", "550.90.07-1"}};
    }
    j.archive_last_run();
    ASSERT_EQ(j.history.size(), gpuprov::kJournalHistory);
    EXPECT_EQ(j.history.front().started_at, "2026-12-03T08:11:00Z");
    EXPECT_EQ(j.history.front().result, "running"); // killed: it never finished
    EXPECT_EQ(j.history.back().started_at, "2026-12-03T08:02:00Z");
    ASSERT_EQ(j.history.front().steps.size(), 1u);
    EXPECT_EQ(j.history.front().steps[0].id, "driver");
    EXPECT_DOUBLE_EQ(j.history.front().steps[0].seconds, 12);
    EXPECT_EQ(j.history.front().steps[0].versions.at("cuda-drivers-550"), "550.90.07-1");

    const auto back = gpuprov::journal_from_json_text(gpuprov::journal_to_json_text(j));
    ASSERT_EQ(back.history.size(), j.history.size());
    EXPECT_EQ(back.history[3].started_at, j.history[3].started_at);
    EXPECT_DOUBLE_EQ(back.history[0].steps[0].seconds, 12);
}

TEST(JournalHistory, AStepFromAnEarlierRunIsNotCountedAgain) {
    gpuprov::Journal j;
    j.run_started_at = "2026-12-03T09:00:00Z";
    j.result = "done";
    auto& old = j.upsert("cudnn");
    old.status = "done";
    old.started_at = "2026-12-02T10:00:00Z";
    old.finished_at = "2026-12-02T10:00:09Z"; // yesterday's run did it
    j.archive_last_run();
    ASSERT_EQ(j.history.size(), 1u);
    EXPECT_TRUE(j.history[0].steps.empty());
}

// `gpuprov status` exits 0 only for a run that finished: a journal left "running" by a killed
// run (no process holds the run lock any more) is "interrupted", not success for cloud-init.
TEST(Journal, LastRunResultJudgesARunningJournalByTheRunLock) {
    gpuprov::testing::FakeSystem sys;
    Journal j;
    for (const auto* result : {"done", "failed", "reboot-required"}) {
        j.result = result;
        EXPECT_EQ(last_run_result(sys, j), result);
    }
    j.result = "running";
    EXPECT_EQ(last_run_result(sys, j), "interrupted"); // killed: nobody holds the lock
    sys.set_lock_holder(kRunLockPath, -1, 1);          // a live apply holds it (flock)
    EXPECT_EQ(last_run_result(sys, j), "running");
    EXPECT_EQ(last_run_result(sys, j), "interrupted"); // and then it was gone
}

TEST(JournalVerified, ClosuresRoundTripAndOldFilesLoadWithNone) {
    gpuprov::Journal j;
    j.verified.push_back(
        {.verified_at = "2026-12-05T10:00:00Z",
         .via = "rollback",
         .profile = "/etc/gpuprov/site.yaml",
         .profile_name = "site",
         .profile_text = "name: site\ndriver: {branch: \"535\"}\n",
         .driver_branch = "535",
         .cuda = "12.2",
         .packages = {{"cuda-drivers-535", "535.183.01-1"}, {"libnccl2", "2.18.3-1+cuda12.2"}}});
    const auto back = gpuprov::journal_from_json_text(gpuprov::journal_to_json_text(j));
    ASSERT_EQ(back.verified.size(), 1u);
    const auto& c = back.verified[0];
    EXPECT_EQ(c.verified_at, "2026-12-05T10:00:00Z");
    EXPECT_EQ(c.via, "rollback");
    EXPECT_EQ(c.profile, "/etc/gpuprov/site.yaml");
    EXPECT_EQ(c.profile_name, "site");
    EXPECT_EQ(c.profile_text, j.verified[0].profile_text);
    EXPECT_EQ(c.driver_branch, "535");
    EXPECT_EQ(c.cuda, "12.2");
    EXPECT_EQ(c.packages, j.verified[0].packages);
    // A journal written before closures were recorded has none, and still loads.
    EXPECT_TRUE(
        gpuprov::journal_from_json_text(R"({"schema": 1, "result": "done"})").verified.empty());
}
