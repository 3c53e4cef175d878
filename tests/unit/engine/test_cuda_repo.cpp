// cuda-repo apply: key before source, one index refresh of that source only, and on failure
// never a source without its key.
#include "host_builder.hpp"

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
        return run.step("cuda-repo").apply(run.ctx(), host.sys, planned, ApplyPhase::prepare);
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
    EXPECT_EQ(run.step("cuda-repo").apply(run.ctx(), host.sys, {}, ApplyPhase::prepare),
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
        (void)run.step("cuda-repo").apply(run.ctx(), host.sys, {}, ApplyPhase::prepare);
        FAIL() << "no error";
    } catch (const NetworkError& e) {
        EXPECT_TRUE(contains(e.what(), kKeyUrl)) << e.what();
    }
    EXPECT_TRUE(host_writes(host.sys).empty());
    EXPECT_TRUE(host.sys.commands_ran.empty());
}

} // namespace
