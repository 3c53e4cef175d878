// `gpuprov slurm-gres` and the MIG parsers under it, on real nvidia-smi captures: the Gres= types
// must be the ones slurmd's NVML autodetection reports (gpu_nvml.c), which public job scripts
// confirm (nvidia_h100_80gb_hbm3_1g.10gb, nvidia_a100_3g.39gb).
#include "nvidia_test_util.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/slurm_gres.hpp>
#include <gpuprov/smi_mig.hpp>

namespace gpuprov {
namespace {

using testing::answer_failed;
using testing::answer_ok;
using testing::FakeSystem;
using testing::read_fixture;

std::string fx(const std::string& name) {
    return read_fixture("cmd/nvidia-smi/" + name);
}

Profile profile() {
    return load_profile_text("name: slurm-node\ndriver: {branch: \"580\"}\n", "node.yaml",
                             Matrix::builtin());
}

TEST(SmiList, GpusAndTheirMigDevices) {
    const auto gpus = parse_smi_list(fx("list-590-h200-mig-exporter.txt"));
    ASSERT_EQ(gpus.size(), 1U);
    EXPECT_EQ(gpus[0].index, 0);
    EXPECT_EQ(gpus[0].name, "NVIDIA H200");
    EXPECT_EQ(gpus[0].uuid, "GPU-00000000-0000-0000-0000-000000000000");
    ASSERT_EQ(gpus[0].migs.size(), 5U);
    EXPECT_EQ(gpus[0].migs[0].profile, "1c.3g.71gb");
    EXPECT_EQ(gpus[0].migs[4].device, 4);
    EXPECT_EQ(gpus[0].migs[4].profile, "1g.18gb");
    EXPECT_EQ(gpus[0].migs[4].uuid, "MIG-00000004-0000-0000-0000-000000000004");
}

TEST(SmiList, MigDevicesBelongToTheGpuAboveThem) {
    const auto gpus = parse_smi_list(fx("list-a100-8gpu-one-mig.txt"));
    ASSERT_EQ(gpus.size(), 8U);
    EXPECT_EQ(gpus[0].migs.size(), 1U);
    EXPECT_EQ(gpus[0].migs[0].profile, "4g.40gb");
    for (std::size_t i = 1; i < gpus.size(); ++i) {
        EXPECT_TRUE(gpus[i].migs.empty()) << i;
        EXPECT_EQ(gpus[i].name, "NVIDIA A100-SXM4-80GB");
    }
    EXPECT_EQ(gpus[7].index, 7);
}

TEST(SmiList, NoiseIsSkipped) {
    EXPECT_TRUE(parse_smi_list("No devices found.\n").empty());
    EXPECT_TRUE(parse_smi_list("").empty());
}

TEST(SmiMigDevices, TheTablesMigBox) {
    const auto rows = parse_smi_mig_devices(fx("table-590-h200-mig-exporter.txt"));
    ASSERT_EQ(rows.size(), 5U);
    EXPECT_EQ(rows[1].gi, 2);
    EXPECT_EQ(rows[1].ci, 1);
    EXPECT_EQ(rows[1].device, 1);
    EXPECT_EQ(rows[1].memory_total_mib, 71424U);
    EXPECT_EQ(rows[2].gi, 3);
    EXPECT_EQ(rows[2].memory_total_mib, 33280U);
    EXPECT_EQ(rows[4].gi, 10);
    EXPECT_EQ(rows[4].memory_total_mib, 16384U);
    // A table without MIG devices has no rows; the processes box is not a MIG box.
    EXPECT_TRUE(parse_smi_mig_devices(fx("table-590-h100-exporter.txt")).empty());
}

TEST(MigProfileSlices, GpuInstanceSlices) {
    EXPECT_EQ(mig_profile_slices("1g.10gb"), 1);
    EXPECT_EQ(mig_profile_slices("7g.80gb"), 7);
    EXPECT_EQ(mig_profile_slices("1c.3g.71gb"), 3);
    EXPECT_EQ(mig_profile_slices("1g.10gb+me"), 1);
    EXPECT_EQ(mig_profile_slices("1g"), std::nullopt);
    EXPECT_EQ(mig_profile_slices("foo.bar"), std::nullopt);
}

TEST(SlurmTypes, AsGpuNvmlNamesThem) {
    EXPECT_EQ(slurm_gpu_type("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
    EXPECT_EQ(slurm_gpu_type("NVIDIA A100-SXM4-80GB"), "nvidia_a100-sxm4-80gb");
    EXPECT_EQ(slurm_gpu_type("Tesla T4"), "tesla_t4");
    // MIG: the name cut at its first '-', memory rounded from MiB (40192 / 1024 = 39.25).
    EXPECT_EQ(slurm_mig_type("NVIDIA A100-SXM4-80GB", 3, 40192), "nvidia_a100_3g.39gb");
    EXPECT_EQ(slurm_mig_type("NVIDIA H100 80GB HBM3", 1, 9984), "nvidia_h100_80gb_hbm3_1g.10gb");
    // roundl rounds halves away from zero: 33280 MiB = 32.5 GiB.
    EXPECT_EQ(slurm_mig_type("NVIDIA H200", 2, 33280), "nvidia_h200_2g.33gb");
}

TEST(SlurmGres, WholeGpu) {
    const auto g = slurm_gres_from(
        profile(), parse_smi_list(fx("list-590-h100-80gb-hbm3-exporter.txt")), {}, {});
    EXPECT_EQ(g.node_gres, "gpu:nvidia_h100_80gb_hbm3:1");
    EXPECT_EQ(g.gpus, 1);
    EXPECT_EQ(g.mig_devices, 0);
    EXPECT_EQ(g.gres_conf, "AutoDetect=nvml\n");
    EXPECT_TRUE(testing::contains(g.text, "\nAutoDetect=nvml\n")) << g.text;
    EXPECT_TRUE(testing::contains(g.text, "\nGres=gpu:nvidia_h100_80gb_hbm3:1\n")) << g.text;
    EXPECT_TRUE(testing::contains(g.text, "GresTypes=gpu")) << g.text;
}

TEST(SlurmGres, MigDevicesAreCountedByTypeWithSlurmsMemoryRounding) {
    // The names public H100 clusters schedule by (nvidia_h100_80gb_hbm3_1g.10gb ...).
    const auto h100 =
        slurm_gres_from(profile(), parse_smi_list(fx("list-590-h100-mig-exporter.txt")), {},
                        parse_smi_mig_devices(fx("table-590-h100-mig-load-exporter.txt")));
    EXPECT_EQ(h100.node_gres,
              "gpu:nvidia_h100_80gb_hbm3_1g.10gb:2,gpu:nvidia_h100_80gb_hbm3_2g.20gb:1,"
              "gpu:nvidia_h100_80gb_hbm3_3g.40gb:1");
    EXPECT_EQ(h100.gpus, 0);
    EXPECT_EQ(h100.mig_devices, 4);

    // H200: Slurm's names are not NVIDIA's (3g.71gb is 71424 MiB → 70; 1g.18gb is 16384 → 16),
    // and two compute instances of one GPU instance are two GRES.
    const auto h200 =
        slurm_gres_from(profile(), parse_smi_list(fx("list-590-h200-mig-exporter.txt")), {},
                        parse_smi_mig_devices(fx("table-590-h200-mig-exporter.txt")));
    EXPECT_EQ(h200.node_gres,
              "gpu:nvidia_h200_1g.16gb:2,gpu:nvidia_h200_2g.33gb:1,gpu:nvidia_h200_3g.70gb:2");
}

TEST(SlurmGres, MigEnabledWithoutDevicesIsRefusedWithTheFix) {
    // The H200 MIG host's own query (MIG enabled) with its instances gone.
    const auto query = parse_smi_query(fx("query-all-590-h200-mig-exporter.csv"));
    ASSERT_FALSE(query.empty());
    ASSERT_EQ(query[0].mig_enabled, true);
    const auto list =
        parse_smi_list("GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n");
    try {
        (void)slurm_gres_from(profile(), list, query, {});
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_TRUE(testing::contains(e.what(), "MIG enabled but no MIG device")) << e.what();
        EXPECT_TRUE(testing::contains(e.what(), "gpuprov apply --only mig")) << e.what();
    }
}

TEST(SlurmGres, MigDeviceWithoutItsMemoryIsAnError) {
    EXPECT_THROW(
        (void)slurm_gres_from(profile(), parse_smi_list(fx("list-a100-8gpu-one-mig.txt")), {}, {}),
        Error);
}

TEST(SlurmGres, ReadsTheGpusThroughTheSystem) {
    FakeSystem sys;
    sys.on_command({"nvidia-smi", "-L"}, answer_ok(fx("list-590-h100-mig-exporter.txt")));
    testing::script_query(sys, "query-535-h100.csv");
    sys.on_command({"nvidia-smi"}, answer_ok(fx("table-590-h100-mig-load-exporter.txt")));
    const auto g = slurm_gres(profile(), sys);
    EXPECT_EQ(g.mig_devices, 4);
    EXPECT_TRUE(testing::contains(g.text, "Gres=gpu:nvidia_h100_80gb_hbm3_1g.10gb:2,")) << g.text;
}

TEST(SlurmGres, NvidiaSmiFailingIsAnErrorNamingIt) {
    FakeSystem sys;
    sys.on_command({"nvidia-smi", "-L"}, answer_failed(9, "", fx("error-driver-not-loaded.txt")));
    try {
        (void)slurm_gres(profile(), sys);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_TRUE(testing::contains(e.what(), "nvidia-smi -L failed (exit status 9)"))
            << e.what();
        EXPECT_TRUE(testing::contains(e.what(), "couldn't communicate")) << e.what();
    }
}

TEST(SlurmGres, NoGpuIsAnError) {
    EXPECT_THROW((void)slurm_gres_from(profile(), {}, {}, {}), Error);
}

} // namespace
} // namespace gpuprov

namespace gpuprov {
namespace {

std::string lgi(const std::string& name) {
    return testing::read_fixture("cmd/nvidia-smi/" + name);
}

TEST(MigLgi, SevenInstancesOfOneProfile) {
    const auto gis = parse_mig_lgi(lgi("mig-lgi-a100-40gb-7x1g.txt"));
    ASSERT_EQ(gis.size(), 7U);
    for (std::size_t i = 0; i < gis.size(); ++i) {
        EXPECT_EQ(gis[i].gpu, 0);
        EXPECT_EQ(gis[i].profile, "1g.5gb");
        EXPECT_EQ(gis[i].profile_id, 19);
        EXPECT_EQ(gis[i].id, static_cast<int>(7 + i));
        EXPECT_EQ(gis[i].start, static_cast<int>(i));
        EXPECT_EQ(gis[i].size, 1);
    }
}

TEST(MigLgi, MixedProfilesAndPlacements) {
    const auto gis = parse_mig_lgi(lgi("mig-lgi-h100-80gb-2gi.txt"));
    ASSERT_EQ(gis.size(), 2U);
    EXPECT_EQ(gis[0].profile, "2g.20gb");
    EXPECT_EQ(gis[0].profile_id, 14);
    EXPECT_EQ(gis[0].id, 3);
    EXPECT_EQ(gis[1].profile, "3g.40gb");
    EXPECT_EQ(gis[1].profile_id, 9);
    EXPECT_EQ(gis[1].start, 4);
    EXPECT_EQ(gis[1].size, 4);
}

TEST(MigLgi, NoInstances) {
    EXPECT_TRUE(parse_mig_lgi(lgi("mig-lgi-none.txt")).empty());
    // The header rows are not instances.
    EXPECT_TRUE(parse_mig_lgi("| GPU   Name          Profile  Instance   Placement  |\n").empty());
}

} // namespace
} // namespace gpuprov
