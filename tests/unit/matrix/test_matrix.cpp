#include <algorithm>
#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>
#include <optional>
#include <string>

namespace gpuprov {
namespace {

DottedVersion v(const char* s) {
    return *DottedVersion::parse(s);
}

const Matrix& m() {
    return Matrix::builtin();
}

TEST(Matrix, CudaReleaseMapsToToolkitDriverAndBranch) {
    const auto* c = m().cuda(v("12.4"));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->min_driver.str(), "550.54.14");
    EXPECT_EQ(c->driver_branch, 550);
    EXPECT_TRUE(c->confirmed);
    ASSERT_NE(m().cuda(v("13.0")), nullptr);
    EXPECT_EQ(m().cuda(v("13.0"))->min_driver_text, "580.65.06");
    EXPECT_EQ(m().cuda(v("13.0"))->min_driver, v("580.65.6"));
    EXPECT_EQ(m().cuda(v("11.8"))->driver_branch, 520);
}

TEST(Matrix, CudaUpdateVersionFindsItsMinorRelease) {
    const auto* c = m().cuda(v("12.4.1"));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->version.str(), "12.4");
}

TEST(Matrix, UnknownCudaReleasesAreAbsent) {
    EXPECT_EQ(m().cuda(v("12.7")), nullptr); // never released
    EXPECT_EQ(m().cuda(v("99.9")), nullptr);
    EXPECT_EQ(m().cuda(v("10.2")), nullptr);
}

TEST(Matrix, NewestReleasesCarryOnlyABranch) {
    const auto* c = m().cuda(v("13.4"));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->driver_branch, 615);
    EXPECT_FALSE(c->confirmed);
    EXPECT_EQ(m().cuda(v("13.3"))->driver_branch, 610);
}

TEST(Matrix, Cuda135NeedsBranch620) {
    // CUDA 13.5 (November 2026) names only its branch, R620, as 13.3 and 13.4 do.
    const auto* c = m().cuda(v("13.5"));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->driver_branch, 620);
    EXPECT_EQ(c->min_driver.str(), "620.0");
    EXPECT_FALSE(c->confirmed);
    EXPECT_EQ(m().cuda(v("13.5.1"))->version.str(), "13.5");
    EXPECT_EQ(m().cuda_releases().back().version.str(), "13.5");
}

TEST(Matrix, CudaReleasesAreSortedAndDriverBranchesNeverDecrease) {
    const auto& all = m().cuda_releases();
    ASSERT_GE(all.size(), 20U);
    EXPECT_EQ(all.front().version.str(), "11.0");
    for (std::size_t i = 1; i < all.size(); ++i) {
        EXPECT_LT(all[i - 1].version, all[i].version);
        EXPECT_LE(all[i - 1].driver_branch, all[i].driver_branch);
    }
}

TEST(Matrix, Debian12RepoLacksOldReleases) {
    const auto* d = m().distro("debian12");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->family, "debian");
    EXPECT_EQ(d->os, "debian-12");
    EXPECT_FALSE(d->carries(v("11.8")));
    EXPECT_FALSE(d->carries(v("12.2")));
    EXPECT_TRUE(d->carries(v("12.3")));
    EXPECT_TRUE(d->carries(v("13.0")));
}

TEST(Matrix, Ubuntu2404RepoStartsAt125) {
    const auto* d = m().distro("ubuntu2404");
    ASSERT_NE(d, nullptr);
    EXPECT_FALSE(d->carries(v("12.4")));
    EXPECT_FALSE(d->carries(v("11.8")));
    EXPECT_TRUE(d->carries(v("12.5")));
    EXPECT_TRUE(d->carries(v("12.6")));
    EXPECT_TRUE(d->carries(v("13.2")));
}

// Ubuntu 26.04 (issue 21): NVIDIA's ubuntu2604 repository, CUDA 13 only (UNCONFIRMED, so the
// row says so), signed with its own key 60DF8A40 (not the older repositories' 3bf863cc),
// Docker's resolute suite.
TEST(Matrix, Ubuntu2604RepoIsCuda13Only) {
    const auto* d = m().distro_by_os("ubuntu-26.04");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->slug, "ubuntu2604");
    EXPECT_EQ(d->family, "debian");
    EXPECT_FALSE(d->carries(v("12.9")));
    EXPECT_TRUE(d->carries(v("13.0")));
    EXPECT_TRUE(d->carries(v("13.4")));
    EXPECT_FALSE(d->confirmed);
    EXPECT_EQ(d->key_file, "60DF8A40.pub");
    EXPECT_EQ(d->key_fingerprint, "14BAFBC7562AD710CA04E69905FBB6DA60DF8A40");
    ASSERT_TRUE(d->docker.has_value());
    EXPECT_EQ(d->docker->suite, "resolute");
}

TEST(Matrix, Ubuntu2004RepoEndsBeforeCuda13) {
    const auto* d = m().distro("ubuntu2004");
    ASSERT_NE(d, nullptr);
    EXPECT_TRUE(d->carries(v("12.4")));
    EXPECT_FALSE(d->carries(v("13.0")));
}

TEST(Matrix, DistroKeysMatchTheirFamily) {
    EXPECT_EQ(m().distro("ubuntu2204")->key_fingerprint,
              "EB693B3035CD5710E231E123A4B469963BF863CC");
    EXPECT_EQ(m().distro("ubuntu2204")->key_file, "3bf863cc.pub");
    EXPECT_EQ(m().distro("rhel9")->key_fingerprint, "610C7B14E068A878070DA4E99CD0A493D42D0685");
    EXPECT_EQ(m().distro("rhel8")->family, "rhel");
    EXPECT_EQ(m().distro("rhel8")->key_file, "D42D0685.pub");
    EXPECT_EQ(m().distro("sles15"), nullptr);
}

TEST(Matrix, DistroByOsId) {
    const auto* d = m().distro_by_os("ubuntu-22.04");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->slug, "ubuntu2204");
    EXPECT_EQ(m().distro_by_os("ubuntu2204"), nullptr);
}

TEST(Matrix, H100SxmIsHopperOnNvswitch) {
    const auto* g = m().gpu_by_device(0x2330);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->model, "H100");
    EXPECT_EQ(g->architecture, "hopper");
    EXPECT_EQ(g->compute_capability, "9.0");
    EXPECT_EQ(g->smi_name, "NVIDIA H100 80GB HBM3");
    EXPECT_TRUE(g->nvswitch);
}

