#include "fake_system.hpp"

#include <gpuprov/repo.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;

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
