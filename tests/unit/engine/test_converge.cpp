// A step is satisfied by its effects, not its files: apt's lists for a source, an initramfs
// regenerated after the blacklist, a wants link to the right unit file, no half-written temp
// files. Each case is the state a SIGKILL at some instant of apply leaves behind.
#include "../../../src/steps/apt_repo.hpp"
#include "host_builder.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/leftovers.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kLists = "/var/lib/apt/lists/";
const std::string kCudaListsInRelease = kLists + "mirror.test_cuda_debian12_x86%5f64_InRelease";
const std::string kCudaListsPackages = kLists + "mirror.test_cuda_debian12_x86%5f64_Packages";
const std::string kInitrd = "/boot/initrd.img-" + kKernel;
const std::string kMetricsWants = "/etc/systemd/system/timers.target.wants/gpuprov-metrics.timer";
const std::string kPersistencedWants =
    "/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service";

struct Converge : ::testing::Test {
    Profile profile = load_test_profile();
};

Strings writes_outside_gpuprov(const FakeSystem& sys) {
    Strings out;
    for (const auto& f : sys.files_written) {
        if (!f.starts_with(kCacheDir) && !f.starts_with("/var/lib/gpuprov/")) {
            out.push_back(f);
        }
    }
    return out;
}

// ---- apt's file names ----

TEST(AptListFileName, MatchesWhatAptWritesForTheE2eMirror) {
    // Seen in the e2e root after apt-get update (apt 2.6, Debian 12).
    EXPECT_EQ(apt_list_name("https://127.0.0.1:34143/compute/cuda/repos/debian12/x86_64/InRelease"),
              "127.0.0.1:34143_compute_cuda_repos_debian12_x86%5f64_InRelease");
    EXPECT_EQ(
        apt_list_name("https://127.0.0.1:34143/libnvidia-container/stable/deb/amd64/Packages"),
        "127.0.0.1:34143_libnvidia-container_stable_deb_amd64_Packages");
}

TEST(AptListFileName, DropsCredentialsAndQuotesWhatAptQuotes) {
    EXPECT_EQ(apt_list_name("https://user:secret@mirror.example/a~b/c=d/"),
              "mirror.example_a%7eb_c%3dd_");
    EXPECT_EQ(apt_list_name("http://h/with space/"), "h_with%20space_");
}

// ---- cuda-repo: the lists ----

TEST_F(Converge, CudaRepoKilledBeforeItsRefreshPlansTheRefreshAloneAndApplyRunsIt) {
    TestHost host;
    host.converge();
    converge_config(host);
    host.sys.remove_file(kCudaListsInRelease); // written .sources, never ran apt-get update
    host.sys.remove_file(kCudaListsPackages);
    host.clear_records();
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(contains(r.reason, kCudaListsInRelease)) << r.reason;
    EXPECT_TRUE(targets(r, Change::Kind::file).empty()); // the files are right
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{display_argv(refresh_argv(kCudaSourcePath))});

    EXPECT_EQ(run.step("cuda-repo").apply(run.ctx(), host.sys, r, ApplyPhase::sources),
              StepStatus::done);
    EXPECT_EQ(host.sys.commands_ran, std::vector<Strings>{refresh_argv(kCudaSourcePath)});
    EXPECT_TRUE(writes_outside_gpuprov(host.sys).empty());
    EXPECT_EQ(run.check("cuda-repo").status, StepStatus::satisfied);
}

TEST_F(Converge, CudaRepoPendingWhenAptsPackagesIsMissingOrTruncated) {
    TestHost host;
    converge_config(host);
    host.sys.remove_file(kCudaListsPackages);
    {
        StepRunner run(host, profile);
        const auto r = run.check("cuda-repo");
        EXPECT_EQ(r.status, StepStatus::pending);
        EXPECT_TRUE(contains(r.reason, kCudaListsPackages)) << r.reason;
    }
    host.sys.add_file(kCudaListsPackages, "Package: half\n");
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(contains(r.reason, "its InRelease says 6868")) << r.reason;
}

TEST_F(Converge, CudaRepoPendingWhenAptsListsAreOlderThanTheVerifiedInRelease) {
    TestHost host;
    converge_config(host);
    host.sys.add_file(kCudaListsInRelease,
                      replace_all(read_fixture("engine/cuda/InRelease"), "Date: Tue, 01 Dec 2026",
                                  "Date: Sat, 01 Jun 2024"));
    StepRunner run(host, profile);
    ASSERT_TRUE(run.ctx().repos.repo("cuda").index); // gpuprov verified the current InRelease
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(contains(r.reason, "older than the InRelease gpuprov verified")) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{display_argv(refresh_argv(kCudaSourcePath))});
}

