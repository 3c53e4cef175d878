// build_plan: read-only, every step in order, filters, verify's status, step id validation.
#include "host_builder.hpp"
#include "kernel_hook_fixture.hpp"

#include <gpuprov/error.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

/// Repositories already in memory (parsed from the fixtures), so a plan needs no cache at all.
class StaticRepos final : public RepoProvider {
public:
    explicit StaticRepos(const HostFacts& facts, const Profile& profile) {
        const auto key = parse_openpgp_key(read_fixture("engine/test-key.asc"));
        for (const std::string name : {"cuda", "container-toolkit"}) {
            RepoState s;
            s.repo = resolve_repo(profile.repositories.at(name), facts.os.repo_slug,
                                  facts.repo_arch, facts.pkg_arch, package_format(facts.os.family));
            s.index =
                PackageIndex(parse_packages_file(read_fixture("engine/" + name + "/Packages")));
            s.key = key.key;
            m_repos.emplace(name, std::move(s));
        }
    }
    [[nodiscard]] const RepoState& repo(const std::string& name) const override {
        return m_repos.at(name);
    }

private:
    std::map<std::string, RepoState> m_repos;
};

struct PlanTest : ::testing::Test {
    Profile profile = load_test_profile();

    Plan plan(TestHost& host, const StepFilter& filter = {}) {
        const auto facts = host.facts();
        StaticRepos repos(facts, profile);
        const StepContext ctx{profile, facts, matrix(), repos};
        const auto& sys = host.sys; // build_plan only gets a const System
        return build_plan(ctx, sys, make_steps(), filter);
    }
    static const CheckResult& of(const Plan& p, const std::string& id) {
        for (const auto& s : p.steps) {
            if (s.id == id) {
                return s.check;
            }
        }
        throw std::logic_error("no step " + id);
    }
};

TEST_F(PlanTest, FreshHostPlanIsCompleteAndChangesNothing) {
    TestHost host;
    host.clear_records();
    const auto p = plan(host);
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_TRUE(host.sys.files_written.empty());
    EXPECT_TRUE(host.sys.files_removed.empty());

    Strings ids;
    for (const auto& s : p.steps) {
        ids.push_back(s.id);
    }
    EXPECT_EQ(ids, step_ids());
    EXPECT_EQ(p.profile, "engine-test");
    EXPECT_TRUE(p.changes_pending());
    EXPECT_FALSE(p.blocked());
    EXPECT_EQ(of(p, "preflight").status, StepStatus::satisfied);
    for (const auto* id :
         {"nouveau", "cuda-repo", "driver", "fabric-manager", "cuda-toolkit", "cudnn", "nccl",
          "container-toolkit", "tuning", "monitoring", "verify"}) {
        EXPECT_EQ(of(p, id).status, StepStatus::pending) << id << ": " << of(p, id).reason;
    }
}

TEST_F(PlanTest, LiveRepositoriesWriteOnlyIntoGpuprovsCache) {
    TestHost host;
    const auto facts = host.facts();
    LiveRepoProvider repos(host.sys, profile, facts, matrix(), kCacheDir);
    const StepContext ctx{profile, facts, matrix(), repos};
    const auto p = build_plan(ctx, host.sys, make_steps(), {});
    EXPECT_EQ(of(p, "cuda-toolkit").installs.at(0).spec(), "cuda-toolkit-12-4=12.4.1-1");
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_FALSE(host.sys.files_written.empty());
    for (const auto& f : host.sys.files_written) {
        EXPECT_TRUE(f.starts_with(kCacheDir + "/")) << f;
    }
    // Each repository's index was fetched once, however many steps read it.
    EXPECT_EQ(std::count(host.sys.urls_fetched.begin(), host.sys.urls_fetched.end(),
                         kCudaUrl + "Packages"),
              1);
    EXPECT_EQ(std::count(host.sys.urls_fetched.begin(), host.sys.urls_fetched.end(),
                         kCtkUrl + "Packages"),
              1);
}

