// gpuprov rollback's engine half: the verified closure apply records, which closure a rollback
// goes back to (and that a second rollback is a no-op), the pins that keep the reinstall to
// exactly the closure's versions, and the resume unit of a rollback.
#include "host_builder.hpp"
#include "resume.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/rollback.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;

namespace {

using Installed = std::map<std::string, std::optional<std::string>>;

VerifiedClosure closure(const std::string& via, const std::string& driver,
                        const std::string& name = "site") {
    return {.verified_at = "2026-12-05T10:00:00Z",
            .via = via,
            .profile = "/etc/gpuprov/site.yaml",
            .profile_name = name,
            .profile_text = "name: " + name + "\n",
            .driver_branch = driver.substr(0, 3),
            .cuda = "12.4",
            .packages = {{"cuda-drivers-" + driver.substr(0, 3), driver + "-1"},
                         {"libnccl2", "2.21.5-1+cuda12.4"}}};
}

Installed installed_as(const VerifiedClosure& c) {
    Installed out;
    for (const auto& [n, v] : c.packages) {
        out[n] = v;
    }
    return out;
}

/// The journal's verified list after these closures were verified in this order.
Journal verified_in_order(const std::vector<VerifiedClosure>& in_order) {
    Journal j;
    for (const auto& c : in_order) {
        record_verified_closure(j, c);
    }
    return j;
}

TEST(RollbackTarget, RefusesWithoutAnyVerifiedClosure) {
    const auto t = rollback_target(Journal{}, "", {});
    EXPECT_FALSE(t.closure);
    EXPECT_NE(t.refusal.find("records no verified closure"), std::string::npos) << t.refusal;
}

TEST(RollbackTarget, RefusesWithOnlyOneVerifiedClosure) {
    const auto a = closure("apply", "535.183.01");
    const auto t = rollback_target(verified_in_order({a}), "", installed_as(a));
    EXPECT_FALSE(t.closure);
    EXPECT_NE(t.refusal.find("no earlier one to go back to"), std::string::npos) << t.refusal;
    EXPECT_NE(t.refusal.find("driver branch 535"), std::string::npos) << t.refusal;
}

TEST(RollbackTarget, ConvergedReRunsAddNoEntry) {
    const auto a = closure("apply", "535.183.01");
    auto again = a;
    again.verified_at = "2026-12-05T11:00:00Z";
    EXPECT_EQ(verified_in_order({a, again}).verified.size(), 1u);
}

TEST(RollbackTarget, GoesBackToTheClosureBeforeTheNewestChange) {
    const auto a = closure("apply", "535.183.01");
    const auto b = closure("apply", "550.127.08");
    const auto t = rollback_target(verified_in_order({a, b}), "", installed_as(b));
    ASSERT_TRUE(t.closure) << t.refusal;
    EXPECT_EQ(t.closure->packages, a.packages);
    ASSERT_TRUE(t.from);
    EXPECT_EQ(t.from->packages, b.packages);
    EXPECT_FALSE(t.already_current);
}

TEST(RollbackTarget, ASecondRollbackIsANoOp) {
    const auto a = closure("apply", "535.183.01");
    const auto b = closure("apply", "550.127.08");
    // The rollback restored A and verified it: its entry is newest, marked as a rollback's.
    const auto j = verified_in_order({a, b, closure("rollback", "535.183.01")});
    const auto t = rollback_target(j, "", installed_as(a));
    ASSERT_TRUE(t.closure) << t.refusal;
    EXPECT_EQ(t.closure->packages, a.packages);
    EXPECT_TRUE(t.already_current);
}

TEST(RollbackTarget, AClosureInstalledButNotYetVerifiedIsNotCurrent) {
    // The rollback's transaction ran and it waits for the reboot: A is installed, but the
    // newest verified closure is still B, so the resumed rollback must still run (and verify).
    const auto a = closure("apply", "535.183.01");
    const auto b = closure("apply", "550.127.08");
    const auto t = rollback_target(verified_in_order({a, b}), "", installed_as(a));
    ASSERT_TRUE(t.closure);
    EXPECT_FALSE(t.already_current);
}

TEST(RollbackTarget, AHandChangeAfterTheRollbackIsRolledBackAgain) {
    const auto a = closure("apply", "535.183.01");
    const auto j =
        verified_in_order({a, closure("apply", "550.127.08"), closure("rollback", "535.183.01")});
    auto moved = installed_as(a);
    moved["cuda-drivers-535"] = "535.247.01-1"; // upgraded by hand since
    const auto t = rollback_target(j, "", moved);
    ASSERT_TRUE(t.closure);
    EXPECT_FALSE(t.already_current);
    EXPECT_EQ(closure_differences(t.closure->packages, moved),
              std::vector<std::string>{"cuda-drivers-535 535.247.01-1 -> 535.183.01-1"});
}

TEST(RollbackTarget, UndoesTheNewestApplyNotTheRollback) {
    // A, B, rollback to A, then C: rollback goes to A (what C replaced), never to B.
    const auto a = closure("apply", "535.183.01");
    const auto c = closure("apply", "560.35.03");
    const auto j = verified_in_order(
        {a, closure("apply", "550.127.08"), closure("rollback", "535.183.01"), c});
    const auto t = rollback_target(j, "", installed_as(c));
    ASSERT_TRUE(t.closure);
    EXPECT_EQ(t.closure->packages, a.packages);
    EXPECT_EQ(t.from->packages, c.packages);
}

TEST(RollbackTarget, AProfileNameLimitsTheHistory) {
    const auto j = verified_in_order(
        {closure("apply", "535.183.01", "other"), closure("apply", "550.127.08", "site")});
    EXPECT_TRUE(rollback_target(j, "", {}).closure);
    const auto t = rollback_target(j, "site", {});
    EXPECT_FALSE(t.closure);
    EXPECT_NE(t.refusal.find("for the profile 'site'"), std::string::npos) << t.refusal;
}

TEST(RollbackTarget, KeepsTenClosures) {
    Journal j;
    for (int i = 0; i < 12; ++i) {
        record_verified_closure(j, closure("apply", fmt::format("550.{}.01", 100 + i)));
    }
    ASSERT_EQ(j.verified.size(), kVerifiedHistory);
    EXPECT_EQ(j.verified.front().packages.at("cuda-drivers-550"), "550.111.01-1");
}

TEST(RollbackTarget, TransactionsTakingAnotherBuildOfAClosurePackageAreBlocked) {
    Plan plan;
    PlannedTransaction pt;
    pt.transaction.actions = {
        {.kind = PackageAction::Kind::downgrade,
         .name = "cuda-drivers-550",
         .from = "550.127.08-1",
         .to = "550.54.15-1"},
        {.kind = PackageAction::Kind::install, .name = "libnccl2", .to = "2.21.5-1+cuda12.5"},
        {.kind = PackageAction::Kind::install, .name = "dkms", .to = "3.0.10-8"}};
    plan.transactions.push_back(pt);
    const auto lines = block_unpinned_versions(
        plan, {{"cuda-drivers-550", "550.54.15-1"}, {"libnccl2", "2.21.5-1+cuda12.4"}});
    EXPECT_EQ(lines,
              std::vector<std::string>{
                  "libnccl2 2.21.5-1+cuda12.5 (the verified closure has 2.21.5-1+cuda12.4)"});
    EXPECT_NE(plan.transactions[0].blocked.find("other builds than the verified closure"),
              std::string::npos);
}

TEST(RollbackResume, TheUnitResumesTheRollback) {
    EXPECT_EQ(detail::resume_exec_start({.gpuprov_path = "/usr/local/bin/gpuprov",
                                         .profile = {},
                                         .only = {},
                                         .skip = {},
                                         .reboot_if_needed = true,
                                         .allow_remove = false,
                                         .rollback = true}),
              "/usr/local/bin/gpuprov rollback --yes --reboot if-needed");
    EXPECT_THROW(
        (void)detail::resume_exec_start({.gpuprov_path = "/tmp/gpuprov", .rollback = true}),
        HostError);
}

using Rollback = ApplyTest;

TEST_F(Rollback, ApplyRecordsTheVerifiedClosureOncePerChange) {
    TestHost host;
    options.profile_text = "name: engine-test\n";
    ASSERT_EQ(apply(host).status, StepStatus::done);
    auto j = journal(host);
    ASSERT_EQ(j.verified.size(), 1u);
    const auto& c = j.verified.front();
    EXPECT_EQ(c.via, "apply");
    EXPECT_EQ(c.profile, kProfileArg);
    EXPECT_EQ(c.profile_name, "engine-test");
    EXPECT_EQ(c.profile_text, "name: engine-test\n");
    EXPECT_EQ(c.driver_branch, "550");
    EXPECT_EQ(c.cuda, "12.4");
    EXPECT_EQ(c.packages.at("cuda-drivers-550"), "550.127.08-1");
    EXPECT_EQ(c.packages.at("nvidia-fabricmanager-550"), "550.127.08-1");
    EXPECT_EQ(c.packages.at("cuda-toolkit-12-4"), "12.4.1-1");
    EXPECT_EQ(c.packages.at("libnccl2"), "2.21.5-1+cuda12.4");
    // The container toolkit is not part of it: not tied to the driver's branch.
    EXPECT_EQ(c.packages.count("nvidia-container-toolkit"), 0u);

    ASSERT_EQ(apply(host).status, StepStatus::done);
    EXPECT_EQ(journal(host).verified.size(), 1u); // converged: no new entry
}

TEST_F(Rollback, AFailedRunRecordsNoClosure) {
    TestHost host;
    host.sys.on_command({"systemctl", "enable", "--now", "gpuprov-metrics.timer"}, CommandResult{});
    ASSERT_EQ(apply(host).status, StepStatus::failed);
    EXPECT_TRUE(journal(host).verified.empty());
}

TEST_F(Rollback, PinsInstallExactlyTheClosuresBuilds) {
    TestHost host;
    options.pins = {{"cuda-drivers-550", "550.54.15-1"},
                    {"nvidia-fabricmanager-550", "550.54.15-1"},
                    {"libnvidia-nscq-550", "550.54.15-1"}};
    options.rollback = true;
    const auto r = apply(host);
    const auto installs = host.ran({"apt-get", "install", "--yes"});
    ASSERT_EQ(installs.size(), 1u) << r.message;
    const auto& argv = installs.front();
    EXPECT_NE(std::find(argv.begin(), argv.end(), "cuda-drivers-550=550.54.15-1"), argv.end())
        << display_argv(argv);
    EXPECT_EQ(std::find(argv.begin(), argv.end(), "cuda-drivers-550=550.127.08-1"), argv.end());
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    const auto j = journal(host);
    ASSERT_EQ(j.verified.size(), 1u);
    EXPECT_EQ(j.verified.front().via, "rollback");
    EXPECT_EQ(j.verified.front().packages.at("cuda-drivers-550"), "550.54.15-1");
}

TEST_F(Rollback, RefusesAVersionGoneFromTheRepositoriesByName) {
    TestHost host;
    options.pins = {{"cuda-drivers-550", "550.40.07-1"}, {"libnccl2", "2.21.5-1+cuda12.4"}};
    options.rollback = true;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed);
    EXPECT_NE(r.message.find("no longer in the repositories: cuda-drivers-550=550.40.07-1;"),
              std::string::npos)
        << r.message;
    EXPECT_NE(r.message.find("nothing was changed"), std::string::npos) << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install", "--yes"}).empty());
}

} // namespace

namespace {

TEST(RollbackTarget, AZeroEpochFromRpmsDatabaseMatchesTheIndex) {
    EXPECT_TRUE(closure_version_matches("0:2.21.5-1", "2.21.5-1"));
    EXPECT_TRUE(closure_version_matches("3:550.90.07-1.el9", "3:550.90.07-1.el9"));
    EXPECT_FALSE(closure_version_matches("3:550.90.07-1.el9", "550.90.07-1.el9"));
    EXPECT_FALSE(closure_version_matches("2.21.5-1", "2.21.5-1+cuda12.4"));
}

} // namespace