TEST_F(Converge, CudaRepoSatisfiedWhenAptAlreadyHasANewerInRelease) {
    TestHost host;
    converge_config(host);
    host.sys.add_file(kCudaListsInRelease,
                      replace_all(read_fixture("engine/cuda/InRelease"), "Date: Tue, 01 Dec 2026",
                                  "Date: Wed, 02 Dec 2026"));
    StepRunner run(host, profile);
    ASSERT_TRUE(run.ctx().repos.repo("cuda").index);
    EXPECT_EQ(run.check("cuda-repo").status, StepStatus::satisfied);
}

// The no-op path: an expired cache is compared, never refetched, to judge apt's lists.
TEST_F(Converge, CudaRepoComparesWithAnExpiredCacheWithoutTheNetwork) {
    TestHost host;
    converge_config(host);
    {
        StepRunner run(host, profile);
        ASSERT_TRUE(run.ctx().repos.repo("cuda").index); // fills gpuprov's cache
    }
    host.sys.sleep(std::chrono::hours(24));
    host.sys.add_file(kCudaListsInRelease,
                      replace_all(read_fixture("engine/cuda/InRelease"), "Date: Tue, 01 Dec 2026",
                                  "Date: Mon, 30 Nov 2026"));
    host.clear_records();
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(host.sys.urls_fetched.empty());
}

TEST_F(Converge, RefreshThatLeavesTheListsStaleFailsInsteadOfPlanningItForever) {
    TestHost host;
    converge_config(host);
    host.sys.remove_file(kCudaListsInRelease);
    // apt-get update exits 0 but fetched nothing for this source (W: Failed to fetch ...).
    host.sys.on_command(refresh_argv(kCudaSourcePath), {.err = "W: Failed to fetch InRelease\n"});
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    try {
        (void)run.step("cuda-repo").apply(run.ctx(), host.sys, r, ApplyPhase::sources);
        FAIL() << "apply succeeded with apt's lists still missing";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "apt-get update ran")) << e.what();
        EXPECT_TRUE(contains(e.what(), kCudaListsInRelease)) << e.what();
    }
    EXPECT_EQ(host.sys.file(kCudaSourcePath), kCudaSource); // right files stay
}

TEST_F(Converge, CudaRepoVerifyChecksTheLists) {
    TestHost host;
    converge_config(host);
    host.sys.remove_file(kCudaListsInRelease);
    StepRunner run(host, profile);
    const auto out = run.step("cuda-repo").verify(run.ctx(), host.sys);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(out[0].passed);
    EXPECT_EQ(out[1].id, "cuda-repo.index");
    EXPECT_FALSE(out[1].passed);
    EXPECT_TRUE(contains(out[1].found, "no " + kCudaListsInRelease)) << out[1].found;
}

TEST_F(Converge, ContainerToolkitRepoKilledBeforeItsRefreshPlansTheRefresh) {
    TestHost host;
    host.converge();
    converge_config(host);
    host.sys.remove_file(kLists + "mirror.test_libnvidia-container_stable_deb_amd64_InRelease");
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{display_argv(refresh_argv(kCtkSourcePath))});
}

// ---- nouveau: the initramfs ----

TEST_F(Converge, NouveauKilledBeforeUpdateInitramfsPlansTheRegenerationAndApplyRunsIt) {
    TestHost host; // its initrd predates the blacklist written next
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.clear_records();
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(contains(r.reason, kInitrd + " is older than " + kBlacklistPath)) << r.reason;
    EXPECT_TRUE(targets(r, Change::Kind::file).empty());
    EXPECT_EQ(targets(r, Change::Kind::command), Strings{"update-initramfs -u -k all"});

    EXPECT_EQ(run.step("nouveau").apply(run.ctx(), host.sys, r, ApplyPhase::prepare),
              StepStatus::done);
    EXPECT_EQ(host.sys.commands_ran,
              (std::vector<Strings>{{"update-initramfs", "-u", "-k", "all"}}));
    EXPECT_TRUE(writes_outside_gpuprov(host.sys).empty()); // the blacklist was already right
    EXPECT_EQ(run.check("nouveau").status, StepStatus::satisfied);
    const auto v = run.step("nouveau").verify(run.ctx(), host.sys);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_TRUE(v[1].passed) << v[1].found;
}

