// cuda-repo apply: key before source, one index refresh of that source only, and on failure
// never a source without its key.
#include "apt/sources.hpp"
#include "host_builder.hpp"

#include <algorithm>
#include <gpuprov/error.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

/// Writes outside gpuprov's repository cache and backup directory: what the host sees.
Strings host_writes(const gpuprov::testing::FakeSystem& sys) {
    Strings out;
    for (const auto& f : sys.files_written) {
        if (!f.starts_with(kCacheDir) && !f.starts_with("/var/lib/gpuprov/backup/")) {
            out.push_back(f);
        }
    }
    return out;
}

struct CudaRepo : ::testing::Test {
    Profile profile = load_test_profile();

    StepStatus apply(TestHost& host) {
        StepRunner run(host, profile);
        const auto planned = run.check("cuda-repo");
        EXPECT_EQ(planned.status, StepStatus::pending) << planned.reason;
        return run.step("cuda-repo").apply(run.ctx(), host.sys, planned, ApplyPhase::sources);
    }
};

TEST_F(CudaRepo, WritesTheDearmoredKeyThenTheSourceThenRefreshesOnlyThatSource) {
    TestHost host;
    EXPECT_EQ(apply(host), StepStatus::done);
    EXPECT_EQ(host_writes(host.sys), (Strings{kCudaKeyring, kCudaSourcePath}));
    EXPECT_TRUE(host.sys.file(kCudaKeyring) == read_fixture("engine/test-key.gpg"));
    EXPECT_EQ(host.sys.mode_of(kCudaKeyring), 0644u);
    EXPECT_EQ(host.sys.file(kCudaSourcePath), kCudaSource);
    EXPECT_EQ(host.sys.commands_ran, std::vector<Strings>{refresh_argv(kCudaSourcePath)});
    // never apt-key, never the whole system's sources
    for (const auto& argv : host.sys.commands_ran) {
        EXPECT_NE(argv.front(), "apt-key");
    }
}

TEST_F(CudaRepo, ConfigurePhaseDoesNothing) {
    TestHost host;
    StepRunner run(host, profile);
    const auto planned = run.check("cuda-repo");
    host.clear_records();
    EXPECT_EQ(run.step("cuda-repo").apply(run.ctx(), host.sys, planned, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_TRUE(host.sys.files_written.empty());
}

TEST_F(CudaRepo, FailedRefreshRemovesSourceAndKeyAndNamesTheCommand) {
    TestHost host;
    host.fail_apt_update = true;
    try {
        apply(host);
        FAIL() << "apply succeeded although apt-get update failed";
    } catch (const CommandError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "apt-get update")) << what;
        EXPECT_TRUE(contains(what, "Dir::Etc::sourcelist=" + kCudaSourcePath)) << what;
        EXPECT_TRUE(contains(what, "100")) << what;
    }
    EXPECT_FALSE(host.sys.exists(kCudaSourcePath));
    EXPECT_FALSE(host.sys.exists(kCudaKeyring));
    // The source went first, the key after it: at no point a source without its key.
    const auto& removed = host.sys.files_removed;
    const auto src = std::find(removed.begin(), removed.end(), kCudaSourcePath);
    const auto key = std::find(removed.begin(), removed.end(), kCudaKeyring);
    ASSERT_NE(src, removed.end());
    ASSERT_NE(key, removed.end());
    EXPECT_LT(src, key);
}

TEST_F(CudaRepo, FailedRefreshRestoresThePreviousSourceAndKey) {
    TestHost host;
    const auto old_key = read_fixture("repo/test-key.gpg");
    const auto old_source = "Types: deb\nURIs: https://old.mirror.test/cuda/\nSuites: /\n"
                            "Signed-By: " +
                            kCudaKeyring + "\n";
    host.sys.add_file(kCudaKeyring, old_key);
    host.sys.add_file(kCudaSourcePath, old_source);
    host.fail_apt_update = true;
    EXPECT_THROW(apply(host), CommandError);
    EXPECT_TRUE(host.sys.file(kCudaKeyring) == old_key);
    EXPECT_EQ(host.sys.file(kCudaSourcePath), old_source);
}

// A key that was already right is not "restored" to whatever an older run backed up: that would
// leave the source pointing at a key that no longer signs it.
TEST_F(CudaRepo, FailedRefreshLeavesAnUnchangedKeyAlone) {
    TestHost host;
    host.sys.add_file(kCudaKeyring, read_fixture("repo/test-key.gpg")); // an older, other key
    host.sys.add_file(kCudaSourcePath, kCudaSource);
    EXPECT_EQ(apply(host), StepStatus::done); // replaces the key, backing the old one up
    ASSERT_TRUE(host.sys.file(kCudaKeyring) == read_fixture("engine/test-key.gpg"));

    host.sys.add_file(kCudaSourcePath, kCudaSource + "# a local edit\n");
    host.fail_apt_update = true;
    EXPECT_THROW(apply(host), CommandError);
    EXPECT_EQ(host.sys.file(kCudaSourcePath), kCudaSource + "# a local edit\n");
    EXPECT_TRUE(host.sys.file(kCudaKeyring) == read_fixture("engine/test-key.gpg"));
}

