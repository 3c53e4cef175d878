// Interactive apply carries out the plan the operator confirmed, not a fresh one (issue 26
// item 11), and the repair of an interrupted transaction is in the plan and in every message
// that would otherwise say nothing changed (item 14).
#include "host_builder.hpp"

#include <algorithm>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kInterrupted = "/var/lib/dpkg/updates/0003";

struct Confirmed : ApplyTest {
    /// The plan as `gpuprov apply` shows it before asking: built and resolved as the CLI does.
    Plan shown(TestHost& host) {
        StepRunner run(host, profile);
        auto plan = run.plan();
        resolve_transactions(host.sys, run.ctx(), plan,
                             {.scratch_dir = kCacheDir + "/apt-view", .cache_dir = kCacheDir});
        return plan;
    }
    static bool has_line(const Strings& lines, const std::string& prefix) {
        return std::any_of(lines.begin(), lines.end(),
                           [&](const auto& l) { return l.rfind(prefix, 0) == 0; });
    }
};

TEST_F(Confirmed, TheConfirmedPlanIsCarriedOut) {
    TestHost host;
    const auto promise = plan_promise(shown(host));
    ASSERT_TRUE(has_line(promise, "transaction for ")) << "the plan installs packages";
    options.confirmed_plan = promise;
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_FALSE(host.ran({"apt-get", "install"}).empty());
}

// The repository or another tool changed the host while the prompt waited: apply refuses
// before any change and names what differs, instead of running a plan nobody saw.
TEST_F(Confirmed, APlanThatChangedSinceTheConfirmationIsRefusedBeforeAnyChange) {
    TestHost host;
    const auto promise = plan_promise(shown(host));
    ASSERT_TRUE(has_line(promise, "  install libnccl2")) << "the plan installs NCCL";
    options.confirmed_plan = promise;
    // Someone installs NCCL from another terminal while gpuprov waits for "yes".
    host.set_package("libnccl2", "2.21.5-1+cuda12.4", "install ok installed");
    host.package_files("libnccl2", "2.21.5-1+cuda12.4");
    host.clear_records();

    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "the host changed since the plan you confirmed")) << r.message;
    EXPECT_TRUE(contains(r.message, "- ") && contains(r.message, "libnccl2")) << r.message;
    EXPECT_TRUE(contains(r.message, "nothing was changed")) << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install"}).empty());
    EXPECT_TRUE(host.ran({"apt-get", "update"}).empty());
    EXPECT_TRUE(host.ran({"update-initramfs"}).empty());
    EXPECT_FALSE(host.sys.exists(kBlacklistPath));
    EXPECT_FALSE(host.sys.exists(kCudaSourcePath));
    EXPECT_EQ(journal(host).result, "failed");
}

TEST_F(Confirmed, WithoutAConfirmationApplyRunsItsOwnPlan) {
    TestHost host;
    host.set_package("libnccl2", "2.21.5-1+cuda12.4", "install ok installed");
    host.package_files("libnccl2", "2.21.5-1+cuda12.4");
    EXPECT_EQ(apply(host).status, StepStatus::done);
}

TEST_F(Confirmed, ThePlanShowsTheRepairOfAnInterruptedTransaction) {
    TestHost host;
    host.sys.add_file(kInterrupted, "Package: libnccl2\nStatus: install ok unpacked\n");
    const auto plan = shown(host);
    EXPECT_EQ(plan.repair, "dpkg --configure -a");
    EXPECT_TRUE(plan.changes_pending());
    EXPECT_TRUE(has_line(plan_promise(plan), "first run dpkg --configure -a"));
    EXPECT_TRUE(host.ran({"dpkg"}).empty()) << "plan only says so";

    // The operator confirmed that plan, repair included: apply carries it out.
    options.confirmed_plan = plan_promise(plan);
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(host.ran({"dpkg", "--configure", "-a"}).size(), 1u);
}

TEST_F(Confirmed, AConvergedHostWithNothingInterruptedHasNoRepairAndNoChanges) {
    TestHost host;
    ASSERT_EQ(apply(host).status, StepStatus::done);
    const auto plan = shown(host);
    EXPECT_TRUE(plan.repair.empty());
    EXPECT_FALSE(plan.changes_pending());
}

// After the repair ran, a refusal must not claim an untouched host.
TEST_F(Confirmed, ARefusalAfterTheRepairSaysTheRepairRan) {
    TestHost host;
    host.sys.add_file(kInterrupted, "Package: libnccl2\nStatus: install ok unpacked\n");
    profile.driver->flavor = "server"; // Ubuntu's archive only: driver blocked on Debian 12
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "step 'driver' is blocked")) << r.message;
    EXPECT_TRUE(contains(r.message, "nothing was changed except finishing the interrupted "
                                    "package transaction (dpkg --configure -a)"))
        << r.message;
    EXPECT_EQ(host.ran({"dpkg", "--configure", "-a"}).size(), 1u);
}

} // namespace
