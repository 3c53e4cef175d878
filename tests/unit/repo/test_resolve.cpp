#include "fake_system.hpp"

#include <array>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/repo.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;

namespace {
bool contains_text(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}
} // namespace

TEST(ResolveRepo, FillsPlaceholdersAndEndsUrlWithSlash) {
    RepositorySpec spec;
    spec.name = "cuda";
    spec.url = "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}";
    spec.key_url = "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/"
                   "3bf863cc.pub";
    spec.key_fingerprint = "eb69 3b30 35cd 5710 e231  e123 a4b4 6996 3bf8 63cc";
    const auto r = resolve_repo(spec, "ubuntu2204", "x86_64", "amd64", "deb");
    EXPECT_EQ(r.name, "cuda");
    EXPECT_EQ(r.url, "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/");
    EXPECT_EQ(r.key_url,
              "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/"
              "3bf863cc.pub");
    EXPECT_EQ(r.key_fingerprint, "EB693B3035CD5710E231E123A4B469963BF863CC");
    EXPECT_FALSE(r.allow_insecure);
}

TEST(ResolveRepo, PkgarchForContainerToolkitAndNoDoubleSlash) {
    RepositorySpec spec;
    spec.name = "container-toolkit";
    spec.url = "https://nvidia.github.io/libnvidia-container/stable/deb/{pkgarch}/";
    spec.key_url = "https://nvidia.github.io/libnvidia-container/gpgkey";
    spec.allow_insecure = true;
    const auto r = resolve_repo(spec, "ubuntu2204", "sbsa", "arm64", "deb");
    EXPECT_EQ(r.url, "https://nvidia.github.io/libnvidia-container/stable/deb/arm64/");
    EXPECT_EQ(r.key_url, "https://nvidia.github.io/libnvidia-container/gpgkey");
    EXPECT_TRUE(r.allow_insecure);
}

TEST(ResolveRepo, PkgformatPicksNvidiasDebOrRpmLayout) {
    RepositorySpec spec;
    spec.name = "container-toolkit";
    spec.url = "https://nvidia.github.io/libnvidia-container/stable/{pkgformat}/{pkgarch}";
    EXPECT_EQ(resolve_repo(spec, "ubuntu2204", "x86_64", "amd64", package_format("debian")).url,
              "https://nvidia.github.io/libnvidia-container/stable/deb/amd64/");
    // NVIDIA's nvidia-container-toolkit.repo: baseurl=.../stable/rpm/$basearch
    EXPECT_EQ(resolve_repo(spec, "rhel9", "x86_64", "x86_64", package_format("rhel")).url,
              "https://nvidia.github.io/libnvidia-container/stable/rpm/x86_64/");
}

namespace {

HostFacts host_on(const std::string& family, const std::string& slug) {
    HostFacts f;
    f.os.family = family;
    f.os.repo_slug = slug;
    f.repo_arch = "x86_64";
    f.pkg_arch = family == "rhel" ? "x86_64" : "amd64";
    return f;
}

RepositorySpec nvidia_cuda_unpinned() {
    RepositorySpec spec;
    spec.name = "cuda";
    spec.url = "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/";
    return spec;
}

} // namespace

