// container.engine docker-ce: Docker's dists repository (repositories.docker, a mirror here;
// Docker's own per distro from the matrix by default) is added with its pinned key, its
// dists/SUITE/InRelease and stable/binary-amd64/Packages fetched and checked, and docker-ce,
// docker-ce-cli and containerd.io planned at the index's versions (docs/containers.md).
#include "apt_repo.hpp"
#include "host_builder.hpp"

#include <algorithm>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kSource = "/etc/apt/sources.list.d/gpuprov-docker.sources";
const std::string kKeyring = "/usr/share/keyrings/gpuprov-docker.gpg";
const std::string kDockerLists = "/var/lib/apt/lists/mirror.test_docker_debian_dists_bookworm_";
const std::string kDockerVersion = "5:27.3.1-1~debian.12~bookworm";

struct DockerCeEngine : ::testing::Test {
    Profile profile = [] {
        auto p = load_test_profile();
        p.container->engine = "docker-ce";
        return p;
    }();

    /// The container-toolkit step's check (which plans the engine) on `host`.
    CheckResult check(TestHost& host) const {
        StepRunner run(host, profile);
        return run.check("container-toolkit");
    }
};

bool fetched(const TestHost& host, const std::string& url) {
    const auto& all = host.sys.urls_fetched;
    return std::find(all.begin(), all.end(), url) != all.end();
}

} // namespace

TEST_F(DockerCeEngine, PlansTheDistsRepositoryAndTheThreePackagesAtTheIndexVersions) {
    TestHost host;
    const auto r = check(host);
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    // apt's dists layout, never the flat one.
    EXPECT_TRUE(fetched(host, kDockerDists + "InRelease"));
    EXPECT_TRUE(fetched(host, kDockerDists + "stable/binary-amd64/Packages"));
    EXPECT_FALSE(fetched(host, kDockerUrl + "InRelease"));
    EXPECT_FALSE(fetched(host, kDockerUrl + "Packages"));
    const auto all = specs(r.installs);
    for (const auto& want : {"docker-ce=" + kDockerVersion, "docker-ce-cli=" + kDockerVersion,
                             std::string("containerd.io=1.7.22-1")}) {
        EXPECT_NE(std::find(all.begin(), all.end(), want), all.end())
            << want << " in " << ::testing::PrintToString(all);
    }
    bool source_change = false;
    for (const auto& c : r.changes) {
        source_change = source_change || c.target == kSource;
    }
    EXPECT_TRUE(source_change);
}

TEST_F(DockerCeEngine, ApplyWritesSuiteAndComponentAndAptsListsMakeItCurrent) {
    TestHost host;
    StepRunner run(host, profile);
    const auto planned = run.check("container-toolkit");
    ASSERT_EQ(planned.status, StepStatus::pending) << planned.reason;
    EXPECT_EQ(
        run.step("container-toolkit").apply(run.ctx(), host.sys, planned, ApplyPhase::sources),
        StepStatus::done);
    EXPECT_EQ(host.sys.file(kSource),
              "# Managed by gpuprov (profile engine-test); local edits are replaced.\n"
              "Types: deb\n"
              "URIs: " +
                  kDockerUrl +
                  "\n"
                  "Suites: bookworm\n"
                  "Components: stable\n"
                  "Signed-By: " +
                  kKeyring + "\n");
    EXPECT_TRUE(host.sys.file(kKeyring) == read_fixture("engine/test-key.gpg"));
    // The apt-get update stand-in wrote apt's lists under apt's names for a dists repository;
    // the step judged the refresh by exactly those.
    EXPECT_TRUE(host.sys.exists(kDockerLists + "InRelease"));
    EXPECT_TRUE(host.sys.exists(kDockerLists + "stable_binary-amd64_Packages"));
    const auto lists = steps::apt_lists_state(run.ctx(), host.sys, "docker");
    EXPECT_TRUE(lists.current) << lists.why;
    EXPECT_EQ(lists.inrelease, kDockerLists + "InRelease");
    // Once apt holds it, the repository is in place: only the packages remain.
    StepRunner again(host, profile);
    const auto r = again.check("container-toolkit");
    for (const auto& c : r.changes) {
        EXPECT_NE(c.target, kSource);
    }
}

TEST_F(DockerCeEngine, MissingPackagesListInAptsListsIsNotCurrent) {
    TestHost host;
    host.write_apt_lists(kDockerUrl);
    host.sys.remove_file(kDockerLists + "stable_binary-amd64_Packages");
    StepRunner run(host, profile);
    const auto lists = steps::apt_lists_state(run.ctx(), host.sys, "docker");
    EXPECT_FALSE(lists.current);
    EXPECT_TRUE(contains(lists.why, kDockerLists + "stable_binary-amd64_Packages")) << lists.why;
}

TEST_F(DockerCeEngine, InstalledEngineNeedsNoRepository) {
    TestHost host;
    host.set_package("docker-ce", kDockerVersion);
    host.set_package("docker-ce-cli", kDockerVersion);
    host.set_package("containerd.io", "1.7.22-1");
    const auto r = check(host);
    EXPECT_NE(r.status, StepStatus::blocked) << r.reason;
    EXPECT_FALSE(fetched(host, kDockerDists + "InRelease"));
    for (const auto& c : r.changes) {
        EXPECT_NE(c.target, kSource);
    }
}

TEST_F(DockerCeEngine, AKeyThatIsNotThePinIsRefused) {
    profile.repositories["docker"].key_fingerprint = "0123456789ABCDEF0123456789ABCDEF01234567";
    TestHost host;
    const auto r = check(host);
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "profile pins 0123456789ABCDEF0123456789ABCDEF01234567"))
        << r.reason;
    EXPECT_TRUE(r.installs.empty());
}

TEST_F(DockerCeEngine, DockersOwnUrlPinnedWithAnotherKeyBlocksBeforeAnyDownload) {
    auto& spec = profile.repositories["docker"];
    spec.url = "https://download.docker.com/linux/debian";
    TestHost host;
    const auto r = check(host);
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "Docker signs https://download.docker.com/linux/debian with "
                                   "9DC858229FC7DD38854AE2D88D81803C0EBFCD88"))
        << r.reason;
    EXPECT_FALSE(
        fetched(host, "https://download.docker.com/linux/debian/dists/bookworm/InRelease"));
}

TEST_F(DockerCeEngine, UnpinnedDockerUrlFetchesDockersKeyAndRefusesAnyOther) {
    // The default: Docker's repository for the host's distro and the key Docker's docs pin.
    profile.repositories["docker"] =
        RepositorySpec{.name = "docker", .url = std::string(kDockerRepoRoot)};
    TestHost host;
    host.sys.on_url("https://download.docker.com/linux/debian/gpg",
                    http_ok(read_fixture("engine/test-key.asc")));
    const auto r = check(host);
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "key at https://download.docker.com/linux/debian/gpg has "
                                   "fingerprint " +
                                       fingerprint() +
                                       ", expected 9DC858229FC7DD38854AE2D88D81803C0EBFCD88 "
                                       "(Docker's key for debian12"))
        << r.reason;
}