TEST(Matrix, PcieCardsNeedNoFabricManager) {
    ASSERT_NE(m().gpu_by_device(0x2331), nullptr);
    EXPECT_FALSE(m().gpu_by_device(0x2331)->nvswitch);
    ASSERT_NE(m().gpu_by_device(0x1EB8), nullptr);
    EXPECT_EQ(m().gpu_by_device(0x1EB8)->model, "T4");
    EXPECT_FALSE(m().gpu_by_device(0x1EB8)->nvswitch);
    EXPECT_TRUE(m().gpu_by_device(0x20B2)->nvswitch);
    EXPECT_TRUE(m().gpu_by_device(0x2335)->nvswitch);
    EXPECT_TRUE(m().gpu_by_device(0x2901)->nvswitch);
    EXPECT_EQ(m().gpu_by_device(0x1AF1), nullptr); // an NVSwitch bridge, not a GPU
}

TEST(Matrix, GpuModelsAreDistinctAndSorted) {
    const auto models = m().gpu_models();
    for (const char* want :
         {"A10", "A100", "A30", "B200", "H100", "H200", "L4", "L40S", "T4", "V100"}) {
        EXPECT_NE(std::find(models.begin(), models.end(), want), models.end()) << want;
    }
    EXPECT_TRUE(std::is_sorted(models.begin(), models.end()));
    EXPECT_EQ(std::adjacent_find(models.begin(), models.end()), models.end());
    // SXM4 40/80, PCIe 40 (0x20F1 and 0x20B1, pci.ids 2026.08.22), PCIe 80.
    EXPECT_EQ(m().gpus_of_model("A100").size(), 5U);
}

TEST(Matrix, ArchitectureRules) {
    const auto* volta = m().architecture("volta");
    ASSERT_NE(volta, nullptr);
    EXPECT_FALSE(volta->open_module_ok);
    ASSERT_TRUE(volta->max_cuda.has_value());
    EXPECT_EQ(volta->max_cuda->str(), "12.9");
    const auto* blackwell = m().architecture("blackwell");
    ASSERT_NE(blackwell, nullptr);
    EXPECT_FALSE(blackwell->proprietary_ok);
    EXPECT_TRUE(blackwell->open_module_ok);
    EXPECT_EQ(blackwell->min_cuda.str(), "12.8");
    EXPECT_TRUE(m().architecture("turing")->open_module_ok);
    EXPECT_FALSE(m().architecture("hopper")->max_cuda.has_value());
    for (const auto& g : m().gpus()) {
        EXPECT_NE(m().architecture(g.architecture), nullptr) << g.name;
    }
}

TEST(Matrix, Cudnn8PicksNewestBuildOfTheSameMajorAtOrBelowTheCuda) {
    // 8.9.7.29 has +cuda12.2; it serves 12.4 (same major, minor >= 2).
    auto b = m().cudnn8_for(v("8.9"), v("12.4"));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->first, "8.9.7.29");
    EXPECT_EQ(b->second.str(), "12.2");

    b = m().cudnn8_for(v("8.9"), v("11.8"));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->first, "8.9.7.29");
    EXPECT_EQ(b->second.str(), "11.8");

    b = m().cudnn8_for(v("8.6"), v("11.8"));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->first, "8.6.0.163");
}

TEST(Matrix, Cudnn89OnCuda120And121ResolvesTheCuda122Build) {
    // cuDNN 8.9.6 support matrix: "for CUDA 12.x: 12.2, 12.1, 12.0" from one +cuda12.2 build.
    for (const char* cuda : {"12.0", "12.1", "12.2"}) {
        const auto b = m().cudnn8_for(v("8.9"), v(cuda));
        ASSERT_TRUE(b.has_value()) << cuda;
        EXPECT_EQ(b->first, "8.9.7.29") << cuda;
        EXPECT_EQ(b->second.str(), "12.2") << cuda;
    }
}

TEST(Matrix, Cudnn89Cuda118BuildServesEvery11Release) {
    // "for CUDA 11.x: 11.8, 11.7 ... 11.0" from the +cuda11.8 build.
    for (const char* cuda : {"11.0", "11.4", "11.7"}) {
        const auto b = m().cudnn8_for(v("8.9"), v(cuda));
        ASSERT_TRUE(b.has_value()) << cuda;
        EXPECT_EQ(b->first, "8.9.7.29") << cuda;
        EXPECT_EQ(b->second.str(), "11.8") << cuda;
    }
}

TEST(Matrix, Cudnn8HasNoBuildAcrossMajorsOrOutsideItsRange) {
    EXPECT_FALSE(m().cudnn8_for(v("8.9"), v("13.0")).has_value());
    EXPECT_FALSE(m().cudnn8_for(v("8.6"), v("12.4")).has_value());
    EXPECT_FALSE(m().cudnn8_for(v("8.7"), v("11.8")).has_value());
    // 8.5.0.96 has only +cuda11.7 and no support-matrix range in the data: not for 11.6.
    EXPECT_FALSE(m().cudnn8_for(v("8.5"), v("11.6")).has_value());
    // "8" alone: the newest 8.x for that CUDA.
    const auto any8 = m().cudnn8_for(v("8"), v("12.0"));
    ASSERT_TRUE(any8.has_value());
    EXPECT_EQ(any8->first, "8.9.7.29");
    EXPECT_EQ(any8->second.str(), "12.2");
}

TEST(Matrix, Cudnn9BuildsPerCudaMajorFromItsSupportMatrix) {
    EXPECT_FALSE(m().cudnn9_supports(v("11.3")));
    EXPECT_TRUE(m().cudnn9_supports(v("11.4"))); // cuDNN 9.0-9.4
    EXPECT_TRUE(m().cudnn9_supports(v("11.8")));
    EXPECT_TRUE(m().cudnn9_supports(v("12.4")));
    EXPECT_TRUE(m().cudnn9_supports(v("13.0")));
    EXPECT_FALSE(m().cudnn9_supports(v("14.0")));
}

TEST(Matrix, Cudnn9On117StopsAt94) {
    const auto fit = m().cudnn9_for(v("9"), v("11.7"));
    EXPECT_EQ(fit.kind, Cudnn9Fit::Kind::supported);
    ASSERT_TRUE(fit.newest_minor.has_value());
    EXPECT_EQ(fit.newest_minor->str(), "9.4");
    // 11.8 is served by the cuda-11 packages of every minor that builds them: no cap.
    EXPECT_FALSE(m().cudnn9_for(v("9"), v("11.8")).newest_minor.has_value());
    EXPECT_FALSE(m().cudnn9_for(v("9"), v("12.0")).newest_minor.has_value());
}