// nvidia-facts.md §2.4: D42D0685 signs rhel7/8/9, 3bf863cc ubuntu/debian; §2.1: NVIDIA's
// .repo fetches gpgkey from beside the repository.
TEST(ResolveHostRepo, UnpinnedNvidiaCudaRepoGetsNvidiasKeyForTheDistro) {
    const auto& m = Matrix::builtin();
    for (const std::string slug : {"rhel8", "rhel9"}) {
        const auto r = resolve_host_repo(nvidia_cuda_unpinned(), host_on("rhel", slug), m);
        const auto dir =
            "https://developer.download.nvidia.com/compute/cuda/repos/" + slug + "/x86_64/";
        EXPECT_EQ(r.url, dir);
        EXPECT_EQ(r.key_url, dir + "D42D0685.pub");
        EXPECT_EQ(r.key_fingerprint, "610C7B14E068A878070DA4E99CD0A493D42D0685");
        EXPECT_TRUE(r.matrix_key);
        EXPECT_EQ(r.key_source,
                  "NVIDIA's D42D0685.pub (" + slug + "), from gpuprov's version matrix");
    }
    for (const std::string slug : {"ubuntu2004", "ubuntu2204", "ubuntu2404", "debian12"}) {
        const auto r = resolve_host_repo(nvidia_cuda_unpinned(), host_on("debian", slug), m);
        EXPECT_EQ(r.key_url, "https://developer.download.nvidia.com/compute/cuda/repos/" + slug +
                                 "/x86_64/3bf863cc.pub");
        EXPECT_EQ(r.key_fingerprint, "EB693B3035CD5710E231E123A4B469963BF863CC");
        EXPECT_TRUE(contains_text(r.key_source, "3bf863cc.pub (" + slug + ")")) << r.key_source;
    }
    // NVIDIA gave its 2025 Debian/Ubuntu repositories keys of their own (matrix comments):
    // ubuntu2604 60DF8A40, debian13 8793F200, never 3bf863cc.
    const std::vector<std::array<std::string, 3>> own_keys{
        {"ubuntu2604", "60DF8A40.pub", "14BAFBC7562AD710CA04E69905FBB6DA60DF8A40"},
        {"debian13", "8793F200.pub", "02182E60104FCDC26EAE1B8597A5D4CB8793F200"}};
    for (const auto& [slug, file, fpr] : own_keys) {
        const auto r = resolve_host_repo(nvidia_cuda_unpinned(), host_on("debian", slug), m);
        EXPECT_EQ(r.key_url, "https://developer.download.nvidia.com/compute/cuda/repos/" + slug +
                                 "/x86_64/" + file);
        EXPECT_EQ(r.key_fingerprint, fpr);
        EXPECT_TRUE(r.matrix_key);
        EXPECT_EQ(r.key_source,
                  "NVIDIA's " + file + " (" + slug + "), from gpuprov's version matrix");
    }
}

TEST(ResolveHostRepo, AProfilesPinWinsOverNvidiasKey) {
    auto spec = nvidia_cuda_unpinned();
    spec.key_url = "https://keys.example/{distro}.pub";
    spec.key_fingerprint = "610c 7b14 e068 a878 070d a4e9 9cd0 a493 d42d 0685";
    const auto r = resolve_host_repo(spec, host_on("rhel", "rhel9"), Matrix::builtin());
    EXPECT_EQ(r.key_url, "https://keys.example/rhel9.pub");
    EXPECT_EQ(r.key_fingerprint, "610C7B14E068A878070DA4E99CD0A493D42D0685");
    EXPECT_FALSE(r.matrix_key);
    EXPECT_EQ(r.key_source, "pinned by the profile");
}

TEST(ResolveHostRepo, NoKeyToTrustWithoutAPinOrAnNvidiaKey) {
    // An unpinned mirror never loads (the profile check); if one reached here, nothing is
    // trusted rather than NVIDIA's key for a URL NVIDIA does not serve.
    RepositorySpec mirror;
    mirror.name = "cuda";
    mirror.url = "https://mirror.example/cuda/{distro}/{arch}/";
    const auto r = resolve_host_repo(mirror, host_on("rhel", "rhel9"), Matrix::builtin());
    EXPECT_EQ(r.key_fingerprint, "");
    EXPECT_EQ(r.key_url, "");
    EXPECT_TRUE(contains_text(r.key_source, "no NVIDIA key for "
                                            "https://mirror.example/cuda/rhel9/x86_64/ on rhel9"))
        << r.key_source;
    // The container toolkit's URL has no per-distro key in the matrix: a pin is required.
    RepositorySpec ctk;
    ctk.name = "container-toolkit";
    ctk.url = "https://nvidia.github.io/libnvidia-container/stable/{pkgformat}/{pkgarch}/";
    EXPECT_EQ(resolve_host_repo(ctk, host_on("rhel", "rhel9"), Matrix::builtin()).key_fingerprint,
              "");
}

