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
    const auto tp = std::chrono::sys_days{std::chrono::year{2026} / 12 / 1} + std::chrono::hours{13} +
                    std::chrono::minutes{5} + std::chrono::seconds{9};
    EXPECT_EQ(rfc3339(tp), "2026-12-01T13:05:09Z");
}
