// TensorRT: which build of the lockstep set is picked from an index, and the step's check on the
// test host (installed set satisfied, mixed versions not, no TensorRT in the repo blocked).
#include "../../../src/steps/tensorrt_pick.hpp"
#include "host_builder.hpp"

using namespace gpuprov;
using namespace gpuprov::enginetest;
using gpuprov::steps::cuda_build_of;
using gpuprov::steps::pick_tensorrt;
using gpuprov::steps::tensorrt_build_fits;
using Strings = std::vector<std::string>;

namespace {

DottedVersion v(const std::string& s) {
    return *DottedVersion::parse(s);
}

std::vector<PackageRecord> set_records(const Strings& packages, const Strings& versions) {
    std::vector<PackageRecord> records;
    for (const auto& p : packages) {
        for (const auto& version : versions) {
            records.push_back(PackageRecord{.name = p,
                                            .version = version,
                                            .architecture = "amd64",
                                            .depends = {},
                                            .provides = {},
                                            .filename = {},
                                            .sha256 = {}});
        }
    }
    return records;
}

PackageIndex index_of(const Strings& versions) {
    return PackageIndex(set_records({"libnvinfer10"}, versions));
}

TEST(TensorrtPick, ReadsTheCudaTagOfDebAndRpmVersions) {
    EXPECT_EQ(cuda_build_of("10.4.0.26-1+cuda12.6"), v("12.6"));
    EXPECT_EQ(cuda_build_of("10.13.2.6-1+cuda13.0"), v("13.0"));
    EXPECT_EQ(cuda_build_of("10.4.0.26-1.cuda12.6"), v("12.6"));
    EXPECT_EQ(cuda_build_of("8.5.3-1+cuda11.8"), v("11.8"));
    EXPECT_FALSE(cuda_build_of("10.4.0.26-1"));
    EXPECT_FALSE(cuda_build_of("10.4.0.26"));
    EXPECT_FALSE(cuda_build_of("10.4.0.26-1+cuda12"));
}

TEST(TensorrtPick, FitsOnlyTheProfilesMajorAndNoNewerCuda) {
    EXPECT_TRUE(tensorrt_build_fits("10.4.0.26-1+cuda12.6", "10", v("12.6")));
    EXPECT_TRUE(tensorrt_build_fits("10.4.0.26-1+cuda12.2", "10", v("12.6")));
    EXPECT_FALSE(tensorrt_build_fits("10.4.0.26-1+cuda12.8", "10", v("12.6")));
    EXPECT_FALSE(tensorrt_build_fits("10.4.0.26-1+cuda11.8", "10", v("12.6")));
    EXPECT_FALSE(tensorrt_build_fits("10.13.2.6-1+cuda13.0", "10", v("12.9")));
    EXPECT_TRUE(tensorrt_build_fits("10.4.0.26-1+cuda12.6", "10.4", v("12.6")));
    EXPECT_FALSE(tensorrt_build_fits("10.40.0.1-1+cuda12.6", "10.4", v("12.6")));
    EXPECT_FALSE(tensorrt_build_fits("8.6.1.6-1+cuda12.0", "10", v("12.6")));
}

TEST(TensorrtPick, NewestTensorrtThenTheHighestBuildNotAboveTheCuda) {
    // 10.5 exists only for CUDA 12.8: on 12.6 the newest usable TensorRT is 10.4, and of its
    // builds the +cuda12.6 one, although +cuda12.8 sorts higher.
    const auto index =
        index_of({"10.3.0.30-1+cuda12.5", "10.4.0.26-1+cuda12.2", "10.4.0.26-1+cuda12.6",
                  "10.4.0.26-1+cuda12.8", "10.5.0.18-1+cuda12.8", "10.13.2.6-1+cuda13.0"});
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer10", "10", v("12.6")), "10.4.0.26-1+cuda12.6");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer10", "10", v("12.4")), "10.4.0.26-1+cuda12.2");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer10", "10.3", v("12.9")), "10.3.0.30-1+cuda12.5");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer10", "10", v("13.1")), "10.13.2.6-1+cuda13.0");
    EXPECT_FALSE(pick_tensorrt(index, "libnvinfer10", "10", v("12.1")));
    EXPECT_FALSE(pick_tensorrt(index, "libnvinfer10", "10", v("11.8")));
}

