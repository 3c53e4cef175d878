#include "fake_system.hpp"

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