TEST(Matrix, Cudnn917HasNoCuda11AndAddsCuda13) {
    auto fit = m().cudnn9_for(v("9.17"), v("11.8"));
    EXPECT_EQ(fit.kind, Cudnn9Fit::Kind::unsupported);
    EXPECT_NE(fit.message.find("cuDNN 9.17 has no build for CUDA 11.8"), std::string::npos)
        << fit.message;
    EXPECT_NE(fit.message.find("9.5-9.10"), std::string::npos) << fit.message;
    EXPECT_EQ(m().cudnn9_for(v("9.17"), v("13.0")).kind, Cudnn9Fit::Kind::supported);
    EXPECT_EQ(m().cudnn9_for(v("9.17"), v("12.4")).kind, Cudnn9Fit::Kind::supported);
    // 9.10 has no CUDA 13 build; 9.2 needs CUDA 11.4 or newer.
    EXPECT_EQ(m().cudnn9_for(v("9.10"), v("13.0")).kind, Cudnn9Fit::Kind::unsupported);
    EXPECT_EQ(m().cudnn9_for(v("9.2"), v("11.3")).kind, Cudnn9Fit::Kind::unsupported);
    EXPECT_EQ(m().cudnn9_for(v("9.2"), v("11.4")).kind, Cudnn9Fit::Kind::supported);
    EXPECT_EQ(m().cudnn9_for(v("9.5"), v("11.7")).kind, Cudnn9Fit::Kind::unsupported);
}

TEST(Matrix, Cudnn9UnconfirmedMinorsLeaveItToTheRepository) {
    auto fit = m().cudnn9_for(v("9.12"), v("13.0"));
    EXPECT_EQ(fit.kind, Cudnn9Fit::Kind::unconfirmed);
    EXPECT_NE(fit.message.find("not confirmed"), std::string::npos) << fit.message;
    fit = m().cudnn9_for(v("9.40"), v("12.4"));
    EXPECT_EQ(fit.kind, Cudnn9Fit::Kind::unconfirmed);
    EXPECT_NE(fit.message.find("newer than gpuprov's version matrix"), std::string::npos);
}

TEST(Matrix, Cuda133HasItsPublishedDriver) {
    const auto* c = m().cuda(v("13.3"));
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c->confirmed);
    EXPECT_EQ(c->min_driver.str(), "610.43.02");
    EXPECT_EQ(c->driver_branch, 610);
}

TEST(Matrix, MinorVersionCompatFloorsPerMajor) {
    ASSERT_NE(m().minor_version_compat(11), nullptr);
    EXPECT_EQ(m().minor_version_compat(11)->min_driver.str(), "450.80.02");
    EXPECT_EQ(m().minor_version_compat(12)->min_driver.str(), "525.60.13");
    EXPECT_EQ(m().minor_version_compat(13)->min_driver.str(), "580.65.06");
    EXPECT_EQ(m().minor_version_compat(10), nullptr);
}

TEST(Matrix, R535RunsCuda124UnderMinorVersionCompatibility) {
    const auto fit = m().driver_runs_cuda(535, std::nullopt, *m().cuda(v("12.4")), true);
    EXPECT_EQ(fit.kind, DriverCudaFit::Kind::minor_compat);
    EXPECT_NE(fit.note.find("minor version compatibility: CUDA 12.4"), std::string::npos)
        << fit.note;
    EXPECT_NE(fit.note.find("525.60.13"), std::string::npos) << fit.note;
    EXPECT_NE(fit.note.find("PTX JIT"), std::string::npos) << fit.note;
    EXPECT_NE(fit.note.find("550.54.14 (branch 550)"), std::string::npos) << fit.note;
}

TEST(Matrix, R580RunsCuda132UnderMinorVersionCompatibility) {
    const auto fit = m().driver_runs_cuda(580, std::nullopt, *m().cuda(v("13.2")), true);
    EXPECT_EQ(fit.kind, DriverCudaFit::Kind::minor_compat);
    EXPECT_NE(fit.note.find("580.65.06"), std::string::npos) << fit.note;
    EXPECT_NE(fit.note.find("595.45.04 (branch 595)"), std::string::npos) << fit.note;
    EXPECT_EQ(m().driver_runs_cuda(595, std::nullopt, *m().cuda(v("13.2")), true).kind,
              DriverCudaFit::Kind::toolkit_driver);
}

TEST(Matrix, BelowTheMajorsFloorNothingRunsButForwardCompatIsNamed) {
    auto fit = m().driver_runs_cuda(550, std::nullopt, *m().cuda(v("13.0")), true);
    EXPECT_EQ(fit.kind, DriverCudaFit::Kind::too_old);
    EXPECT_NE(fit.note.find("cuda-compat-13-0"), std::string::npos) << fit.note;
    fit = m().driver_runs_cuda(550, std::nullopt, *m().cuda(v("13.0")), false);
    EXPECT_EQ(fit.note.find("cuda-compat"), std::string::npos) << fit.note;
    // An exact driver just below the floor is refused, one at it runs.
    EXPECT_EQ(m().driver_runs_cuda(525, v("525.60.12"), *m().cuda(v("12.4")), true).kind,
              DriverCudaFit::Kind::too_old);
    EXPECT_EQ(m().driver_runs_cuda(525, v("525.60.13"), *m().cuda(v("12.4")), true).kind,
              DriverCudaFit::Kind::minor_compat);
    EXPECT_EQ(m().driver_runs_cuda(450, v("450.80.02"), *m().cuda(v("11.8")), true).kind,
              DriverCudaFit::Kind::minor_compat);
    EXPECT_EQ(m().driver_runs_cuda(450, v("450.51.06"), *m().cuda(v("11.8")), true).kind,
              DriverCudaFit::Kind::too_old);
}

TEST(Matrix, ForwardCompatPackageName) {
    EXPECT_EQ(m().forward_compat_package(v("12.4")), "cuda-compat-12-4");
    EXPECT_EQ(m().forward_compat_package(v("13.0")), "cuda-compat-13-0");
}