TEST_F(PlanTest, OnlyAndSkipMarkStepsSkippedWithTheReason) {
    TestHost host;
    const auto only = plan(host, {.only = {"driver", "cudnn"}, .skip = {}});
    for (const auto& s : only.steps) {
        if (s.id == "driver" || s.id == "cudnn") {
            EXPECT_EQ(s.check.status, StepStatus::pending) << s.id;
        } else if (s.id != "verify") {
            EXPECT_EQ(s.check.status, StepStatus::skipped) << s.id;
            EXPECT_EQ(s.check.reason, "not in --only") << s.id;
        }
    }
    const auto skip = plan(host, {.only = {}, .skip = {"nccl", "tuning"}});
    EXPECT_EQ(of(skip, "nccl").status, StepStatus::skipped);
    EXPECT_EQ(of(skip, "nccl").reason, "--skip");
    EXPECT_TRUE(of(skip, "nccl").installs.empty());
    EXPECT_EQ(of(skip, "tuning").status, StepStatus::skipped);
    EXPECT_EQ(of(skip, "cudnn").status, StepStatus::pending);
}

TEST_F(PlanTest, ProfileStepsSkipMarksStepsSkipped) {
    profile.skip_steps = {"monitoring", "container-toolkit"};
    TestHost host;
    const auto p = plan(host);
    EXPECT_EQ(of(p, "monitoring").status, StepStatus::skipped);
    EXPECT_EQ(of(p, "monitoring").reason, "profile steps.skip");
    EXPECT_EQ(of(p, "container-toolkit").status, StepStatus::skipped);
    EXPECT_EQ(of(p, "tuning").status, StepStatus::pending);
}

TEST_F(PlanTest, ProfileFilesSkipListReachesThePlan) {
    const auto loaded = load_profile_text("name: skipper\nextends: " + profile_path() +
                                              "\nsteps: {skip: [monitoring]}\n",
                                          fixture_path("engine/skipper.yaml").string(), matrix());
    EXPECT_EQ(loaded.skip_steps, Strings{"monitoring"});
    profile = loaded;
    TestHost host;
    EXPECT_EQ(of(plan(host), "monitoring").status, StepStatus::skipped);
}

TEST_F(PlanTest, VerifyIsSatisfiedOnlyWhenNothingElseChanges) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys);
    converge_config(host);
    const auto converged = plan(host);
    EXPECT_EQ(of(converged, "verify").status, StepStatus::satisfied);
    EXPECT_FALSE(converged.changes_pending());

    host.sys.remove_file(kProfileDPath); // one step has something to do
    const auto one = plan(host);
    EXPECT_EQ(of(one, "cuda-toolkit").status, StepStatus::pending);
    EXPECT_EQ(of(one, "verify").status, StepStatus::pending);
    EXPECT_TRUE(one.changes_pending());

    // A pending step left out by --skip does not make verify run.
    const auto skipped = plan(host, {.only = {}, .skip = {"cuda-toolkit"}});
    EXPECT_EQ(of(skipped, "verify").status, StepStatus::satisfied);
}

TEST_F(PlanTest, BlockedStepsAreReportedAndEveryStepIsStillChecked) {
    TestHost host({.gpus = 2});
    const auto p = plan(host);
    EXPECT_TRUE(p.blocked());
    EXPECT_EQ(of(p, "preflight").status, StepStatus::blocked);
    EXPECT_EQ(of(p, "cuda-toolkit").status, StepStatus::pending);
    EXPECT_EQ(of(p, "cuda-toolkit").installs.at(0).spec(), "cuda-toolkit-12-4=12.4.1-1");
}

TEST_F(PlanTest, ValidateStepIdsListsTheKnownIds) {
    EXPECT_NO_THROW(validate_step_ids({"preflight", "container-toolkit", "verify"}));
    try {
        validate_step_ids({"driver", "drivers"});
        FAIL() << "no error";
    } catch (const UsageError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "'drivers'")) << what;
        EXPECT_TRUE(contains(
            what, "preflight, nouveau, cuda-repo, secure-boot, driver, fabric-manager, "
                  "cuda-toolkit, cudnn, nccl, tensorrt, infiniband, container-toolkit, tuning, "
                  "mig, monitoring, dcgm, readiness, verify"))
            << what;
    }
}

} // namespace
