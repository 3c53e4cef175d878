#include "profile_test_support.hpp"

#include <algorithm>
#include <gpuprov/builtin_names.hpp>

namespace gpuprov {
namespace {

TEST(BuiltinProfiles, AllThreeAreCompiledIn) {
    std::vector<std::string> names;
    for (const auto& f : builtin_profiles()) {
        names.emplace_back(f.name);
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"cv-train.yaml", "nlp-infer.yaml", "sci-sim.yaml"}));
}

TEST(BuiltinProfiles, TextByNameAndNoneForAFileOrAPrefix) {
    const auto text = builtin_profile_text("sci-sim");
    ASSERT_TRUE(text.has_value());
    EXPECT_NE(text->find("name: sci-sim"), std::string_view::npos);
    EXPECT_FALSE(builtin_profile_text("sci").has_value());
    EXPECT_FALSE(builtin_profile_text("sci-sim.yaml").has_value());
    EXPECT_FALSE(builtin_profile_text("./cv-train").has_value());
    EXPECT_EQ(builtin_profile_names(),
              (std::vector<std::string>{"cv-train", "nlp-infer", "sci-sim"}));
}

TEST(BuiltinProfiles, CvTrain) {
    const auto p = load_profile("cv-train", Matrix::builtin());
    EXPECT_EQ(p.name, "cv-train");
    EXPECT_EQ(p.source, "builtin:cv-train.yaml");
    EXPECT_TRUE(p.extends_chain.empty());
    ASSERT_TRUE(p.host.gpus.has_value());
    EXPECT_EQ(p.host.gpus->count, 4);
    EXPECT_EQ(p.host.gpus->model, "A100");
    EXPECT_EQ(p.host.gpus->memory_gib, 80);
    EXPECT_EQ(p.host.gpus->interconnect, "nvlink");
    EXPECT_EQ(p.host.memory_gib, 256);
    // Sized as the scenario's 2 TB NVMe (1863 GiB), not 2000 GiB free that it can never have.
    EXPECT_FALSE(p.host.disk.has_value());
    ASSERT_EQ(p.host.disks.size(), 1U);
    EXPECT_EQ(p.host.disks[0].path, "/");
    EXPECT_EQ(p.host.disks[0].size_gib, 1800);
    EXPECT_LT(*p.host.disks[0].size_gib, 1863);
    EXPECT_TRUE(p.host.disks[0].nvme);
    EXPECT_FALSE(p.host.disks[0].free_gib.has_value());
    // CUDA 13.0 is in the ubuntu2404 repo; ubuntu2004's stops at 12.9, so it is not claimed.
    EXPECT_EQ(std::count(p.host.os.begin(), p.host.os.end(), "ubuntu-24.04"), 1);
    EXPECT_EQ(std::count(p.host.os.begin(), p.host.os.end(), "ubuntu-20.04"), 0);
    EXPECT_EQ(std::count(p.host.os.begin(), p.host.os.end(), "debian-12"), 1);
    ASSERT_TRUE(p.driver.has_value());
    // R580, NVIDIA's long-term support branch, with the open modules (the Ampere default).
    EXPECT_EQ(p.driver->branch, "580");
    EXPECT_EQ(p.driver->flavor, "open");
    EXPECT_TRUE(p.driver->hold);
    ASSERT_TRUE(p.cuda.has_value());
    EXPECT_EQ(p.cuda->version, "13.0");
    ASSERT_TRUE(p.cudnn.has_value());
    EXPECT_EQ(p.cudnn->version, "9");
    EXPECT_TRUE(p.nccl);
    ASSERT_TRUE(p.container.has_value());
    EXPECT_TRUE(p.container->toolkit);
    EXPECT_EQ(p.container->runtime, "docker");
    EXPECT_EQ(p.fabric_manager, FabricManagerMode::automatic);
    EXPECT_TRUE(p.tuning.persistence_mode);
    ASSERT_TRUE(p.monitoring.has_value());
    EXPECT_EQ(p.monitoring->textfile_dir, "/var/lib/prometheus/node-exporter");
    ASSERT_EQ(p.repositories.size(), 2U);
    // No pin: NVIDIA's key for the host's distro is resolved per host (resolve_host_repo).
    EXPECT_EQ(p.repositories.at("cuda").key_fingerprint, "");
    EXPECT_EQ(p.repositories.at("cuda").key_url, "");
    EXPECT_EQ(p.repositories.at("container-toolkit").key_fingerprint,
              Matrix::builtin().container_key_fingerprint());
    EXPECT_EQ(p.repositories.at("cuda").url,
              "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/");
}