TEST(Matrix, DriverBranchLifecycle) {
    const auto* r535 = m().driver_branch(535);
    ASSERT_NE(r535, nullptr);
    EXPECT_EQ(r535->type, "ltsb");
    EXPECT_EQ(r535->eol, "2026-06");
    EXPECT_EQ(m().driver_branch(580)->type_name(), "Long Term Support Branch");
    EXPECT_EQ(m().driver_branch(595)->type, "production");
    EXPECT_EQ(m().driver_branch(610)->type, "new-feature");
    EXPECT_EQ(m().branch_lifecycle(580, "2026-12"),
              "R580: Long Term Support Branch, end of life June 2028");
    EXPECT_EQ(m().branch_lifecycle(535, "2026-12"),
              "R535: Long Term Support Branch, end of life June 2026, which has passed: it gets "
              "no more fixes, choose a supported branch");
    EXPECT_NE(m().branch_lifecycle(550, "2026-12").find("past its end of life"), std::string::npos);
    EXPECT_EQ(m().branch_lifecycle(999, "2026-12"), "");
    EXPECT_EQ(m().open_modules_since(), 515);
}

TEST(Matrix, NewFeatureBranchesHaveNoEndOfLifeDate) {
    // R590 and R615: New Feature Branches, which NVIDIA gives no end-of-life date.
    for (const int branch : {590, 615}) {
        const auto* info = m().driver_branch(branch);
        ASSERT_NE(info, nullptr) << branch;
        EXPECT_EQ(info->type, "new-feature");
        EXPECT_EQ(info->eol, "none");
    }
    EXPECT_EQ(m().branch_lifecycle(615, "2026-12"),
              "R615: New Feature Branch, no end-of-life date: NVIDIA fixes a new feature branch "
              "only until the next branch ships; for fixes over years choose a production or "
              "long term support branch");
    EXPECT_EQ(m().branch_lifecycle(620, "2026-12"),
              "R620: Long Term Support Branch, end of life September 2029");
    // Every branch a CUDA release names has a lifecycle row.
    for (const auto& c : m().cuda_releases()) {
        if (c.driver_branch >= 580) {
            EXPECT_NE(m().driver_branch(c.driver_branch), nullptr) << c.driver_branch;
        }
    }
}

TEST(Matrix, ArchitecturesCarryTheirDriverBranches) {
    EXPECT_EQ(m().architecture("hopper")->first_branch, 520);
    EXPECT_EQ(m().architecture("blackwell")->first_branch, 570);
    EXPECT_EQ(m().architecture("volta")->last_branch, 580);
    EXPECT_EQ(m().architecture("pascal")->last_branch, 580);
    EXPECT_EQ(m().architecture("maxwell")->last_branch, 580);
    EXPECT_FALSE(m().architecture("hopper")->last_branch.has_value());
}

TEST(Matrix, A10NeedsCuda111ForComputeCapability86) {
    const auto* a10 = m().gpu_by_device(0x2236);
    ASSERT_NE(a10, nullptr);
    EXPECT_EQ(m().min_cuda_for(*a10).str(), "11.1");
    EXPECT_EQ(m().min_cuda_for(*m().gpu_by_device(0x2237)).str(), "11.1"); // A10G
    EXPECT_EQ(m().min_cuda_for(*m().gpu_by_device(0x20B2)).str(), "11.0"); // A100, cc 8.0
    EXPECT_EQ(m().min_cuda_for(*m().gpu_by_device(0x2330)).str(), "11.8");
}

TEST(Matrix, CommonDeviceIdsFromPciIds) {
    const auto* h100 = m().gpu_by_device(0x2339);
    ASSERT_NE(h100, nullptr);
    EXPECT_EQ(h100->model, "H100");
    EXPECT_EQ(h100->memory_gib, 94);
    const auto* b200 = m().gpu_by_device(0x2909);
    ASSERT_NE(b200, nullptr);
    EXPECT_EQ(b200->model, "B200");
    EXPECT_EQ(b200->architecture, "blackwell");
    EXPECT_TRUE(b200->nvswitch);
    EXPECT_TRUE(b200->smi_name.empty()); // no nvidia-smi output seen for this id
}

TEST(Matrix, OpenEndedReposCarryNewerReleases) {
    // cuda_max is only set where NVIDIA stopped adding releases (ubuntu2004).
    for (const char* slug : {"ubuntu2204", "ubuntu2404", "debian12", "rhel8", "rhel9"}) {
        const auto* d = m().distro(slug);
        ASSERT_NE(d, nullptr) << slug;
        EXPECT_FALSE(d->cuda_max.has_value()) << slug;
        EXPECT_TRUE(d->carries(v("13.4"))) << slug;
    }
    EXPECT_FALSE(m().distro("rhel9")->carries(v("11.6")));
    EXPECT_TRUE(m().distro("rhel9")->carries(v("11.7")));
}

TEST(Matrix, ContainerToolkitKey) {
    EXPECT_EQ(m().container_key_fingerprint(), "C95B321B61E88C1809C4F759DDCAE044F796ECB0");
}

TEST(Matrix, BuiltinIsParsedOnce) {
    EXPECT_EQ(&Matrix::builtin(), &Matrix::builtin());
}

// A minimal valid document; the error tests below break one thing each.
const std::string k_small = R"(schema: 1
cuda:
  - {version: "12.4", min_driver: "550.54.14", branch: 550}
distros: []
cudnn8: []
cudnn9: []
architectures:
  - {name: hopper, min_cuda: "11.8"}
gpus:
  - {device_id: "0x2330", model: H100, name: H100 SXM5 80GB, smi_name: x, architecture: hopper,
     compute_capability: "9.0", memory_gib: 80, nvswitch: true}
container_toolkit: {key_fingerprint: C95B321B61E88C1809C4F759DDCAE044F796ECB0}
minor_version_compat: [{cuda_major: 12, min_driver: "525.60.13"}]
forward_compat: {package: "cuda-compat-{major}-{minor}"}
driver_branches: {open_modules_since: 515, branches: [{branch: 535, type: ltsb, eol: "2026-06"}]}
compute_capabilities: [{cc: "8.6", min_cuda: "11.1"}]
)";

ProfileError parse_error(const std::string& yaml) {
    try {
        (void)Matrix::parse(yaml, "test.yaml");
    } catch (const ProfileError& e) {
        return e;
    }
    ADD_FAILURE() << "no ProfileError for:\n" << yaml;
    return ProfileError("", 0, 0, "");
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
}

TEST(MatrixParse, SmallDocumentParses) {
    const auto small = Matrix::parse(k_small, "test.yaml");
    ASSERT_NE(small.gpu_by_device(0x2330), nullptr);
    EXPECT_TRUE(small.gpu_by_device(0x2330)->nvswitch);
    EXPECT_EQ(small.cuda_releases().size(), 1U);
}

