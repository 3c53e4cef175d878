#include <fake_system.hpp>
#include <gpuprov/dkms.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

TEST(Nvcc, ReleaseAndVersionAcrossGenerations) {
    struct Case {
        const char* file;
        const char* release;
        const char* version;
    };
    for (const auto& c :
         {Case{"cuda-10.1.txt", "10.1", "10.1.243"}, Case{"cuda-11.0.txt", "11.0", "11.0.194"},
          Case{"cuda-11.8.txt", "11.8", "11.8.89"}, Case{"cuda-12.2.txt", "12.2", "12.2.140"},
          Case{"cuda-12.4.txt", "12.4", "12.4.131"}, Case{"cuda-13.0.txt", "13.0", "13.0.88"}}) {
        SCOPED_TRACE(c.file);
        const auto v = parse_nvcc_version(read_fixture(std::string("cmd/nvcc/") + c.file));
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(v->release, c.release);
        EXPECT_EQ(v->version, c.version);
    }
    EXPECT_FALSE(parse_nvcc_version("bash: nvcc: command not found\n"));
}

TEST(Dkms, OldAndNewLineForms) {
    const auto old_form = parse_dkms_status(read_fixture("cmd/dkms/old-form-460.txt"));
    ASSERT_EQ(old_form.size(), 1u);
    EXPECT_EQ(old_form[0].module, "nvidia");
    EXPECT_EQ(old_form[0].version, "460.91.03");
    EXPECT_EQ(old_form[0].kernel, "5.11.0-36-generic");
    EXPECT_EQ(old_form[0].arch, "x86_64");
    EXPECT_EQ(old_form[0].state, "installed");

    const auto new_form = parse_dkms_status(read_fixture("cmd/dkms/new-form-debian.txt"));
    ASSERT_EQ(new_form.size(), 1u);
    EXPECT_EQ(new_form[0].module, "nvidia-current");
    EXPECT_EQ(new_form[0].version, "580.119.02");
    EXPECT_EQ(new_form[0].kernel, "6.18.48-amd64-desktop-rolling");
}

TEST(Dkms, AddedOnlyEntryHasNoKernel) {
    const auto e = parse_dkms_status(read_fixture("cmd/dkms/ubuntu-535-old-kernel.txt"));
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].kernel, "5.15.0-91-generic");
    EXPECT_EQ(e[1].state, "added");
    EXPECT_TRUE(e[1].kernel.empty());
}

// The one reader of "DKMS built NVIDIA's module for this kernel" (driver step, forecast, doctor):
// another module on the same kernel does not count, nor does a module only "built" (not copied
// to /lib/modules, so it does not load at boot); dkms's trailing warning after "installed" does.
TEST(Dkms, InstalledForAKernelMeansNvidiasModuleInstalledThere) {
    const auto all = parse_dkms_status(
        "nvidia/580.95.05, 6.1.0-28-amd64, x86_64: installed (WARNING! Diff between built and "
        "installed module!)\n"
        "nvidia/580.95.05, 6.1.0-30-amd64, x86_64: built\n"
        "zfs/2.1.11, 6.1.0-30-amd64, x86_64: installed\n");
    ASSERT_EQ(all.size(), 3u);
    const auto nvidia = nvidia_entries(all);
    ASSERT_EQ(nvidia.size(), 2u);
    const auto* running = installed_for(nvidia, "6.1.0-28-amd64");
    ASSERT_NE(running, nullptr);
    EXPECT_EQ(running->version, "580.95.05");
    EXPECT_EQ(installed_for(nvidia, "6.1.0-30-amd64"), nullptr);
    EXPECT_NE(installed_for(all, "6.1.0-30-amd64"), nullptr); // zfs, before the filter
    EXPECT_EQ(installed_for(nvidia, "6.1.0-31-amd64"), nullptr);
}

TEST(Ldconfig, GrepExcerptAndFullCache) {
    const auto cudnn9 = parse_ldconfig(read_fixture("cmd/ldconfig/cudnn9-grep.txt"));
    ASSERT_EQ(cudnn9.size(), 12u);
    const auto* ops = find_library(cudnn9, "libcudnn_ops.so.9");
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(ops->path, "/lib/x86_64-linux-gnu/libcudnn_ops.so.9");
    // The sub-libraries are there, but not libcudnn.so.9 itself.
    EXPECT_EQ(find_library(cudnn9, "libcudnn.so.9"), nullptr);

    const auto full = parse_ldconfig(read_fixture("cmd/ldconfig/cudnn8-nccl-full.txt"));
    ASSERT_EQ(full.size(), 6u); // the "libs found in cache" header is not an entry
    ASSERT_NE(find_library(full, "libcudnn.so.8"), nullptr);
    ASSERT_NE(find_library(full, "libnccl.so.2"), nullptr);
    EXPECT_EQ(find_library(full, "libc.so.6")->path, "/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(DpkgAudit, HalfConfiguredAndUnpacked) {
    const auto p = parse_dpkg_audit(read_fixture("cmd/dpkg/audit-nvidia-dkms-470.txt"));
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].package, "nvidia-dkms-470");
    EXPECT_EQ(p[0].state, "half-configured");
    EXPECT_EQ(p[1].package, "nvidia-driver-470");
    EXPECT_EQ(p[1].state, "unpacked");
    EXPECT_TRUE(parse_dpkg_audit("").empty());
}