TEST(RepoCache, DefaultDirDependsOnUserAndEnvironment) {
    gpuprov::testing::FakeSystem sys;
    sys.set_uid(0);
    sys.set_env("HOME", "/root");
    EXPECT_EQ(default_repo_cache_dir(sys), "/var/cache/gpuprov/repos");
    sys.set_uid(1000);
    sys.set_env("HOME", "/home/ann");
    EXPECT_EQ(default_repo_cache_dir(sys), "/home/ann/.cache/gpuprov/repos");
    sys.set_env("XDG_CACHE_HOME", "/srv/cache");
    EXPECT_EQ(default_repo_cache_dir(sys), "/srv/cache/gpuprov/repos");
    sys.set_env("XDG_CACHE_HOME", "relative"); // the XDG spec says to ignore relative paths
    EXPECT_EQ(default_repo_cache_dir(sys), "/home/ann/.cache/gpuprov/repos");
}

TEST(RepoCache, SubdirCannotEscapeTheCache) {
    ResolvedRepo r;
    r.name = "../../etc";
    EXPECT_EQ(repo_cache_subdir(r).find('/'), std::string::npos);
    r.name = "..";
    EXPECT_NE(repo_cache_subdir(r), "..");
    r.name = "container-toolkit";
    EXPECT_EQ(repo_cache_subdir(r), "container-toolkit");
}

// Docker's install docs (matrix distros[].docker): apt adds download.docker.com/linux/{debian,
// ubuntu} with Suites: <codename>, Components: stable and the key 9DC8...CD88; dnf the rhel
// baseurl .../rhel/$releasever/$basearch/stable with the key 060A...9F35.
namespace {
RepositorySpec docker_unpinned() {
    RepositorySpec spec;
    spec.name = kDockerRepoName;
    spec.url = std::string(kDockerRepoRoot);
    return spec;
}
} // namespace

TEST(ResolveHostRepo, DockerRepositoryPerDistroFromTheMatrix) {
    const auto& m = Matrix::builtin();
    struct Case {
        std::string family, slug, url, suite, key_url, fpr;
    };
    const std::string deb_key = "9DC858229FC7DD38854AE2D88D81803C0EBFCD88";
    for (const auto& c : std::vector<Case>{
             {"debian", "debian12", "https://download.docker.com/linux/debian/", "bookworm",
              "https://download.docker.com/linux/debian/gpg", deb_key},
             {"debian", "ubuntu2204", "https://download.docker.com/linux/ubuntu/", "jammy",
              "https://download.docker.com/linux/ubuntu/gpg", deb_key},
             {"debian", "ubuntu2404", "https://download.docker.com/linux/ubuntu/", "noble",
              "https://download.docker.com/linux/ubuntu/gpg", deb_key},
             {"rhel", "rhel9", "https://download.docker.com/linux/rhel/9/x86_64/stable/", "",
              "https://download.docker.com/linux/rhel/gpg",
              "060A61C51B558A7F742B77AAC52FEB6B621E9F35"}}) {
        SCOPED_TRACE(c.slug);
        const auto r = resolve_host_repo(docker_unpinned(), host_on(c.family, c.slug), m);
        EXPECT_EQ(r.url, c.url);
        EXPECT_EQ(r.suite, c.suite);
        EXPECT_EQ(r.component, c.suite.empty() ? "" : "stable");
        EXPECT_EQ(r.key_url, c.key_url);
        EXPECT_EQ(r.key_fingerprint, c.fpr);
        EXPECT_TRUE(r.matrix_key);
        if (c.family == "debian") {
            EXPECT_EQ(release_dir_url(r), c.url + "dists/" + c.suite + "/");
            EXPECT_EQ(packages_entry(r), "stable/binary-amd64/Packages");
        } else {
            EXPECT_EQ(release_dir_url(r), c.url); // dnf: the baseurl itself
        }
    }
}