TEST_F(Converge, NouveauPendingWhileAnyManagedKernelLacksAFreshImage) {
    TestHost host;
    host.sys.add_file("/var/lib/initramfs-tools/6.1.0-99-amd64", ""); // no /boot image yet
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.sys.add_file(kInitrd, "regenerated\n");
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(contains(r.reason, "/boot/initrd.img-6.1.0-99-amd64")) << r.reason;
}

TEST_F(Converge, NouveauFailedRegenerationKeepsABlacklistThatWasAlreadyThere) {
    TestHost host;
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.sys.on_command({"update-initramfs", "-u", "-k", "all"},
                        {.exit_code = 1, .err = "E: no space\n"});
    StepRunner run(host, profile);
    const auto planned = run.check("nouveau");
    EXPECT_THROW(run.step("nouveau").apply(run.ctx(), host.sys, planned, ApplyPhase::prepare),
                 CommandError);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kBlacklist);
    EXPECT_EQ(run.check("nouveau").status, StepStatus::pending); // still stale: retried next run
}

TEST_F(Converge, NouveauWithoutInitramfsToolingSaysSo) {
    TestHost host;
    host.sys.remove_file("/usr/sbin/update-initramfs");
    {
        StepRunner run(host, profile);
        const auto r = run.check("nouveau");
        EXPECT_EQ(r.status, StepStatus::pending);
        EXPECT_TRUE(targets(r, Change::Kind::command).empty());
        bool said = false;
        for (const auto& c : r.changes) {
            said = said || contains(c.detail, "no initramfs tooling");
        }
        EXPECT_TRUE(said);
    }
    host.sys.add_file(kBlacklistPath, kBlacklist);
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    EXPECT_EQ(r.status, StepStatus::satisfied);
    EXPECT_TRUE(contains(r.reason, "no initramfs tooling")) << r.reason;
}

// ---- monitoring, tuning: the wants link ----

TEST_F(Converge, MonitoringPendingWhenTheWantsLinkPointsElsewhereAndApplyRelinksIt) {
    TestHost host;
    host.converge();
    converge_config(host);
    host.sys.remove_file(kMetricsWants);
    host.sys.add_link(kMetricsWants, "/lib/systemd/system/some-other.timer");
    StepRunner run(host, profile);
    const auto r = run.check("monitoring");
    EXPECT_EQ(r.status, StepStatus::pending);
    ASSERT_EQ(r.changes.size(), 1u);
    EXPECT_TRUE(contains(r.changes[0].detail, "points at /lib/systemd/system/some-other.timer"))
        << r.changes[0].detail;
    host.clear_records();
    EXPECT_EQ(run.step("monitoring").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.read_link(kMetricsWants)->string(), kMetricsTimer);
    EXPECT_EQ(run.check("monitoring").status, StepStatus::satisfied);
}

TEST_F(Converge, MonitoringKilledBeforeEnablePlansOnlyTheEnable) {
    TestHost host;
    converge_config(host);
    host.sys.remove_file(kMetricsWants);
    StepRunner run(host, profile);
    const auto r = run.check("monitoring");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(targets(r, Change::Kind::file).empty());
    EXPECT_EQ(targets(r, Change::Kind::service), Strings{"gpuprov-metrics.timer"});
}

TEST_F(Converge, TuningPendingWhenTheWantsLinkDangles) {
    TestHost host; // converge_config links nvidia-persistenced, but no driver ships its unit
    converge_config(host);
    StepRunner run(host, profile);
    const auto r = run.check("tuning");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(targets(r, Change::Kind::file).empty());
    EXPECT_EQ(targets(r, Change::Kind::service), Strings{"nvidia-persistenced.service"});
}

// ---- leftover temp files ----

TEST(LeftoverTempName, OnlyWriteFileAtomicsOwnPattern) {
    EXPECT_TRUE(is_leftover_temp_name("gpuprov-cuda.sources.gpuprov-tmp-Ab12Cd"));
    EXPECT_TRUE(is_leftover_temp_name("state.json.gpuprov-tmp-000000"));
    EXPECT_FALSE(is_leftover_temp_name(".gpuprov-tmp-Ab12Cd"));           // no target name
    EXPECT_FALSE(is_leftover_temp_name("x.gpuprov-tmp-Ab12C"));           // five characters
    EXPECT_FALSE(is_leftover_temp_name("x.gpuprov-tmp-Ab12Cde"));         // seven
    EXPECT_FALSE(is_leftover_temp_name("x.gpuprov-tmp-Ab12Cd.dpkg-old")); // something else's
    EXPECT_FALSE(is_leftover_temp_name("x.gpuprov-tmp-Ab_2Cd"));
    EXPECT_FALSE(is_leftover_temp_name("x.gpuprov-tmp-"));
    EXPECT_FALSE(is_leftover_temp_name("cuda.sources"));
}