TEST(TensorrtPick, Tensorrt11BuildsAsNvidiasRepoCarriesThem) {
    // libnvinfer11 versions recorded from NVIDIA's CUDA repos (nvidia-repos-2026.md [C32]).
    const PackageIndex index(
        set_records({"libnvinfer11"}, {"11.0.0.114-1+cuda12.9", "11.0.0.114-1+cuda13.2",
                                       "11.1.0.106-1+cuda13.3", "11.3.0.99-1+cuda13.4"}));
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer11", "11", v("13.4")), "11.3.0.99-1+cuda13.4");
    // CUDA 13.5 has no build of its own yet: the newest not built for a newer CUDA.
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer11", "11", v("13.5")), "11.3.0.99-1+cuda13.4");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer11", "11", v("13.3")), "11.1.0.106-1+cuda13.3");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer11", "11", v("12.9")), "11.0.0.114-1+cuda12.9");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer11", "11.0", v("13.4")), "11.0.0.114-1+cuda13.2");
    // CUDA 13.1 is older than every 13.x build, 12.8 than the 12.x one.
    EXPECT_FALSE(pick_tensorrt(index, "libnvinfer11", "11", v("13.1")));
    EXPECT_FALSE(pick_tensorrt(index, "libnvinfer11", "11", v("12.8")));
    // "1" is not a prefix of 11.x, nor "11" of a 10.x build.
    EXPECT_FALSE(pick_tensorrt(index, "libnvinfer11", "1", v("13.4")));
    EXPECT_FALSE(tensorrt_build_fits("10.14.1.48-1+cuda13.0", "11", v("13.4")));
}

TEST(TensorrtPick, CudaTwelveTenSortsAboveTwelveNine) {
    const auto index = index_of({"10.9.0.34-1+cuda12.9", "10.9.0.34-1+cuda12.10"});
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer10", "10", v("12.10")), "10.9.0.34-1+cuda12.10");
    EXPECT_EQ(pick_tensorrt(index, "libnvinfer10", "10", v("12.9")), "10.9.0.34-1+cuda12.9");
}

struct TensorrtStep : ::testing::Test {
    Profile profile = load_test_profile(); // cv-train: CUDA 12.4
    const TensorrtLine& line = *matrix().tensorrt(10);
    TensorrtStep() { profile.tensorrt = TensorrtSpec{.version = "10"}; }
};

TEST_F(TensorrtStep, SkippedUnlessTheProfileAsks) {
    profile.tensorrt.reset();
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("tensorrt");
    EXPECT_EQ(r.status, StepStatus::skipped);
    EXPECT_EQ(r.reason, "profile asks for no TensorRT");
}

TEST_F(TensorrtStep, SatisfiedByTheWholeSetAtOneFittingBuild) {
    TestHost host;
    for (const auto& p : line.deb) {
        host.set_package(p, "10.4.0.26-1+cuda12.2");
    }
    StepRunner run(host, profile);
    const auto r = run.check("tensorrt");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
    EXPECT_TRUE(r.installs.empty());
}

TEST_F(TensorrtStep, MixedVersionsOrANewerCudaBuildAreNotSatisfied) {
    // The test repository has no TensorRT at all, so an unsatisfied set ends blocked, naming
    // what it looked for.
    for (const std::string odd : {"10.5.0.18-1+cuda12.2", "10.4.0.26-1+cuda12.5"}) {
        TestHost host;
        for (const auto& p : line.deb) {
            host.set_package(p, p == "libnvinfer-lean10" ? odd : "10.4.0.26-1+cuda12.2");
        }
        StepRunner run(host, profile);
        const auto r = run.check("tensorrt");
        EXPECT_EQ(r.status, StepStatus::blocked) << odd;
        EXPECT_EQ(r.reason, "the CUDA repository has no TensorRT 10.x built for CUDA 12.x up to "
                            "12.4 (libnvinfer10 there: none)");
    }
    TestHost host;
    for (const auto& p : line.deb) {
        host.set_package(p, "10.4.0.26-1+cuda12.5");
    }
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("tensorrt").status, StepStatus::blocked);
}

/// The CUDA repository as an in-memory index, for the steps that read it.
struct IndexRepo final : RepoProvider {
    RepoState state;
    [[nodiscard]] const RepoState& repo(const std::string&) const override { return state; }
};

std::unique_ptr<Step> tensorrt_step() {
    for (auto& s : make_steps()) {
        if (s->id() == "tensorrt") {
            return std::move(s);
        }
    }
    return nullptr;
}

CheckResult check_with_index(TestHost& host, const Profile& profile, PackageIndex index) {
    IndexRepo repos;
    repos.state.index = std::move(index);
    const auto facts = host.facts();
    const StepContext ctx{.profile = profile,
                          .facts = facts,
                          .matrix = matrix(),
                          .repos = repos,
                          .gpuprov_path = "/usr/local/bin/gpuprov",
                          .skipped_steps = {}};
    return tensorrt_step()->check(ctx, host.sys);
}

PackageIndex set_index(const Strings& packages, const Strings& versions) {
    return PackageIndex(set_records(packages, versions));
}