TEST(BuiltinProfiles, NlpInfer) {
    const auto p = load_profile("nlp-infer", Matrix::builtin());
    EXPECT_EQ(p.host.gpus->count, 2);
    EXPECT_EQ(p.host.gpus->model, "T4");
    EXPECT_EQ(p.host.memory_gib, 64);
    ASSERT_EQ(p.host.disks.size(), 1U);
    EXPECT_EQ(p.host.disks[0].size_gib, 900); // a 1 TB SSD is 931 GiB
    EXPECT_TRUE(p.host.disks[0].ssd);
    EXPECT_FALSE(p.host.disks[0].nvme);
    EXPECT_FALSE(p.nccl);
    EXPECT_EQ(p.cudnn->version, "9");
    ASSERT_TRUE(p.tensorrt); // "TensorRT INT8" in its description
    EXPECT_EQ(p.tensorrt->version, "10");
    EXPECT_TRUE(p.container->toolkit);
    // Every listed distro's repo carries the chosen CUDA.
    const auto cuda = *DottedVersion::parse(p.cuda->version);
    for (const auto& os : p.host.os) {
        const auto* d = Matrix::builtin().distro_by_os(os);
        ASSERT_NE(d, nullptr) << os;
        EXPECT_TRUE(d->carries(cuda)) << os;
    }
    for (const char* os : {"ubuntu-22.04", "ubuntu-24.04", "debian-12"}) {
        EXPECT_EQ(std::count(p.host.os.begin(), p.host.os.end(), os), 1) << os;
    }
    EXPECT_GE(std::stoi(p.driver->branch), Matrix::builtin().cuda(cuda)->driver_branch);
}

TEST(BuiltinProfiles, SciSim) {
    const auto p = load_profile("sci-sim", Matrix::builtin());
    EXPECT_EQ(p.host.gpus->count, 8);
    EXPECT_EQ(p.host.gpus->model, "H100");
    EXPECT_EQ(p.host.memory_gib, 1024);
    EXPECT_EQ(p.driver->branch, "580");
    EXPECT_EQ(p.driver->flavor, "open");
    EXPECT_EQ(p.cuda->version, "13.0");
    EXPECT_FALSE(p.cudnn.has_value());
    EXPECT_TRUE(p.nccl);
    EXPECT_EQ(p.fabric_manager, FabricManagerMode::automatic);
    EXPECT_TRUE(test::contains(p.description, "InfiniBand"));
}

TEST(BuiltinProfiles, EveryListedOsCarriesTheProfilesCuda) {
    for (const auto& f : builtin_profiles()) {
        const auto name = std::string(f.name.substr(0, f.name.size() - 5));
        const auto p = load_profile(name, Matrix::builtin());
        const auto cuda = *DottedVersion::parse(p.cuda->version);
        for (const auto& os : p.host.os) {
            EXPECT_TRUE(Matrix::builtin().distro_by_os(os)->carries(cuda)) << name << " on " << os;
        }
    }
}

TEST(BuiltinProfiles, PositionsPointIntoTheBuiltinFile) {
    const auto p = load_profile("cv-train", Matrix::builtin());
    const auto at = p.pos("cuda.version");
    EXPECT_EQ(at.file, "builtin:cv-train.yaml");
    EXPECT_EQ(at.line, 40);
    EXPECT_EQ(at.col, 17);
    EXPECT_EQ(p.pos("driver").line, 39);
    EXPECT_EQ(p.pos("host.os[1]").col, 22);
    // Unknown paths fall back to the start of the file.
    EXPECT_EQ(p.pos("no.such.key").line, 1);
    EXPECT_EQ(p.pos("no.such.key").file, "builtin:cv-train.yaml");
}

TEST(BuiltinProfiles, LoadsFromAFilePathToo) {
    const auto p = load_profile(test::profile_fixture("good/minimal.yaml"), Matrix::builtin());
    EXPECT_EQ(p.name, "minimal");
    EXPECT_EQ(p.source, test::profile_fixture("good/minimal.yaml"));
}

TEST(BuiltinProfiles, UnknownNameThatIsNoFileIsAnError) {
    try {
        (void)load_profile("cv-trian", Matrix::builtin());
        FAIL() << "expected ProfileError";
    } catch (const ProfileError& e) {
        EXPECT_EQ(e.file(), "cv-trian");
        EXPECT_TRUE(test::contains(e.message(), "built-ins: cv-train, nlp-infer, sci-sim"))
            << e.what();
    }
}

} // namespace
} // namespace gpuprov