TEST_F(CudaRepo, NoOpWhenKeyAndSourceAreInPlace) {
    TestHost host;
    converge_config(host);
    StepRunner run(host, profile);
    EXPECT_EQ(run.step("cuda-repo").apply(run.ctx(), host.sys, {}, ApplyPhase::sources),
              StepStatus::done);
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_TRUE(host.sys.files_written.empty());
    EXPECT_TRUE(host.sys.urls_fetched.empty());
}

TEST_F(CudaRepo, UnreachableKeyThrowsNamingTheUrlAndWritesNothing) {
    TestHost host;
    host.sys.on_url(kKeyUrl, {.ok = false, .http_status = 404, .error = "HTTP 404", .attempts = 1});
    StepRunner run(host, profile);
    try {
        (void)run.step("cuda-repo").apply(run.ctx(), host.sys, {}, ApplyPhase::sources);
        FAIL() << "no error";
    } catch (const NetworkError& e) {
        EXPECT_TRUE(contains(e.what(), kKeyUrl)) << e.what();
    }
    EXPECT_TRUE(host_writes(host.sys).empty());
    EXPECT_TRUE(host.sys.commands_ran.empty());
}

} // namespace

// ---- NVIDIA's cuda-keyring package (nvidia-facts.md §2.3) ----

namespace {

const std::string kPkgKeyring = "/usr/share/keyrings/cuda-archive-keyring.gpg";
const std::string kPkgList = "/etc/apt/sources.list.d/cuda-debian12-x86_64.list";

/// What cuda-keyring installs, pointed at the test mirror, with `key` as its keyring.
void install_cuda_keyring(TestHost& host, const std::string& key) {
    host.sys.add_file(kPkgKeyring, key);
    host.sys.add_file(kPkgList, "deb [signed-by=" + kPkgKeyring + "] " + kCudaUrl + " /\n");
}

} // namespace

TEST_F(CudaRepo, NeverWritesTheKeyringPathCudaKeyringOwns) {
    TestHost host;
    EXPECT_EQ(apply(host), StepStatus::done);
    EXPECT_FALSE(host.sys.exists(kPkgKeyring));
    EXPECT_TRUE(contains(host.sys.file(kCudaSourcePath).value_or(""),
                         "Signed-By: /usr/share/keyrings/gpuprov-cuda.gpg\n"));
}

TEST_F(CudaRepo, CudaKeyringWithThePinnedKeyIsAdoptedAndGpuprovsOwnSourceRemoved) {
    TestHost host;
    EXPECT_EQ(apply(host), StepStatus::done);
    // The package arrives after gpuprov: apt would now refuse both entries.
    install_cuda_keyring(host, read_fixture("engine/test-key.gpg"));
    host.clear_records();
    StepRunner run(host, profile);
    const auto planned = run.check("cuda-repo");
    EXPECT_EQ(planned.status, StepStatus::pending);
    EXPECT_TRUE(contains(planned.reason, kPkgList)) << planned.reason;
    ASSERT_FALSE(planned.changes.empty());
    EXPECT_EQ(planned.changes[0].target, kCudaSourcePath);
    EXPECT_TRUE(contains(planned.changes[0].detail, "remove")) << planned.changes[0].detail;

    EXPECT_EQ(run.step("cuda-repo").apply(run.ctx(), host.sys, planned, ApplyPhase::sources),
              StepStatus::done);
    EXPECT_FALSE(host.sys.exists(kCudaSourcePath));
    // Neither side's key is touched: the package's stays its own, gpuprov's stays gpuprov's.
    EXPECT_TRUE(host.sys.file(kPkgKeyring) == read_fixture("engine/test-key.gpg"));
    EXPECT_TRUE(host.sys.file(kCudaKeyring) == read_fixture("engine/test-key.gpg"));
    EXPECT_EQ(std::count(host.sys.files_written.begin(), host.sys.files_written.end(), kPkgKeyring),
              0);
    // Converged: the adopted source is in place and nothing more is planned.
    StepRunner again(host, profile);
    const auto after = again.check("cuda-repo");
    EXPECT_EQ(after.status, StepStatus::satisfied) << after.reason;
}

TEST_F(CudaRepo, RefreshGoesThroughTheAdoptedSource) {
    TestHost host;
    install_cuda_keyring(host, read_fixture("engine/test-key.gpg"));
    StepRunner run(host, profile);
    const auto planned = run.check("cuda-repo");
    EXPECT_EQ(planned.status, StepStatus::pending) << planned.reason;
    EXPECT_EQ(run.step("cuda-repo").apply(run.ctx(), host.sys, planned, ApplyPhase::sources),
              StepStatus::done);
    EXPECT_EQ(host.sys.commands_ran, std::vector<Strings>{refresh_argv(kPkgList)});
    EXPECT_FALSE(host.sys.exists(kCudaSourcePath));
    EXPECT_FALSE(host.sys.exists(kCudaKeyring));
}