// ---- Kubernetes device plugin (matrix `kubernetes`) ----

TEST(MatrixDevicePlugin, NewestReleaseValidatedWithTheBranchIsPicked) {
    EXPECT_EQ(m().device_plugin_image(), "nvcr.io/nvidia/k8s-device-plugin");
    EXPECT_EQ(m().device_plugin_min_toolkit(), "1.7.0");
    const auto r580 = m().device_plugin_for(580);
    ASSERT_NE(r580.release, nullptr);
    EXPECT_TRUE(r580.validated);
    EXPECT_EQ(r580.release->version, "v0.19.0");
    EXPECT_EQ(r580.release->gpu_operator, "v26.3.1");
    // 535 is in both GPU Operator releases: the newer device plugin wins.
    EXPECT_EQ(m().device_plugin_for(535).release->version, "v0.19.0");
    // 550 left the component matrix with GPU Operator 25.x: the release that still lists it.
    const auto r550 = m().device_plugin_for(550);
    ASSERT_NE(r550.release, nullptr);
    EXPECT_TRUE(r550.validated);
    EXPECT_EQ(r550.release->version, "v0.16.2");
}

TEST(MatrixDevicePlugin, R610GetsTheGpuOperator267Release) {
    // GPU Operator 26.7.0 ships device plugin v0.20.0 and 26.3.3 v0.19.3, both validated with
    // R610; each row names the Operator release it came from.
    const auto r610 = m().device_plugin_for(610);
    ASSERT_NE(r610.release, nullptr);
    EXPECT_TRUE(r610.validated);
    EXPECT_EQ(r610.release->version, "v0.20.0");
    EXPECT_EQ(r610.release->gpu_operator, "v26.7.0");
    const auto& all = m().device_plugin_releases();
    ASSERT_GE(all.size(), 4U);
    EXPECT_EQ(all[1].version, "v0.19.3");
    EXPECT_EQ(all[1].gpu_operator, "v26.3.3");
    for (const auto& rel : all) {
        EXPECT_EQ(rel.gpu_operator.front(), 'v') << rel.version;
    }
    // R620: no GPU Operator row lists it yet, so the newest release, unvalidated.
    const auto r620 = m().device_plugin_for(620);
    ASSERT_NE(r620.release, nullptr);
    EXPECT_EQ(r620.release->version, "v0.20.0");
    EXPECT_FALSE(r620.validated);
}

TEST(MatrixDevicePlugin, UnlistedBranchGetsTheNewestUnvalidated) {
    for (const std::optional<int> branch : {std::optional<int>{620}, std::optional<int>{}}) {
        const auto pick = m().device_plugin_for(branch);
        ASSERT_NE(pick.release, nullptr);
        EXPECT_FALSE(pick.validated);
        EXPECT_EQ(pick.release, &m().device_plugin_releases().front());
    }
    EXPECT_EQ(Matrix::parse(k_small, "test.yaml").device_plugin_for(580).release, nullptr);
}

TEST(MatrixParse, EolNoneIsForNewFeatureBranchesOnly) {
    const auto with = [](const std::string& row) {
        return replaced(k_small, "eol: \"2026-06\"}]", "eol: \"2026-06\"}, " + row + "]");
    };
    const auto ok = Matrix::parse(with("{branch: 615, type: new-feature, eol: none}"), "test.yaml");
    ASSERT_NE(ok.driver_branch(615), nullptr);
    EXPECT_EQ(ok.driver_branch(615)->eol, "none");
    auto e = parse_error(with("{branch: 615, type: production, eol: none}"));
    EXPECT_NE(e.message().find("'eol: none' is for a new-feature branch only"), std::string::npos)
        << e.what();
    e = parse_error(with("{branch: 615, eol: none}"));
    EXPECT_NE(e.message().find("'eol: none' is for a new-feature branch only"), std::string::npos)
        << e.what();
    e = parse_error(with("{branch: 615, type: new-feature, eol: soon}"));
    EXPECT_NE(e.message().find("ended, or none"), std::string::npos) << e.what();
}

TEST(MatrixParse, DockerUnpublishedIsTheReasonInsteadOfARepository) {
    const std::string row = "distros:\n  - {slug: ubuntu2004, os: ubuntu-20.04, family: debian, "
                            "cuda_min: \"11.0\", key_file: 3bf863cc.pub";
    const std::string docker = "docker: {url: https://download.docker.com/linux/ubuntu, suite: "
                               "focal, key_url: https://download.docker.com/linux/ubuntu/gpg, "
                               "key_fingerprint: 9DC858229FC7DD38854AE2D88D81803C0EBFCD88}";
    const auto ok = Matrix::parse(
        replaced(k_small, "distros: []", row + ", docker_unpublished: \"Docker stopped\"}"),
        "test.yaml");
    ASSERT_NE(ok.distro("ubuntu2004"), nullptr);
    EXPECT_FALSE(ok.distro("ubuntu2004")->docker.has_value());
    EXPECT_EQ(ok.distro("ubuntu2004")->docker_unpublished, "Docker stopped");
    const auto e = parse_error(
        replaced(k_small, "distros: []", row + ", " + docker + ", docker_unpublished: gone}"));
    EXPECT_NE(e.message().find("not both"), std::string::npos) << e.what();
    // The shipped matrix says it for focal, where Docker stopped publishing.
    EXPECT_FALSE(Matrix::builtin().distro("ubuntu2004")->docker.has_value());
    EXPECT_NE(Matrix::builtin().distro("ubuntu2004")->docker_unpublished.find("Ubuntu 20.04"),
              std::string::npos);
}

