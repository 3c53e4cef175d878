#include "profile_test_support.hpp"

namespace gpuprov {
namespace {

using test::contains;
using test::load;
using test::load_error;

TEST(Validation, LongTermBranchesRunNewerToolkitsOfTheirMajor) {
    // NVIDIA's minor version compatibility: {R535, CUDA 12.4} and {R580, CUDA 13.2} work.
    const auto a = load_profile(test::profile_fixture("good/r535-cuda124.yaml"), Matrix::builtin());
    EXPECT_EQ(a.driver->branch, "535");
    EXPECT_EQ(a.cuda->version, "12.4");
    const auto b = load_profile(test::profile_fixture("good/r580-cuda132.yaml"), Matrix::builtin());
    EXPECT_EQ(b.cuda->version, "13.2");
    // At the major's floor it still loads; across a major it does not.
    EXPECT_NO_THROW((void)load("name: x\ndriver: {branch: \"525\"}\ncuda: {version: \"12.9\"}\n"));
    auto e = load_error("name: x\ndriver: {branch: \"570\"}\ncuda: {version: \"13.2\"}\n");
    EXPECT_TRUE(contains(e.message(), "needs branch 595 or newer (toolkit driver 595.45.04), or "
                                      "branch 580 or newer under minor version"))
        << e.what();
    // CUDA 13.0's own driver is the floor of every 13.x: no minor-compat alternative to offer.
    e = load_error("name: x\ndriver: {branch: \"570\"}\ncuda: {version: \"13.0\"}\n");
    EXPECT_FALSE(contains(e.message(), "under minor version")) << e.what();
}

TEST(Validation, Cuda135LoadsOnBranch620AndNamesItWhenTooOld) {
    const auto p = load("name: x\ndriver: {branch: \"620\"}\ncuda: {version: \"13.5\"}\n"
                        "tensorrt: {version: \"11\"}\n");
    EXPECT_EQ(p.cuda->version, "13.5");
    EXPECT_EQ(p.tensorrt->version, "11");
    // Minor version compatibility keeps 13.5 on R580+; below it the fix names R620.
    EXPECT_NO_THROW((void)load("name: x\ndriver: {branch: \"580\"}\ncuda: {version: \"13.5\"}\n"));
    const auto e = load_error("name: x\ndriver: {branch: \"570\"}\ncuda: {version: \"13.5\"}\n");
    EXPECT_TRUE(contains(e.message(), "needs branch 620 or newer (toolkit driver 620.0)"))
        << e.what();
}

TEST(Validation, Tensorrt11NeedsCuda12Or13) {
    EXPECT_NO_THROW((void)load("name: x\ndriver: {branch: \"580\"}\ncuda: {version: \"12.9\"}\n"
                               "tensorrt: {version: \"11.0\"}\n"));
    const auto e = load_error("name: x\ndriver: {branch: \"525\"}\ncuda: {version: \"11.8\"}\n"
                              "tensorrt: {version: \"11\"}\n");
    EXPECT_TRUE(contains(e.message(), "TensorRT 11 has no builds for CUDA 11.8 (only for CUDA "
                                      "12.x, 13.x). Use tensorrt.version \"10\" or \"8\""))
        << e.what();
}

TEST(Validation, Cudnn89OnCuda120Loads) {
    EXPECT_NO_THROW((void)load("name: x\ndriver: {branch: \"525\"}\ncuda: {version: \"12.0\"}\n"
                               "cudnn: {version: \"8.9\"}\n"));
}

TEST(Validation, Cudnn917OnCuda118IsRefusedWithTheMinorsThatServeIt) {
    const auto e = load_error("name: x\ndriver: {branch: \"520\"}\ncuda: {version: \"11.8\"}\n"
                              "cudnn: {version: \"9.17\"}\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "cuDNN 9.17 has no build for CUDA 11.8")) << e.what();
    EXPECT_TRUE(contains(e.message(), "set cudnn.version to \"9\"")) << e.what();
}

TEST(Validation, NvidiaRepoUrlNeedsOneOfNvidiasKeys) {
    const auto e = load_error(
        "name: x\nrepositories:\n  cuda:\n"
        "    url: https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/\n"
        "    key_url: https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/"
        "3bf863cc.pub\n"
        "    key_fingerprint: E5E9C99CFEA1AC66664F46E1BCD8D74936E937A1\n");
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.col(), 22);
    EXPECT_TRUE(contains(e.message(), "a key NVIDIA does not sign")) << e.what();
    EXPECT_TRUE(contains(e.message(), "EB693B3035CD5710E231E123A4B469963BF863CC")) << e.what();
    EXPECT_TRUE(contains(e.message(), "610C7B14E068A878070DA4E99CD0A493D42D0685")) << e.what();
    // The container toolkit's URL has exactly one key.
    const auto c =
        load_error("name: x\nrepositories:\n  container-toolkit:\n"
                   "    url: https://nvidia.github.io/libnvidia-container/stable/deb/{pkgarch}/\n"
                   "    key_url: https://nvidia.github.io/libnvidia-container/gpgkey\n"
                   "    key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CC\n");
    EXPECT_TRUE(contains(c.message(), "C95B321B61E88C1809C4F759DDCAE044F796ECB0")) << c.what();
}

TEST(Validation, HostDisksAsSysadminsSizeThem) {
    const auto p = load("name: x\nhost:\n  disks:\n    - {path: /data, size_gib: 1800, nvme: "
                        "true}\n    - {path: /, free_gib: 50, ssd: true}\n");
    ASSERT_EQ(p.host.disks.size(), 2U);
    EXPECT_EQ(p.host.disks[0].path, "/data");
    EXPECT_EQ(p.host.disks[0].size_gib, 1800);
    EXPECT_TRUE(p.host.disks[0].nvme);
    EXPECT_FALSE(p.host.disks[0].ssd);
    EXPECT_EQ(p.host.disks[1].free_gib, 50);
    EXPECT_TRUE(p.host.disks[1].ssd);
    // The v1 host.disk still works next to it.
    EXPECT_EQ(load("name: x\nhost: {disk: {free_gib: 10}}\n").host.disk->free_gib, 10);
}

TEST(Validation, HostDisksErrorsPointAtTheEntry) {
    auto e = load_error("name: x\nhost:\n  disks:\n    - {path: /data}\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "'host.disks[0]' asks for nothing; give size_gib"))
        << e.what();
    e = load_error("name: x\nhost:\n  disks:\n    - {path: data, size_gib: 10}\n");
    EXPECT_TRUE(contains(e.message(), "host.disks[0].path")) << e.what();
    e = load_error("name: x\nhost:\n  disks:\n    - {path: /data, size_gib: 10, nvme: yes}\n");
    EXPECT_TRUE(contains(e.message(), "'host.disks[0].nvme' must be true or false")) << e.what();
    e = load_error("name: x\nhost:\n  disks:\n    - {path: /data, size_gb: 10}\n");
    EXPECT_TRUE(contains(e.message(), "size_gib")) << e.what();
    e = load_error("name: x\nhost:\n  disks: {path: /data, size_gib: 10}\n");
    EXPECT_TRUE(contains(e.message(), "'host.disks' must be a list")) << e.what();
    e = load_error("name: x\nhost:\n  disks:\n    - {path: /d, size_gib: 1}\n    - {path: /d, "
                   "ssd: true}\n");
    EXPECT_EQ(e.line(), 5);
    EXPECT_TRUE(contains(e.message(), "listed twice")) << e.what();
}

// driver.replace_runfile: a bool, off unless the profile says so; anything else is refused at
// its line and column with the allowed values, and a misspelt key with the right one.
TEST(Validation, DriverReplaceRunfileIsABool) {
    EXPECT_FALSE(load("name: x\ndriver: {branch: \"550\"}\n").driver->replace_runfile);
    EXPECT_TRUE(load("name: x\ndriver:\n  branch: \"550\"\n  replace_runfile: true\n")
                    .driver->replace_runfile);
    auto e = load_error("name: x\ndriver:\n  branch: \"550\"\n  replace_runfile: maybe\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.col(), 20);
    EXPECT_TRUE(
        contains(e.message(), "'driver.replace_runfile' must be true or false; got 'maybe'"))
        << e.what();
    e = load_error("name: x\ndriver:\n  branch: \"550\"\n  replace_runfiles: true\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "did you mean 'replace_runfile'")) << e.what();
}

// driver.kernel_guard: warn unless the profile says block; a value outside the two is refused
// at its line and column naming both, a near miss with the one meant.
TEST(Validation, DriverKernelGuardIsWarnOrBlock) {
    EXPECT_EQ(load("name: x\ndriver: {branch: \"550\"}\n").driver->kernel_guard, KernelGuard::warn);
    EXPECT_EQ(
        load("name: x\ndriver:\n  branch: \"550\"\n  kernel_guard: block\n").driver->kernel_guard,
        KernelGuard::block);
    EXPECT_EQ(
        load("name: x\ndriver:\n  branch: \"550\"\n  kernel_guard: warn\n").driver->kernel_guard,
        KernelGuard::warn);
    auto e = load_error("name: x\ndriver:\n  branch: \"550\"\n  kernel_guard: refuse\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.col(), 17);
    EXPECT_TRUE(
        contains(e.message(), "'driver.kernel_guard' must be one of warn, block; got 'refuse'"))
        << e.what();
    e = load_error("name: x\ndriver:\n  branch: \"550\"\n  kernel_guard: blok\n");
    EXPECT_TRUE(contains(e.message(), "did you mean 'block'?")) << e.what();
    e = load_error("name: x\ndriver:\n  branch: \"550\"\n  kernel_guard: true\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "got 'true'")) << e.what();
    e = load_error("name: x\ndriver:\n  branch: \"550\"\n  kernel_gaurd: block\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "did you mean 'kernel_guard'")) << e.what();
}

TEST(Validation, PinnedToolkitAndDriverVersions) {
    const auto p = load("name: x\ndriver: {branch: \"550\", version: \"550.90.07\"}\n"
                        "cuda: {version: \"12.4.1\"}\n");
    EXPECT_EQ(p.cuda->version, "12.4");
    EXPECT_EQ(p.cuda->exact, std::optional<std::string>("12.4.1"));
    EXPECT_EQ(p.driver->version, std::optional<std::string>("550.90.07"));
    // Without them: the newest in the branch and in the repository.
    const auto q = load("name: x\ndriver: {branch: \"550\"}\ncuda: {version: \"12.4\"}\n");
    EXPECT_FALSE(q.cuda->exact.has_value());
    EXPECT_FALSE(q.driver->version.has_value());
    // Below the toolkit driver but above CUDA 12's floor: minor version compatibility.
    EXPECT_NO_THROW((void)load("name: x\ndriver: {branch: \"550\", version: \"550.40.07\"}\n"
                               "cuda: {version: \"12.4\"}\n"));
}

TEST(Validation, PinnedDriverMustBeOnItsBranchAndNewEnough) {
    auto e = load_error("name: x\ndriver: {branch: \"550\", version: \"535.183.06\"}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.col(), 34);
    EXPECT_TRUE(contains(e.message(), "'driver.version' must be an exact driver of branch 550"))
        << e.what();
    e = load_error("name: x\ndriver: {branch: \"550\", version: \"550\"}\n");
    EXPECT_TRUE(contains(e.message(), "'driver.version' must be an exact driver")) << e.what();
    e = load_error("name: x\ndriver: {branch: \"580\", version: \"580.65.05\"}\n"
                   "cuda: {version: \"13.0\"}\n");
    EXPECT_TRUE(contains(e.message(), "driver 580.65.05 is too old for CUDA 13.0")) << e.what();
    EXPECT_EQ(e.col(), 34);
}

TEST(Validation, MinimalProfileGetsDefaults) {
    const auto p = load("name: minimal\n");
    EXPECT_EQ(p.name, "minimal");
    EXPECT_TRUE(p.nouveau_blacklist);
    EXPECT_FALSE(p.driver.has_value());
    EXPECT_FALSE(p.cuda.has_value());
    EXPECT_FALSE(p.monitoring.has_value());
    EXPECT_FALSE(p.nccl);
    EXPECT_EQ(p.fabric_manager, FabricManagerMode::automatic);
    EXPECT_TRUE(p.host.os.empty());
}

TEST(Validation, MirrorOverHttpWithAllowInsecureAndSpacedFingerprint) {
    const auto p = load_profile(test::profile_fixture("good/mirror.yaml"), Matrix::builtin());
    const auto& cuda = p.repositories.at("cuda");
    EXPECT_TRUE(cuda.allow_insecure);
    EXPECT_EQ(cuda.url, "http://apt-mirror.internal/nvidia/cuda/{distro}/{arch}/");
    EXPECT_EQ(cuda.key_fingerprint, "EB693B3035CD5710E231E123A4B469963BF863CC");
    EXPECT_EQ(p.driver->flavor, "server");
    EXPECT_EQ(p.cudnn->version, "8.9");
}

TEST(Validation, InsecureFlagCoversTheKeyUrlToo) {
    const auto e = load_error("name: x\nrepositories:\n  cuda:\n    url: https://a.example/\n"
                              "    key_url: http://a.example/k.pub\n"
                              "    key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CC\n");
    EXPECT_EQ(e.line(), 5);
    EXPECT_TRUE(contains(e.message(), "'repositories.cuda.key_url' uses http://")) << e.what();
}

TEST(Validation, UrlSchemesAndTemplates) {
    const std::string head = "name: x\nrepositories:\n  cuda:\n    url: ";
    const std::string tail = "\n    key_url: https://a.example/k.pub\n    key_fingerprint: "
                             "EB693B3035CD5710E231E123A4B469963BF863CC\n";
    EXPECT_TRUE(contains(load_error(head + "ftp://a.example/" + tail).message(),
                         "must start with https://"));
    EXPECT_TRUE(contains(load_error(head + "https://a.example/{distrib}/" + tail).message(),
                         "unknown template '{distrib}'"));
    EXPECT_TRUE(contains(load_error(head + "https:///path/" + tail).message(), "no host name"));
    EXPECT_TRUE(contains(load_error(head + "\"https://a.example/x y/\"" + tail).message(),
                         "contains a space"));
    EXPECT_TRUE(contains(load_error(head + "\"https://a.example/`id`/\"" + tail).message(),
                         "contains '`'"));
    EXPECT_TRUE(contains(load_error(head + "https://a.example/#frag" + tail).message(),
                         "a repository URL may hold"));
    EXPECT_EQ(load(head + "https://a.example/{distro}/{arch}/{pkgarch}/" + tail)
                  .repositories.at("cuda")
                  .url,
              "https://a.example/{distro}/{arch}/{pkgarch}/");
}

TEST(Validation, RepositoryNeedsAllThreeFields) {
    const auto e = load_error("name: x\nrepositories:\n  cuda:\n    url: https://a.example/\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.col(), 3);
    EXPECT_TRUE(contains(e.message(), "'repositories.cuda' has no key_url and key_fingerprint"))
        << e.what();
    EXPECT_TRUE(contains(e.message(), "add key_url and key_fingerprint")) << e.what();
    // The container toolkit's URL is NVIDIA's too, but only the CUDA repository has a key per
    // distro in the matrix.
    EXPECT_TRUE(contains(
        load_error("name: x\nrepositories:\n  container-toolkit:\n"
                   "    url: https://nvidia.github.io/libnvidia-container/stable/deb/{pkgarch}/\n")
            .message(),
        "only NVIDIA's CUDA repository"));
}

TEST(Validation, NvidiaCudaUrlWithoutAPinUsesNvidiasKeyPerDistro) {
    const auto p =
        load("name: x\nrepositories:\n  cuda:\n    url: "
             "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/\n");
    EXPECT_EQ(p.repositories.at("cuda").key_url, "");
    EXPECT_EQ(p.repositories.at("cuda").key_fingerprint, "");
}

TEST(Validation, HalfPinnedRepositoryNamesTheMissingHalf) {
    const std::string nvidia =
        "name: x\nrepositories:\n  cuda:\n"
        "    url: https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/\n";
    const auto no_fpr = load_error(nvidia + "    key_url: https://a.example/k.pub\n");
    EXPECT_EQ(no_fpr.line(), 5);
    EXPECT_EQ(no_fpr.col(), 14);
    EXPECT_TRUE(contains(no_fpr.message(), "'repositories.cuda.key_url' without "
                                           "'repositories.cuda.key_fingerprint'"))
        << no_fpr.what();
    EXPECT_TRUE(contains(no_fpr.message(), "or remove both to use NVIDIA's key")) << no_fpr.what();
    const auto no_url =
        load_error("name: x\nrepositories:\n  cuda:\n    url: https://a.example/\n"
                   "    key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CC\n");
    EXPECT_EQ(no_url.line(), 5);
    EXPECT_TRUE(contains(no_url.message(), "'repositories.cuda.key_fingerprint' without "
                                           "'repositories.cuda.key_url'"))
        << no_url.what();
    // A mirror has no NVIDIA default to fall back on.
    EXPECT_FALSE(contains(no_url.message(), "remove both")) << no_url.what();
}

TEST(Validation, FingerprintWithNonHex) {
    const auto e = load_error("name: x\nrepositories:\n  cuda:\n    url: https://a.example/\n"
                              "    key_url: https://a.example/k\n"
                              "    key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CZ\n");
    EXPECT_TRUE(contains(e.message(), "contains 'Z'")) << e.what();
}

TEST(Validation, NameRules) {
    EXPECT_TRUE(contains(load_error("name: " + std::string(64, 'a') + "\n").message(), "1-63"));
    EXPECT_EQ(load("name: " + std::string(63, 'a') + "\n").name.size(), 63U);
    EXPECT_TRUE(contains(load_error("name: -rf\n").message(), "not starting with '-'"));
    EXPECT_TRUE(contains(load_error("name: [a, b]\n").message(), "'name' must be a profile name"));
}

TEST(Validation, DescriptionIsOneLine) {
    const auto e = load_error("name: x\ndescription: \"two\\nlines\"\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "keep it on one line")) << e.what();
    EXPECT_EQ(load("name: x\ndescription: CV training; 4x A100 (80GB) & more\n").description,
              "CV training; 4x A100 (80GB) & more");
}

TEST(Validation, CudaVersionFormat) {
    EXPECT_TRUE(
        contains(load_error("name: x\ncuda: {version: \"12\"}\n").message(), "major.minor"));
    EXPECT_TRUE(contains(load_error("name: x\ncuda: {version: \"12.7.1\"}\n").message(),
                         "'12.7.1' is not one gpuprov knows"));
    EXPECT_TRUE(contains(load_error("name: x\ncuda: {version: \"12.4.01\"}\n").message(),
                         "is not one gpuprov knows"));
    EXPECT_TRUE(contains(load_error("name: x\ncuda: {version: \"12.04\"}\n").message(),
                         "'12.04' is not one"));
    EXPECT_TRUE(contains(load_error("name: x\ncuda: {version: \"12.7\"}\n").message(),
                         "'12.7' is not one"));
    // An unquoted 12.4 is the same text.
    EXPECT_EQ(load("name: x\ncuda: {version: 12.4}\n").cuda->version, "12.4");
}

TEST(Validation, CudnnVersionFormat) {
    const std::string head = "name: x\ndriver: {branch: \"550\"}\ncuda: {version: \"12.4\"}\n";
    for (const char* bad : {"8", "8.9.7.29", "10", "9.x", "7.6"}) {
        const auto e = load_error(head + "cudnn: {version: \"" + bad + "\"}\n");
        EXPECT_TRUE(contains(e.message(), "must be \"8.x\"")) << bad << ": " << e.what();
    }
    EXPECT_EQ(load(head + "cudnn: {version: \"9.1\"}\n").cudnn->version, "9.1");
    EXPECT_EQ(load(head + "cudnn: {version: \"8.9\"}\n").cudnn->version, "8.9");
    EXPECT_FALSE(load(head + "cudnn: null\n").cudnn.has_value());
}

TEST(Validation, Cudnn8MessageListsTheBuildsThatExist) {
    const auto e = load_error("name: x\ndriver: {branch: \"580\"}\ncuda: {version: \"13.0\"}\n"
                              "cudnn: {version: \"8.9\"}\n");
    EXPECT_TRUE(contains(e.message(), "its builds are for CUDA 11.8, 12.1, 12.2")) << e.what();
    EXPECT_TRUE(contains(e.message(), "Use cudnn \"9\" with CUDA 13.0")) << e.what();
}

TEST(Validation, CudnnAndNcclNeedCuda) {
    EXPECT_TRUE(contains(load_error("name: x\ncudnn: {version: \"9\"}\n").message(),
                         "cudnn needs cuda.version"));
    EXPECT_TRUE(
        contains(load_error("name: x\nnccl: true\n").message(), "nccl: true needs cuda.version"));
}

TEST(Validation, TensorrtMajorAndItsCudaMajors) {
    const auto p = load("name: x\ndriver: {branch: \"580\"}\ncuda: {version: \"12.6\"}\n"
                        "tensorrt: {version: \"10.4\"}\n");
    ASSERT_TRUE(p.tensorrt);
    EXPECT_EQ(p.tensorrt->version, "10.4");
    // Needs a CUDA release to pick the build for.
    EXPECT_TRUE(contains(load_error("name: x\ntensorrt: {version: \"10\"}\n").message(),
                         "tensorrt needs cuda.version"));
    // An unknown major names the ones the matrix knows and points at the value.
    auto e = load_error("name: x\ndriver: {branch: \"580\"}\ncuda: {version: \"12.6\"}\n"
                        "tensorrt: {version: \"9\"}\n");
    EXPECT_TRUE(contains(e.message(), "TensorRT major the matrix knows (\"11\", \"10\", \"8\")"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "t.yaml:4:")) << e.what();
    for (const char* bad : {"\"10.4.0\"", "\"ten\"", "\"10.x\"", "[10]"}) {
        (void)load_error(std::string("name: x\ndriver: {branch: \"580\"}\ncuda: {version: "
                                     "\"12.6\"}\ntensorrt: {version: ") +
                         bad + "}\n");
    }
    // TensorRT 8 has no CUDA 13 builds: refused with the major that has them.
    e = load_error("name: x\ndriver: {branch: \"580\"}\ncuda: {version: \"13.0\"}\n"
                   "tensorrt: {version: \"8\"}\n");
    EXPECT_TRUE(contains(e.message(), "TensorRT 8 has no builds for CUDA 13.0 (only for CUDA "
                                      "11.x, 12.x). Use tensorrt.version \"11\" or \"10\""))
        << e.what();
}

TEST(Validation, DriverBranchAtTheRequiredMinimumIsAccepted) {
    EXPECT_EQ(
        load("name: x\ndriver: {branch: \"550\"}\ncuda: {version: \"12.4\"}\n").driver->branch,
        "550");
    // Unquoted branch numbers read the same.
    EXPECT_EQ(load("name: x\ndriver: {branch: 580}\ncuda: {version: \"13.0\"}\n").driver->branch,
              "580");
    // Below the toolkit driver but at or above the major's floor: minor version compatibility.
    EXPECT_EQ(
        load("name: x\ndriver: {branch: \"545\"}\ncuda: {version: \"12.4\"}\n").driver->branch,
        "545");
    const auto e = load_error("name: x\ndriver: {branch: \"515\"}\ncuda: {version: \"12.4\"}\n");
    EXPECT_TRUE(contains(e.message(), "or cuda.version to \"11.7\" or older")) << e.what();
}

TEST(Validation, GpuArchitectureBoundsOnCuda) {
    auto e = load_error("name: x\nhost: {gpus: {model: V100}}\ndriver: {branch: \"580\"}\n"
                        "cuda: {version: \"13.0\"}\n");
    EXPECT_EQ(e.line(), 4);
    EXPECT_TRUE(contains(e.message(), "the last release that does is 12.9")) << e.what();
    e = load_error("name: x\nhost: {gpus: {model: H100}}\ndriver: {branch: \"515\"}\n"
                   "cuda: {version: \"11.7\"}\n");
    EXPECT_TRUE(contains(e.message(), "it needs CUDA 11.8 or newer")) << e.what();
}

TEST(Validation, ServerFlavorUsesProprietaryModules) {
    const auto e = load_error("name: x\nhost: {gpus: {model: B200}}\n"
                              "driver: {branch: \"570\", flavor: server}\n");
    EXPECT_TRUE(contains(e.message(), "proprietary kernel modules do not support B200"));
    EXPECT_EQ(load("name: x\nhost: {gpus: {model: B200}}\ndriver: {branch: \"570\", flavor: "
                   "open}\ncuda: {version: \"12.8\"}\n")
                  .driver->flavor,
              "open");
}

TEST(Validation, FlavorMisspellingIsSuggested) {
    const auto e = load_error("name: x\ndriver: {branch: \"580\", flavor: opne}\n");
    EXPECT_TRUE(contains(e.message(), "must be one of auto, proprietary, open, server; got "
                                      "'opne' (did you mean 'open'?)"))
        << e.what();
}

// auto resolves at plan against the GPUs found; the declared model never refuses it.
TEST(Validation, AutoFlavorIsTheDefaultAndFitsEveryModel) {
    for (const char* model : {"B200", "GH200", "V100", "A100"}) {
        const auto p = load(std::string("name: x\nhost: {gpus: {model: ") + model +
                            "}}\ndriver: {branch: \"580\"}\n");
        EXPECT_EQ(p.driver->flavor, "auto") << model;
    }
    const auto e = load_error("name: x\nhost: {gpus: {model: GH200}}\n"
                              "driver: {branch: \"580\", flavor: proprietary}\n");
    EXPECT_TRUE(contains(e.message(), "proprietary kernel modules do not support GH200"))
        << e.what();
}

// cuDNN 9 latest (9.17+) lists compute capability 7.5 and newer only: refused on a declared
// V100, naming the last release NVIDIA lists for 7.0.
TEST(Validation, LatestCudnn9OnADeclaredV100NamesTheLastReleaseForIt) {
    const auto e = load_error("name: x\nhost: {gpus: {model: V100}}\n"
                              "driver: {branch: \"580\"}\ncuda: {version: \"12.8\"}\n"
                              "cudnn: {version: \"9\"}\n");
    EXPECT_TRUE(contains(e.message(), "does not support compute capability 7.0")) << e.what();
    EXPECT_TRUE(contains(e.message(), "set cudnn.version to \"9.10\"")) << e.what();
    EXPECT_EQ(load("name: x\nhost: {gpus: {model: V100}}\ndriver: {branch: \"580\"}\n"
                   "cuda: {version: \"12.8\"}\ncudnn: {version: \"9.10\"}\n")
                  .cudnn->version,
              "9.10");
}

TEST(Validation, FabricManagerModes) {
    EXPECT_EQ(load("name: x\nfabric_manager: true\n").fabric_manager, FabricManagerMode::enabled);
    EXPECT_EQ(load("name: x\nfabric_manager: false\n").fabric_manager, FabricManagerMode::disabled);
    EXPECT_TRUE(contains(load_error("name: x\nfabric_manager: yes\n").message(),
                         "must be one of auto, true, false"));
}

// fabric.imex: IMEX at the driver's version; imex_nodes, the domain's node list, each entry an
// address or host name, named by file:line:col when wrong.
TEST(Validation, FabricImexAndItsNodes) {
    const auto off = load("name: x\n");
    EXPECT_FALSE(off.fabric.imex);
    EXPECT_FALSE(off.fabric.imex_service());
    const auto on = load("name: x\ndriver: {branch: \"580\"}\nfabric: {imex: true}\n");
    EXPECT_TRUE(on.fabric.imex);
    EXPECT_TRUE(on.fabric.imex_nodes.empty());
    EXPECT_FALSE(on.fabric.imex_service());
    const auto nodes = load("name: x\ndriver: {branch: \"595\"}\nfabric:\n  imex: true\n"
                            "  imex_nodes: [10.0.0.11, \"fd00::12\", gb200-tray-03.example]\n");
    EXPECT_EQ(nodes.fabric.imex_nodes,
              (std::vector<std::string>{"10.0.0.11", "fd00::12", "gb200-tray-03.example"}));
    EXPECT_TRUE(nodes.fabric.imex_service());

    auto e = load_error("name: x\ndriver: {branch: \"580\"}\nfabric: {imex: yes}\n");
    EXPECT_TRUE(contains(e.message(), "'fabric.imex' must be true or false; got 'yes'"))
        << e.what();
    EXPECT_EQ(e.line(), 3);
    e = load_error("name: x\nfabric: {imex: true, nodes: [10.0.0.1]}\n");
    EXPECT_TRUE(contains(e.message(), "unknown key 'fabric.nodes'")) << e.what();
    EXPECT_TRUE(contains(e.message(), "Allowed keys in 'fabric': imex, imex_nodes")) << e.what();
    e = load_error("name: x\ndriver: {branch: \"580\"}\nfabric:\n  imex: true\n"
                   "  imex_nodes: [10.0.0.11, 10.0.0.300]\n");
    EXPECT_TRUE(contains(e.message(), "'fabric.imex_nodes[1]' is not a valid IP address: "
                                      "'10.0.0.300'"))
        << e.what();
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.col(), 27);
    e = load_error("name: x\ndriver: {branch: \"580\"}\nfabric:\n  imex: true\n"
                   "  imex_nodes: [10.0.0.11, 10.0.0.11]\n");
    EXPECT_TRUE(contains(e.message(), "'fabric.imex_nodes[1]' repeats '10.0.0.11'")) << e.what();
    e = load_error("name: x\ndriver: {branch: \"580\"}\nfabric:\n  imex: true\n"
                   "  imex_nodes: [-tray.example]\n");
    EXPECT_TRUE(contains(e.message(), "is not an address or host name: '-tray.example'"))
        << e.what();
    e = load_error("name: x\ndriver: {branch: \"580\"}\nfabric: {imex: true, imex_nodes: []}\n");
    EXPECT_TRUE(contains(e.message(), "'fabric.imex_nodes' must be a non-empty list")) << e.what();
    // A node list without IMEX would be written by nobody.
    e = load_error("name: x\ndriver: {branch: \"580\"}\nfabric: {imex_nodes: [10.0.0.1]}\n");
    EXPECT_TRUE(contains(e.message(), "needs 'fabric.imex: true'")) << e.what();
    // IMEX is installed at the driver's version, from R550.
    e = load_error("name: x\nfabric: {imex: true}\n");
    EXPECT_TRUE(contains(e.message(), "fabric.imex: true needs a driver section")) << e.what();
    EXPECT_EQ(e.line(), 2);
    e = load_error("name: x\ndriver: {branch: \"535\"}\nfabric: {imex: true}\n");
    EXPECT_TRUE(contains(e.message(), "needs driver branch 550 or newer")) << e.what();
    EXPECT_NO_THROW((void)load("name: x\ndriver: {branch: \"550\"}\nfabric: {imex: true}\n"));
}

TEST(Validation, PathsAndRanges) {
    EXPECT_TRUE(contains(load_error("name: x\nmonitoring: {textfile_dir: /var/../etc}\n").message(),
                         "may not contain '..'"));
    EXPECT_TRUE(
        contains(load_error("name: x\nhost: {disk: {path: /data, free_gib: 0}}\n").message(),
                 "'host.disk.free_gib' must be a whole number from 1"));
    EXPECT_TRUE(contains(load_error("name: x\nmonitoring: {temperature_alert_c: 500}\n").message(),
                         "from 30 to 120"));
    EXPECT_TRUE(
        contains(load_error("name: x\nhost: {memory_gib: lots}\n").message(), "got 'lots'"));
    const auto p = load("name: x\nhost: {disk: {path: /data/scratch, free_gib: 10}}\n");
    EXPECT_EQ(p.host.disk->path, "/data/scratch");
}

TEST(Validation, MonitoringNodeExporter) {
    EXPECT_FALSE(load("name: x\nmonitoring: {}\n").monitoring->node_exporter);
    EXPECT_TRUE(load("name: x\nmonitoring: {node_exporter: true}\n").monitoring->node_exporter);
    const auto e = load_error("name: x\nmonitoring: {node_exporter: yes}\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(contains(e.message(), "monitoring.node_exporter")) << e.what();
}

TEST(Validation, HostOsMustBeAList) {
    const auto e = load_error("name: x\nhost:\n  os: ubuntu-22.04\n");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.col(), 7);
    EXPECT_TRUE(contains(e.message(), "must be a list")) << e.what();
}

TEST(Validation, PositionsForScalarsPointAtValuesAndForSectionsAtKeys) {
    const auto p = load("name: x\ndriver:\n  branch: \"580\"\ncuda: {version: \"13.0\"}\n");
    EXPECT_EQ(p.pos("driver").line, 2);
    EXPECT_EQ(p.pos("driver").col, 1);
    EXPECT_EQ(p.pos("driver.branch").line, 3);
    EXPECT_EQ(p.pos("driver.branch").col, 11);
    EXPECT_EQ(p.pos("cuda.version").col, 17);
    EXPECT_EQ(p.pos("name").file, "t.yaml");
}

TEST(Validation, EmptyOrNonMappingDocument) {
    EXPECT_TRUE(contains(load_error("").message(), "must be a YAML mapping"));
    EXPECT_TRUE(contains(load_error("- a\n- b\n").message(), "must be a YAML mapping"));
}

// B300 (compute capability 10.3) needs a later branch than Blackwell's 570 (matrix gpus row).
TEST(Validation, DeclaredB300NeedsItsOwnFirstBranch) {
    const auto e = load_error("name: x\nhost: {gpus: {model: B300}}\n"
                              "driver: {branch: \"570\"}\n");
    EXPECT_TRUE(contains(e.message(), "driver branch 570 does not support B300 (blackwell), "
                                      "which needs branch 575 or newer"))
        << e.what();
}

} // namespace
} // namespace gpuprov