TEST_F(TensorrtStep, PinsEveryPackageOfTheSetToTheOneBuild) {
    TestHost host;
    const auto r =
        check_with_index(host, profile,
                         set_index(line.deb, {"10.4.0.26-1+cuda12.2", "10.4.0.26-1+cuda12.5",
                                              "10.5.0.18-1+cuda12.5"}));
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    Strings want;
    for (const auto& p : line.deb) {
        want.push_back(p + "=10.4.0.26-1+cuda12.2");
    }
    EXPECT_EQ(specs(r.installs), want);
    // Not the profile's own CUDA: the plan says why an older build is used.
    ASSERT_FALSE(r.changes.empty());
    EXPECT_TRUE(contains(r.changes.front().detail, "+cuda12.2 build")) << r.changes.front().detail;
}

TEST_F(TensorrtStep, BlocksWhenOnePackageLacksTheVersionInsteadOfMixing) {
    // libnvinfer-lean10 exists only at 10.3: the set cannot be installed at 10.4.
    Strings others;
    for (const auto& p : line.deb) {
        if (p != "libnvinfer-lean10") {
            others.push_back(p);
        }
    }
    auto records = set_records(others, {"10.4.0.26-1+cuda12.4", "10.3.0.30-1+cuda12.4"});
    for (auto& rec : set_records({"libnvinfer-lean10"}, {"10.3.0.30-1+cuda12.4"})) {
        records.push_back(std::move(rec));
    }
    TestHost host;
    const auto r = check_with_index(host, profile, PackageIndex(std::move(records)));
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_EQ(r.reason, "the CUDA repository has no libnvinfer-lean10 version 10.4.0.26-1+cuda12.4 "
                        "(newest there: 10.3.0.30-1+cuda12.4)");
    EXPECT_TRUE(r.installs.empty());
}

TEST_F(TensorrtStep, Tensorrt11PinsTheLibnvinfer11SetToOneCudaBuild) {
    profile.cuda->version = "13.4";
    profile.tensorrt = TensorrtSpec{.version = "11"};
    const auto& eleven = *matrix().tensorrt(11);
    // The repo also carries TensorRT 10 for CUDA 13: a TensorRT 11 profile never takes it.
    auto records = set_records(
        eleven.deb, {"11.0.0.114-1+cuda13.2", "11.1.0.106-1+cuda13.3", "11.3.0.99-1+cuda13.4"});
    for (auto& rec : set_records(line.deb, {"10.14.1.48-1+cuda13.0"})) {
        records.push_back(std::move(rec));
    }
    TestHost host;
    const auto r = check_with_index(host, profile, PackageIndex(std::move(records)));
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    Strings want;
    for (const auto& p : eleven.deb) {
        want.push_back(p + "=11.3.0.99-1+cuda13.4");
    }
    EXPECT_EQ(specs(r.installs), want);
    EXPECT_EQ(want.front(), "libnvinfer11=11.3.0.99-1+cuda13.4");
    for (const auto& c : r.changes) {
        EXPECT_NE(c.kind, Change::Kind::note) << c.detail; // the profile's own CUDA: no note
    }
}

TEST_F(TensorrtStep, Tensorrt11OnCuda135TakesThe134BuildAndSaysSo) {
    profile.cuda->version = "13.5";
    profile.tensorrt = TensorrtSpec{.version = "11"};
    const auto& eleven = *matrix().tensorrt(11);
    TestHost host;
    const auto r = check_with_index(
        host, profile, set_index(eleven.deb, {"11.1.0.106-1+cuda13.3", "11.3.0.99-1+cuda13.4"}));
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(r.installs.front().version, "11.3.0.99-1+cuda13.4");
    ASSERT_FALSE(r.changes.empty());
    EXPECT_TRUE(contains(r.changes.front().detail, "+cuda13.4 build")) << r.changes.front().detail;
}

TEST_F(TensorrtStep, Tensorrt11WithoutABuildForTheCudaMajorIsBlockedNamingWhatExists) {
    profile.cuda->version = "12.4";
    profile.tensorrt = TensorrtSpec{.version = "11"};
    const auto& eleven = *matrix().tensorrt(11);
    TestHost host;
    const auto r =
        check_with_index(host, profile, set_index(eleven.deb, {"11.0.0.114-1+cuda12.9"}));
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_EQ(r.reason, "the CUDA repository has no TensorRT 11.x built for CUDA 12.x up to 12.4 "
                        "(libnvinfer11 there: 11.0.0.114-1+cuda12.9)");
    EXPECT_TRUE(r.installs.empty());
}

TEST_F(TensorrtStep, ReadsTheRpmReleaseSpelling) {
    TestHost host;
    const auto r = check_with_index(host, profile, set_index(line.deb, {"10.4.0.26-1.cuda12.4"}));
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(r.installs.front().version, "10.4.0.26-1.cuda12.4");
    for (const auto& c : r.changes) {
        EXPECT_NE(c.kind, Change::Kind::note) << c.detail; // the profile's own CUDA: no note
    }
}

} // namespace