TEST(MatrixParse, DevicePluginRowsAreChecked) {
    const std::string table =
        "kubernetes:\n  device_plugin:\n    image: nvcr.io/nvidia/k8s-device-plugin\n"
        "    min_container_toolkit: \"1.7.0\"\n    releases:\n"
        "      - {version: v0.19.0, gpu_operator: v26.3.1, driver_branches: [580]}\n"
        "      - {version: v0.16.2, gpu_operator: v24.6.1, driver_branches: [550]}\n";
    const auto ok = Matrix::parse(k_small + table, "test.yaml");
    ASSERT_EQ(ok.device_plugin_releases().size(), 2U);
    EXPECT_EQ(ok.device_plugin_for(550).release->version, "v0.16.2");

    auto e = parse_error(k_small +
                         replaced(table, "k8s-device-plugin\n", "k8s-device-plugin:v0.19.0\n"));
    EXPECT_NE(e.message().find("without a tag"), std::string::npos) << e.what();
    e = parse_error(k_small + replaced(table, "version: v0.19.0", "version: 0.19.0"));
    EXPECT_NE(e.message().find("v<major>.<minor>.<patch>"), std::string::npos) << e.what();
    // The first release row: the table's sixth line.
    EXPECT_EQ(e.line(), std::count(k_small.begin(), k_small.end(), '\n') + 6);
    e = parse_error(k_small + replaced(table, "version: v0.16.2", "version: v0.20.0"));
    EXPECT_NE(e.message().find("newest first"), std::string::npos) << e.what();
    e = parse_error(k_small + replaced(table, "driver_branches: [580]", "driver_branches: []"));
    EXPECT_NE(e.message().find("at least one driver branch"), std::string::npos) << e.what();
    e = parse_error(k_small + replaced(table, "driver_branches: [580]", "driver_branches: [R580]"));
    EXPECT_NE(e.message().find("'driver_branches' must be an integer"), std::string::npos)
        << e.what();
    e = parse_error(k_small + replaced(table, "gpu_operator: v26.3.1,", "operator: v26.3.1,"));
    EXPECT_NE(e.message().find("unknown key 'operator'"), std::string::npos) << e.what();
}

TEST(MatrixParse, BadVersionNamesFileLineAndColumn) {
    const auto e = parse_error(replaced(k_small, "\"550.54.14\"", "\"550.x\""));
    EXPECT_EQ(e.file(), "test.yaml");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.col(), 35);
    EXPECT_NE(e.message().find("dotted version"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("test.yaml:3:35: ", 0), 0U) << e.what();
}

TEST(MatrixParse, SyntaxErrorHasItsLine) {
    const auto e = parse_error(replaced(k_small, "distros: []", "distros: [\n"));
    EXPECT_GE(e.line(), 4);
    EXPECT_NE(e.message().find("YAML syntax error"), std::string::npos) << e.what();
}

TEST(MatrixParse, UnknownKeyIsRefused) {
    const auto e = parse_error(replaced(k_small, "branch: 550", "branhc: 550"));
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.message().find("unknown key 'branhc'"), std::string::npos) << e.what();
}

TEST(MatrixParse, MinDriverOffItsBranchIsRefused) {
    const auto e = parse_error(replaced(k_small, "branch: 550", "branch: 535"));
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.message().find("not on branch 535"), std::string::npos) << e.what();
}

TEST(MatrixParse, GpuWithUnknownArchitectureIsRefused) {
    const auto e = parse_error(replaced(k_small, "architecture: hopper", "architecture: hoper"));
    EXPECT_EQ(e.line(), 10);
    EXPECT_NE(e.message().find("hoper"), std::string::npos) << e.what();
}

TEST(MatrixParse, MissingTableIsRefused) {
    const auto e = parse_error(replaced(k_small, "cudnn8: []\n", ""));
    EXPECT_NE(e.message().find("missing required key 'cudnn8'"), std::string::npos) << e.what();
}

TEST(MatrixParse, BadBranchTypeAndEolAreRefused) {
    auto e = parse_error(replaced(k_small, "type: ltsb", "type: lts"));
    EXPECT_EQ(e.line(), 15);
    EXPECT_NE(e.message().find("ltsb, production or new-feature"), std::string::npos) << e.what();
    e = parse_error(replaced(k_small, "eol: \"2026-06\"", "eol: June 2026"));
    EXPECT_NE(e.message().find("year-month"), std::string::npos) << e.what();
}

TEST(MatrixParse, Cudnn8ServesMustStayInsideItsMajor) {
    const auto doc = replaced(k_small, "cudnn8: []",
                              "cudnn8: [{version: \"8.9.7.29\", cuda: [\"12.2\"], serves: "
                              "{\"12.2\": \"11.8\"}}]");
    const auto e = parse_error(doc);
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(e.message().find("can only serve CUDA 12.x"), std::string::npos) << e.what();
}

TEST(MatrixParse, Cudnn9RowsMustNotOverlap) {
    const auto doc = replaced(k_small, "cudnn9: []",
                              "cudnn9: [{first: \"9.0\", last: \"9.4\", cuda: {12: \"12.0\"}}, "
                              "{first: \"9.3\", last: \"9.6\", cuda: {12: \"12.0\"}}]");
    const auto e = parse_error(doc);
    EXPECT_NE(e.message().find("must not overlap"), std::string::npos) << e.what();
}

TEST(MatrixParse, ForwardCompatPackageNeedsPlaceholders) {
    const auto e = parse_error(replaced(k_small, "cuda-compat-{major}-{minor}", "cuda-compat"));
    EXPECT_NE(e.message().find("{major} and {minor}"), std::string::npos) << e.what();
}

TEST(MatrixParse, BadFingerprintIsRefused) {
    const auto e = parse_error(replaced(k_small, "C95B321B61E88C1809C4F759DDCAE044F796ECB0",
                                        "C95B321B61E88C1809C4F759DDCAE044F796ECB"));
    EXPECT_EQ(e.line(), 12);
    EXPECT_NE(e.message().find("40 upper-case hex"), std::string::npos) << e.what();
}

TEST(Matrix, TensorrtLinesCarryTheLockstepSets) {
    const auto* ten = m().tensorrt(10);
    ASSERT_NE(ten, nullptr);
    EXPECT_EQ(ten->soname, "libnvinfer.so.10");
    EXPECT_EQ(ten->cuda_majors, (std::vector<int>{11, 12, 13}));
    for (const char* p : {"tensorrt", "libnvinfer10", "libnvinfer-plugin10", "libnvinfer-lean10",
                          "libnvinfer-dispatch10", "libnvonnxparsers10", "libnvinfer-bin"}) {
        EXPECT_NE(std::find(ten->deb.begin(), ten->deb.end(), p), ten->deb.end()) << p;
        EXPECT_NE(std::find(ten->rpm.begin(), ten->rpm.end(), p), ten->rpm.end()) << p;
    }
    const auto* eight = m().tensorrt(8);
    ASSERT_NE(eight, nullptr);
    EXPECT_FALSE(eight->confirmed);
    EXPECT_EQ(m().tensorrt(9), nullptr);
}