TEST_F(CudaRepo, CudaKeyringWithAnotherKeyBlocksWithTheFix) {
    TestHost host;
    install_cuda_keyring(host, read_fixture("repo/test-key.gpg")); // not the pinned key
    StepRunner run(host, profile);
    const auto planned = run.check("cuda-repo");
    EXPECT_EQ(planned.status, StepStatus::blocked);
    EXPECT_TRUE(contains(planned.reason, kPkgList + ":1")) << planned.reason;
    EXPECT_TRUE(contains(planned.reason, "Conflicting values set for option Signed-By"))
        << planned.reason;
    EXPECT_TRUE(contains(planned.reason, "apt-get purge cuda-keyring")) << planned.reason;
    EXPECT_THROW(run.step("cuda-repo").apply(run.ctx(), host.sys, planned, ApplyPhase::sources),
                 HostError);
    EXPECT_TRUE(host.sys.commands_ran.empty());
}

TEST(AptSources, FindsOneLineAndDeb822EntriesForAUrlButNotDisabledOrOwnOnes) {
    gpuprov::testing::FakeSystem sys;
    const std::string url = "https://mirror.test/cuda/debian12/x86_64/";
    sys.add_file("/etc/apt/sources.list", "deb http://deb.debian.org/debian bookworm main\n");
    sys.add_file("/etc/apt/sources.list.d/own.sources", "Types: deb\nURIs: " + url + "\n");
    sys.add_file("/etc/apt/sources.list.d/old.list.save", "deb " + url + " /\n");
    sys.add_file("/etc/apt/sources.list.d/off.sources",
                 "Types: deb\nURIs: " + url + "\nSuites: /\nEnabled: no\n");
    sys.add_file("/etc/apt/sources.list.d/comment.list", "# deb " + url + " /\n");
    EXPECT_FALSE(pkg::foreign_apt_source(sys, url, "/etc/apt/sources.list.d/own.sources"));

    sys.add_file("/etc/apt/sources.list.d/cuda.list",
                 "# from cuda-keyring\n\ndeb [arch=amd64 signed-by=/k/cuda.gpg] "
                 "https://mirror.test/cuda/debian12/x86_64 /\n");
    const auto one = pkg::foreign_apt_source(sys, url, "/etc/apt/sources.list.d/own.sources");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->file, "/etc/apt/sources.list.d/cuda.list");
    EXPECT_EQ(one->line, 3);
    EXPECT_EQ(one->signed_by, "/k/cuda.gpg");

    sys.remove_file("/etc/apt/sources.list.d/cuda.list");
    sys.add_file("/etc/apt/sources.list.d/z.sources",
                 "Types: deb-src\nURIs: " + url + "\n\nTypes: deb\nURIs: http://x/ " + url +
                     "\nSuites: /\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n");
    const auto deb822 = pkg::foreign_apt_source(sys, url, "/etc/apt/sources.list.d/own.sources");
    ASSERT_TRUE(deb822);
    EXPECT_EQ(deb822->line, 4);
    EXPECT_EQ(deb822->signed_by, "(an inline key)");
}

// issue 26 item 6: an adopted source that turns apt's checks off (trusted=yes and friends) would
// let plan and verify say the pinned key is in place while apt checks nothing.
TEST_F(CudaRepo, AForeignSourceThatSwitchesAptsChecksOffIsNeverAdopted) {
    for (const auto& [options, said] : std::vector<std::pair<std::string, std::string>>{
             {"signed-by=" + kPkgKeyring + " trusted=yes", "trusted=yes"},
             {"allow-insecure=yes signed-by=" + kPkgKeyring, "allow-insecure=yes"},
             {"signed-by=" + kPkgKeyring + " allow-weak=yes", "allow-weak=yes"},
             {"signed-by=" + kPkgKeyring + " check-valid-until=no", "check-valid-until=no"}}) {
        SCOPED_TRACE(options);
        TestHost host;
        host.sys.add_file(kPkgKeyring, read_fixture("engine/test-key.gpg"));
        host.sys.add_file(kPkgList, "deb [" + options + "] " + kCudaUrl + " /\n");
        StepRunner run(host, profile);
        const auto r = run.check("cuda-repo");
        EXPECT_EQ(r.status, StepStatus::blocked);
        EXPECT_TRUE(contains(r.reason, kPkgList + ":1")) << r.reason;
        EXPECT_TRUE(contains(r.reason, "turns off apt's checks")) << r.reason;
        EXPECT_TRUE(contains(r.reason, "remove " + said)) << r.reason;
        // verify says the same: the source is not "in place".
        const auto v = run.step("cuda-repo").verify(run.ctx(), host.sys);
        ASSERT_FALSE(v.empty());
        EXPECT_FALSE(v.front().passed);
    }
    // deb822's spelling too.
    TestHost host;
    host.sys.add_file(kPkgKeyring, read_fixture("engine/test-key.gpg"));
    host.sys.add_file("/etc/apt/sources.list.d/cuda.sources",
                      "Types: deb\nURIs: " + kCudaUrl + "\nSuites: /\nSigned-By: " + kPkgKeyring +
                          "\nTrusted: yes\n");
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "Trusted: yes")) << r.reason;
}