TEST(ResolveHostRepo, DockerMirrorPinWinsAndKeepsTheDistrosSuite) {
    auto spec = docker_unpinned();
    spec.url = "https://mirror.example/docker/debian";
    spec.key_url = "https://mirror.example/docker.asc";
    spec.key_fingerprint = "0123456789ABCDEF0123456789ABCDEF01234567";
    const auto r = resolve_host_repo(spec, host_on("debian", "debian12"), Matrix::builtin());
    EXPECT_EQ(r.url, "https://mirror.example/docker/debian/");
    EXPECT_EQ(r.key_url, "https://mirror.example/docker.asc");
    EXPECT_EQ(r.key_fingerprint, "0123456789ABCDEF0123456789ABCDEF01234567");
    EXPECT_FALSE(r.matrix_key);
    EXPECT_EQ(r.suite, "bookworm");
    EXPECT_EQ(release_dir_url(r), "https://mirror.example/docker/debian/dists/bookworm/");
}

TEST(ResolveHostRepo, DockerOnUbuntu2004SaysDockerStoppedPublishing) {
    // Docker dropped focal with Ubuntu 20.04's standard support: the plan says so and why,
    // trusting no key, instead of adding a repository whose install then fails.
    const auto r =
        resolve_host_repo(docker_unpinned(), host_on("debian", "ubuntu2004"), Matrix::builtin());
    EXPECT_EQ(r.key_fingerprint, "");
    EXPECT_FALSE(r.matrix_key);
    EXPECT_TRUE(
        contains_text(r.key_source, "Docker no longer publishes docker-ce for Ubuntu 20.04"))
        << r.key_source;
    EXPECT_TRUE(contains_text(r.key_source, "docker/docs#22675")) << r.key_source;
    EXPECT_TRUE(contains_text(r.key_source, "container.engine docker.io")) << r.key_source;
    // Every other distro row still has Docker's repository.
    for (const std::string slug : {"ubuntu2204", "ubuntu2404", "debian12"}) {
        const auto ok =
            resolve_host_repo(docker_unpinned(), host_on("debian", slug), Matrix::builtin());
        EXPECT_TRUE(ok.matrix_key) << slug << ": " << ok.key_source;
    }
}

TEST(ResolveHostRepo, DockerWithoutAMatrixEntryOrOnAnotherDistrosPathTrustsNothing) {
    const auto none =
        resolve_host_repo(docker_unpinned(), host_on("debian", "debian11"), Matrix::builtin());
    EXPECT_EQ(none.key_fingerprint, "");
    EXPECT_TRUE(contains_text(none.key_source, "no Docker repository for debian11"))
        << none.key_source;
    // Docker's Ubuntu repository unpinned on a Debian host: not Debian's key by accident.
    auto spec = docker_unpinned();
    spec.url = "https://download.docker.com/linux/ubuntu";
    const auto other = resolve_host_repo(spec, host_on("debian", "debian12"), Matrix::builtin());
    EXPECT_EQ(other.key_fingerprint, "");
    EXPECT_TRUE(contains_text(other.key_source, "is not Docker's repository for debian12"))
        << other.key_source;
}

TEST(ResolveHostRepo, FlatRepositoriesKeepTheirFlatIndex) {
    const auto r =
        resolve_host_repo(nvidia_cuda_unpinned(), host_on("debian", "debian12"), Matrix::builtin());
    EXPECT_EQ(r.suite, "");
    EXPECT_EQ(release_dir_url(r), r.url);
    EXPECT_EQ(packages_entry(r), "Packages");
}