TEST(Matrix, Tensorrt11IsTheLibnvinfer11Set) {
    // TensorRT 11 in NVIDIA's CUDA repos: libnvinfer11 and its siblings, builds for CUDA 12.9
    // and 13.x, and no plain `tensorrt` meta package.
    const auto* eleven = m().tensorrt(11);
    ASSERT_NE(eleven, nullptr);
    EXPECT_EQ(eleven->soname, "libnvinfer.so.11");
    EXPECT_EQ(eleven->cuda_majors, (std::vector<int>{12, 13}));
    EXPECT_EQ(eleven->deb, (std::vector<std::string>{"libnvinfer11", "libnvinfer-plugin11",
                                                     "libnvinfer-vc-plugin11", "libnvinfer-lean11",
                                                     "libnvinfer-dispatch11", "libnvonnxparsers11",
                                                     "libnvinfer-bin"}));
    for (const auto& p : eleven->deb) {
        EXPECT_EQ(p.find("10"), std::string::npos) << p;
    }
}

TEST(MatrixParse, TensorrtRowsAreChecked) {
    const std::string row = "tensorrt:\n  - {major: 10, soname: libnvinfer.so.10, cuda: [12], "
                            "deb: [libnvinfer10], rpm: [libnvinfer10]}\n";
    const auto ok = Matrix::parse(k_small + row, "test.yaml");
    ASSERT_NE(ok.tensorrt(10), nullptr);
    EXPECT_EQ(ok.tensorrt(10)->deb, std::vector<std::string>{"libnvinfer10"});

    auto e = parse_error(k_small + replaced(row, "libnvinfer.so.10", "libnvinfer.so.8"));
    EXPECT_NE(e.message().find("TensorRT 10's soname is libnvinfer.so.10"), std::string::npos)
        << e.what();
    e = parse_error(k_small + replaced(row, "deb: [libnvinfer10]", "deb: []"));
    EXPECT_NE(e.message().find("'deb' must name at least one package"), std::string::npos)
        << e.what();
    e = parse_error(k_small + row +
                    "  - {major: 10, soname: libnvinfer.so.10, cuda: [12], "
                    "deb: [a], rpm: [a]}\n");
    EXPECT_NE(e.message().find("TensorRT 10 listed twice"), std::string::npos) << e.what();
    e = parse_error(k_small + replaced(row, "cuda: [12]", "cuda: [12], hold: true"));
    EXPECT_NE(e.message().find("unknown key 'hold'"), std::string::npos) << e.what();
}

} // namespace
// ---- package names per family (the data file's `packages`) ----

TEST(MatrixPackages, RpmNamesAndTheDriversModuleStreamsFromTheDataFile) {
    const auto& m = Matrix::builtin();
    const auto* rhel = m.package_names("rhel");
    ASSERT_NE(rhel, nullptr);
    ASSERT_TRUE(rhel->driver);
    const PackageVars v{.branch = "580", .cuda = "12.4", .arch = "x86_64", .pkgarch = "x86_64"};
    EXPECT_EQ(expand_package_name(rhel->driver->streams.at("open"), v), "580-open");
    EXPECT_EQ(expand_package_name(rhel->driver->streams.at("proprietary"), v), "580-dkms");
    EXPECT_EQ(rhel->driver->packages.at("open"),
              (std::vector<std::string>{"nvidia-open", "kmod-nvidia-open-dkms"}));
    EXPECT_EQ(expand_package_names(rhel->nccl.packages, v),
              (std::vector<std::string>{"libnccl", "libnccl-devel"}));
    EXPECT_EQ(expand_package_name(rhel->nccl.release, v), "+cuda12.4");
    EXPECT_EQ(expand_package_name(rhel->cudnn8.release, v), "-1.cuda12.4");
    EXPECT_EQ(expand_package_names(rhel->cudnn9, v),
              (std::vector<std::string>{"libcudnn9-cuda-12", "libcudnn9-devel-cuda-12"}));
    EXPECT_EQ(expand_package_name(rhel->cuda_toolkit, v), "cuda-toolkit-12-4");
    // NVIDIA's rpm names: nvidia-fabric-manager before R580, nvidia-fabricmanager from it.
    EXPECT_EQ(rhel->fabric_manager_for(580),
              (std::vector<std::string>{"nvidia-fabricmanager", "libnvidia-nscq"}));
    EXPECT_EQ(rhel->fabric_manager_for(570),
              (std::vector<std::string>{"nvidia-fabric-manager", "libnvidia-nscq-570"}));
    EXPECT_EQ(expand_package_name(rhel->container_repo_path, v), "stable/rpm/x86_64/");
    // On Grace (aarch64) the CUDA repositories say sbsa; the toolkit's say aarch64 and arm64.
    EXPECT_EQ(
        expand_package_name(rhel->container_repo_path, {.arch = "sbsa", .pkgarch = "aarch64"}),
        "stable/rpm/aarch64/");
    const auto* deb = m.package_names("debian");
    ASSERT_NE(deb, nullptr);
    EXPECT_EQ(expand_package_name(deb->container_repo_path, {.arch = "sbsa", .pkgarch = "arm64"}),
              "stable/deb/arm64/");
    EXPECT_FALSE(deb->driver); // the module stream driver is the rhel family's
    EXPECT_FALSE(rhel->apt_driver);
    EXPECT_EQ(deb->fabric_manager_for(570),
              (std::vector<std::string>{"nvidia-fabricmanager-570", "libnvidia-nscq-570"}));
    // apt from R580: IMEX too, and nvidia-modprobe, which IMEX needs at any version (apt alone
    // takes the newest branch's where no pin steers it).
    EXPECT_EQ(deb->fabric_manager_for(610),
              (std::vector<std::string>{"nvidia-fabricmanager", "libnvidia-nscq", "nvidia-imex",
                                        "nvidia-modprobe"}));
    // IMEX (fabric.imex): nvidia-imex-<b> from 550, unsuffixed from 580 (nvidia-modprobe beside
    // it on apt); none before 550, where NVIDIA published no IMEX.
    EXPECT_EQ(deb->imex_for(610), (std::vector<std::string>{"nvidia-imex", "nvidia-modprobe"}));
    EXPECT_EQ(deb->imex_for(570), (std::vector<std::string>{"nvidia-imex-570"}));
    EXPECT_TRUE(deb->imex_for(535).empty());
    EXPECT_EQ(deb->fabric_manager_for(535),
              (std::vector<std::string>{"nvidia-fabricmanager-535", "libnvidia-nscq-535"}));
    EXPECT_EQ(rhel->imex_for(595), (std::vector<std::string>{"nvidia-imex"}));
    EXPECT_EQ(rhel->imex_for(550), (std::vector<std::string>{"nvidia-imex-550"}));
    EXPECT_EQ(expand_package_names(deb->cudnn9, v),
              (std::vector<std::string>{"libcudnn9-cuda-12", "libcudnn9-dev-cuda-12"}));
    EXPECT_EQ(expand_package_name(deb->cudnn8.release, v), "-1+cuda12.4");
    EXPECT_EQ(m.package_names("suse"), nullptr);
}