TEST(LeftoverTempFiles, RemovesOnlyMatchingNamesInGpuprovsDirectories) {
    FakeSystem sys;
    const Strings ours = {
        "/etc/apt/sources.list.d/gpuprov-cuda.sources.gpuprov-tmp-aB3dE9",
        "/usr/share/keyrings/cuda-archive-keyring.gpg.gpuprov-tmp-Q1w2E3",
        "/etc/modprobe.d/blacklist-nouveau.conf.gpuprov-tmp-zzzzzz",
        "/etc/profile.d/gpuprov-cuda.sh.gpuprov-tmp-123456",
        "/etc/systemd/system/gpuprov-metrics.timer.gpuprov-tmp-AAAAAA",
        "/etc/systemd/system/nvidia-persistenced.service.d/gpuprov.conf.gpuprov-tmp-b0b0b0",
        "/var/lib/gpuprov/state.json.gpuprov-tmp-x1y2z3",
        "/var/lib/gpuprov/backup/etc/apt/sources.list.d/gpuprov-cuda.sources.latest."
        "gpuprov-tmp-Mn0pQr",
    };
    const Strings theirs = {
        "/etc/apt/sources.list.d/gpuprov-cuda.sources",
        "/etc/apt/sources.list.d/admin.sources.gpuprov-tmp-keep", // not mkstemp's six
        "/etc/apt/sources.list.d/vendor.list.tmp-aB3dE9",         // another tool's
        "/etc/modprobe.d/blacklist-nouveau.conf",
        "/etc/other/app.conf.gpuprov-tmp-aB3dE9", // not a gpuprov directory
        "/tmp/x.gpuprov-tmp-aB3dE9",
        "/etc/systemd/system/a/b/deep.conf.gpuprov-tmp-aB3dE9", // below the *.d level
    };
    for (const auto& p : ours) {
        sys.add_file(p, "half");
    }
    for (const auto& p : theirs) {
        sys.add_file(p, "keep");
    }
    auto removed = clean_leftover_temp_files(sys);
    std::sort(removed.begin(), removed.end());
    auto want = ours;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(removed, want);
    for (const auto& p : ours) {
        EXPECT_FALSE(sys.exists(p)) << p;
    }
    for (const auto& p : theirs) {
        EXPECT_TRUE(sys.exists(p)) << p;
    }
}

TEST(LeftoverTempFiles, LeavesYoungTempFilesWhereAnotherProcessMayBeWriting) {
    FakeSystem sys;
    const std::string cache = kCacheDir + "/cuda/Packages.gpuprov-tmp-aB3dE9";
    const std::string textfile = "/srv/metrics/gpuprov.prom.gpuprov-tmp-aB3dE9";
    sys.add_file(cache, "half");    // `gpuprov plan` may be writing it right now
    sys.add_file(textfile, "half"); // the metrics timer
    EXPECT_TRUE(clean_leftover_temp_files(sys, {"/srv/metrics"}).empty());
    sys.sleep(std::chrono::minutes(11));
    EXPECT_EQ(clean_leftover_temp_files(sys, {"/srv/metrics"}).size(), 2u);
    EXPECT_FALSE(sys.exists(cache));
    EXPECT_FALSE(sys.exists(textfile));
}

TEST(LeftoverTempFiles, ApplyRemovesThemBeforeAnythingElse) {
    TestHost host;
    host.converge();
    converge_config(host);
    const std::string left = kCudaSourcePath + ".gpuprov-tmp-k1LLed";
    host.sys.add_file(left, "Types: de");
    host.clear_records();
    auto profile = load_test_profile();
    RecordingReporter reporter;
    const auto r =
        apply_profile(host.sys, profile, matrix(),
                      ApplyOptions{.profile_arg = "/etc/gpuprov/engine-test.yaml"}, reporter);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_FALSE(host.sys.exists(left));
    ASSERT_FALSE(host.sys.files_removed.empty());
    EXPECT_EQ(host.sys.files_removed.front(), left);
    EXPECT_TRUE(host.sys.commands_ran.empty()); // converged: nothing else to do
}

} // namespace