TEST(MatrixPackages, BadEntriesNameTheLineAndTheRule) {
    const std::string names = R"(packages:
  rhel:
    cuda_toolkit: "cuda-toolkit-{cuda_dash}"
    cudnn9: [libcudnn9-cuda-12]
    cudnn8: {packages: [libcudnn8], release: "-1.cuda{cuda}"}
    nccl: {packages: [libnccl], release: "+cuda{cuda}"}
    fabric_manager:
      - {max_branch: 575, packages: ["nvidia-fabric-manager"]}
      - {min_branch: 580, packages: [nvidia-fabricmanager]}
    container_toolkit: {packages: [nvidia-container-toolkit], repo_path: "stable/rpm/{arch}/"}
)";
    EXPECT_NO_THROW((void)Matrix::parse(k_small + names, "test.yaml"));
    const auto release = parse_error(k_small + replaced(names, "+cuda{cuda}", "+cuda"));
    EXPECT_NE(std::string(release.what()).find("must contain {cuda}"), std::string::npos)
        << release.what();
    const auto range = parse_error(
        k_small + replaced(names, "{min_branch: 580,", "{min_branch: 580, max_branch: 570,"));
    EXPECT_NE(std::string(range.what()).find("'min_branch' is above 'max_branch'"),
              std::string::npos)
        << range.what();
    const auto family = parse_error(k_small + replaced(names, "  rhel:", "  suse:"));
    EXPECT_NE(std::string(family.what()).find("expected one of: debian, rhel"), std::string::npos)
        << family.what();
    const auto empty = parse_error(k_small + replaced(names, "[libcudnn9-cuda-12]", "[]"));
    EXPECT_NE(std::string(empty.what()).find("at least one package"), std::string::npos)
        << empty.what();
}

// NVIDIA's two apt naming schemes (nvidia-repos-2026.md §A1): Ubuntu drops the branch from
// the package names at R590 and selects it with a pinning package; Debian pins from R570.
TEST(MatrixPackages, AptDriverSchemePerOsAndBranch) {
    const auto* deb = Matrix::builtin().package_names("debian");
    ASSERT_NE(deb, nullptr);
    ASSERT_TRUE(deb->apt_driver);
    const auto& d = *deb->apt_driver;
    const auto* u580 = d.scheme_for("ubuntu", 580);
    ASSERT_NE(u580, nullptr);
    EXPECT_EQ(u580->name, "suffixed");
    EXPECT_EQ(u580->lock, BranchLock::hold);
    EXPECT_EQ(expand_package_names(u580->packages.at("open"), {.branch = "580"}),
              (std::vector<std::string>{"nvidia-open-580"}));
    EXPECT_EQ(u580->open_since, 560);
    const auto* u595 = d.scheme_for("ubuntu", 595);
    ASSERT_NE(u595, nullptr);
    EXPECT_EQ(u595->name, "pinned");
    EXPECT_EQ(u595->lock, BranchLock::pin);
    EXPECT_EQ(u595->packages.at("proprietary"), (std::vector<std::string>{"cuda-drivers"}));
    EXPECT_EQ(d.scheme_for("ubuntu", 585), nullptr); // no branch between 580 and 590
    EXPECT_EQ(d.scheme_for("debian", 580)->name, "pinned");
    EXPECT_EQ(d.scheme_for("debian", 570)->name, "pinned");
    // debian12 has no nvidia-driver-pinning-575 ([C17]): 575 keeps its branch meta.
    EXPECT_EQ(d.scheme_for("debian", 575)->name, "suffixed");
    EXPECT_EQ(d.scheme_for("debian", 550)->name, "suffixed");
    EXPECT_EQ(d.scheme_for("linuxmint", 580), nullptr);
    EXPECT_EQ(expand_package_name(d.pinning_branch, {.branch = "610"}),
              "nvidia-driver-pinning-610");
    EXPECT_EQ(expand_package_name(d.pinning_version, {.version = "595.71.05"}),
              "nvidia-driver-pinning-595.71.05");
}

} // namespace gpuprov

namespace gpuprov {
namespace {

TEST(MatrixParse, DockerRepositoryPerDistro) {
    const std::string row =
        "distros:\n"
        "  - {slug: debian12, os: debian-12, family: debian, cuda_min: \"12.3\",\n"
        "     key_file: 3bf863cc.pub,\n"
        "     key_fingerprint: EB693B3035CD5710E231E123A4B469963BF863CC,\n"
        "     docker: {url: \"https://download.docker.com/linux/debian\",\n"
        "              suite: bookworm,\n"
        "              key_url: \"https://download.docker.com/linux/debian/gpg\",\n"
        "              key_fingerprint: 9DC858229FC7DD38854AE2D88D81803C0EBFCD88}}\n";
    const auto m = Matrix::parse(replaced(k_small, "distros: []\n", row), "test.yaml");
    const auto* d = m.distro("debian12");
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(d->docker.has_value());
    EXPECT_EQ(d->docker->suite, "bookworm");
    EXPECT_EQ(d->docker->key_fingerprint, "9DC858229FC7DD38854AE2D88D81803C0EBFCD88");
    // apt needs the suite; the URL must be Docker's own.
    auto e = parse_error(
        replaced(k_small, "distros: []\n", replaced(row, "              suite: bookworm,\n", "")));
    EXPECT_NE(e.message().find("missing required key 'suite'"), std::string::npos) << e.what();
    e = parse_error(replaced(k_small, "distros: []\n",
                             replaced(row, "https://download.docker.com/linux/debian\"",
                                      "https://mirror.example/debian\"")));
    EXPECT_NE(e.message().find("must be Docker's"), std::string::npos) << e.what();
    // The built-in matrix has Docker's repository for every distro it lists, or says why
    // Docker stopped publishing for it (Ubuntu 20.04).
    for (const auto& distro : Matrix::builtin().distros()) {
        EXPECT_NE(distro.docker.has_value(), !distro.docker_unpublished.empty()) << distro.slug;
    }
}

} // namespace
} // namespace gpuprov
