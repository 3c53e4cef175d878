// The single-format parsers, on the real samples from nvidia-facts.md §5.6–5.8 and §6.2–6.3 and
// on the broken variants a host can present.
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::read_fixture;

// ---- /proc/driver/nvidia/version ----

TEST(ProcDriverVersion, OpenKernelModule) {
    const auto d =
        parse_proc_driver_version(read_fixture("hosts/ubuntu-24.04/proc/driver/nvidia/version"));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->version, "580.142");
    EXPECT_TRUE(d->open_module);
}

TEST(ProcDriverVersion, ProprietaryKernelModule) {
    const auto d =
        parse_proc_driver_version(read_fixture("hosts/ubuntu-20.04/proc/driver/nvidia/version"));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->version, "515.76");
    EXPECT_FALSE(d->open_module);
}

TEST(ProcDriverVersion, OtherRealForms) {
    const auto arm = parse_proc_driver_version(
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Wed Jul 23 22:02:23 UTC 2025\n");
    ASSERT_TRUE(arm);
    EXPECT_EQ(arm->version, "580.65.06");
    EXPECT_TRUE(arm->open_module);
    const auto jetson =
        parse_proc_driver_version("NVRM version: NVIDIA UNIX Kernel Module for aarch64  34.1.1  "
                                  "Release Build  (buildbrain@mobile-u64-5273-d7000)\n");
    ASSERT_TRUE(jetson);
    EXPECT_EQ(jetson->version, "34.1.1");
    EXPECT_FALSE(jetson->open_module);
}

TEST(ProcDriverVersion, Garbage) {
    EXPECT_FALSE(parse_proc_driver_version(""));
    EXPECT_FALSE(parse_proc_driver_version("GCC version:  gcc version 13.3.0\n"));
    EXPECT_FALSE(parse_proc_driver_version("NVRM version: something else entirely 1.2\n"));
    EXPECT_FALSE(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n"));
    EXPECT_FALSE(parse_proc_driver_version("NVRM version: NVIDIA Kernel Module  515.  x\n"));
}

// ---- CUDA version.json / version.txt ----

TEST(CudaVersion, JsonDateStampedBuildOf118) {
    EXPECT_EQ(parse_cuda_version_json(
                  read_fixture("hosts/ubuntu-20.04/usr/local/cuda-11.8/version.json")),
              "11.8.20220929");
}

TEST(CudaVersion, JsonNewStyle) {
    EXPECT_EQ(parse_cuda_version_json(
                  read_fixture("hosts/ubuntu-24.04/usr/local/cuda-13.0/version.json")),
              "13.0.2");
}

TEST(CudaVersion, JsonBroken) {
    EXPECT_FALSE(parse_cuda_version_json(""));
    EXPECT_FALSE(parse_cuda_version_json("{ \"cuda\" : { \"name\" : \"CUDA SDK\", "));
    EXPECT_FALSE(parse_cuda_version_json("[1, 2]"));
    EXPECT_FALSE(parse_cuda_version_json("{\"cuda_nvcc\": {\"version\": \"12.4.131\"}}"));
    EXPECT_FALSE(parse_cuda_version_json("{\"cuda\": \"12.4\"}"));
    EXPECT_FALSE(parse_cuda_version_json("{\"cuda\": {\"version\": 12.4}}"));
    EXPECT_FALSE(parse_cuda_version_json("{\"cuda\": {\"version\": \"twelve\"}}"));
}

TEST(CudaVersion, Txt) {
    EXPECT_EQ(
        parse_cuda_version_txt(read_fixture("hosts/ubuntu-20.04/usr/local/cuda-11.0/version.txt")),
        "11.0.228");
    EXPECT_EQ(parse_cuda_version_txt("CUDA Version 10.0.130"), "10.0.130");
    EXPECT_FALSE(parse_cuda_version_txt("CUDA Version\n"));
    EXPECT_FALSE(parse_cuda_version_txt("CUDA Version abc\n"));
    EXPECT_FALSE(parse_cuda_version_txt("nothing here"));
}

TEST(CudaVersion, CudaHeaderDefine) {
    EXPECT_EQ(
        parse_cuda_h_version(read_fixture("hosts/debian-12/usr/local/cuda-13.0/include/cuda.h")),
        "13.0");
    EXPECT_EQ(parse_cuda_h_version("#define CUDA_VERSION 12040\n"), "12.4");
    EXPECT_EQ(parse_cuda_h_version("#define CUDA_VERSION 11080"), "11.8");
    EXPECT_FALSE(parse_cuda_h_version("#define CUDA_VERSION_MAJOR 13\n"));
    EXPECT_FALSE(parse_cuda_h_version("#define CUDA_VERSION 13\n"));
    EXPECT_FALSE(parse_cuda_h_version("#define CUDA_VERSION 12041\n"));
    EXPECT_FALSE(parse_cuda_h_version("#define CUDA_VERSION abc\n"));
    EXPECT_FALSE(parse_cuda_h_version(""));
}

// ---- cudnn_version.h ----

TEST(CudnnHeader, Cudnn9) {
    const auto c = parse_cudnn_header(read_fixture("hosts/rhel-9/usr/include/cudnn_version.h"));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->major, 9);
    EXPECT_EQ(c->minor, 2);
    EXPECT_EQ(c->patch, 0);
}

TEST(CudnnHeader, Cudnn8WithTheOldMultiplier) {
    const auto c = parse_cudnn_header(
        read_fixture("hosts/ubuntu-20.04/usr/include/x86_64-linux-gnu/cudnn_version_v8.h"));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->major, 8);
    EXPECT_EQ(c->minor, 9);
    EXPECT_EQ(c->patch, 4);
}

TEST(CudnnHeader, DefinesWithOddSpacing) {
    const auto c = parse_cudnn_header("#  define CUDNN_MAJOR\t8\n"
                                      "#define CUDNN_MINOR 10\n"
                                      "#define CUDNN_MAJOR_X 1\n"
                                      "#define CUDNN_PATCHLEVEL 7\n");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->major, 8);
    EXPECT_EQ(c->minor, 10);
    EXPECT_EQ(c->patch, 7);
}

TEST(CudnnHeader, MissingOrBrokenDefines) {
    EXPECT_FALSE(parse_cudnn_header(""));
    EXPECT_FALSE(parse_cudnn_header("#define CUDNN_MINOR 2\n#define CUDNN_PATCHLEVEL 0\n"));
    EXPECT_FALSE(parse_cudnn_header("#define CUDNN_MAJOR nine\n#define CUDNN_MINOR 2\n"));
    EXPECT_FALSE(parse_cudnn_header("// #define CUDNN_MAJOR 9\n#define CUDNN_MINOR 2\n"));
    // A header without PATCHLEVEL still says major.minor.
    const auto c = parse_cudnn_header("#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->patch, 0);
}

// ---- /proc/meminfo ----

TEST(Meminfo, MemTotalInBytes) {
    EXPECT_EQ(parse_meminfo_total(read_fixture("hosts/debian-12/proc/meminfo")),
              61678544ull * 1024);
    EXPECT_EQ(parse_meminfo_total("MemFree: 1 kB\nMemTotal:        2113515824 kB\n"),
              2113515824ull * 1024);
}

TEST(Meminfo, Garbage) {
    EXPECT_FALSE(parse_meminfo_total(""));
    EXPECT_FALSE(parse_meminfo_total("MemFree:  100 kB\n"));
    EXPECT_FALSE(parse_meminfo_total("MemTotal: lots kB\n"));
    EXPECT_FALSE(parse_meminfo_total("MemTotal: 100 MB\n"));
    EXPECT_FALSE(parse_meminfo_total("MemTotal: -5 kB\n"));
    EXPECT_FALSE(parse_meminfo_total("MemTotal: 99999999999999999999 kB\n"));
}

// ---- /proc/modules ----

TEST(ProcModules, MatchesOnlyTheNameColumn) {
    const auto modules = read_fixture("hosts/ubuntu-22.04/proc/modules");
    EXPECT_TRUE(proc_modules_has(modules, "nouveau"));
    EXPECT_TRUE(proc_modules_has(modules, "ttm"));
    EXPECT_FALSE(proc_modules_has(modules, "nvidia"));
    // drm_kms_helper's line lists nouveau as a user; that is not nouveau being loaded twice,
    // and "nouveau_x" or "drm" prefixes must not match.
    EXPECT_FALSE(proc_modules_has("drm_kms_helper 311296 1 nouveau, Live 0x0\n", "nouveau"));
    EXPECT_FALSE(proc_modules_has("nouveau_x 1 0 - Live 0x0\n", "nouveau"));
    EXPECT_FALSE(proc_modules_has("drm_kms_helper 1 0 - Live 0x0\n", "drm"));
    EXPECT_FALSE(proc_modules_has("nouveau 1 0 - Live 0x0\n", ""));
    EXPECT_TRUE(proc_modules_has("nouveau 1 0 - Live 0x0", "nouveau")); // no final newline
}

TEST(ProcModules, NvidiaModulesOfALoadedDriver) {
    const auto modules = read_fixture("hosts/ubuntu-24.04/proc/modules");
    EXPECT_TRUE(proc_modules_has(modules, "nvidia"));
    EXPECT_TRUE(proc_modules_has(modules, "nvidia_uvm"));
    EXPECT_FALSE(proc_modules_has(modules, "nouveau"));
}

// ---- SecureBoot efivar ----

TEST(SecureBootVar, AttributesThenValue) {
    EXPECT_EQ(
        parse_secure_boot_efivar(read_fixture("hosts/ubuntu-22.04/sys/firmware/efi/efivars/"
                                              "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")),
        std::optional<bool>(true));
    EXPECT_EQ(parse_secure_boot_efivar(std::string("\x06\0\0\0\0", 5)), std::optional<bool>(false));
    EXPECT_EQ(parse_secure_boot_efivar(std::string("\x06\0\0\0\x01", 5)),
              std::optional<bool>(true));
}

TEST(SecureBootVar, ShortOrOddValues) {
    EXPECT_EQ(parse_secure_boot_efivar(""), std::nullopt);
    EXPECT_EQ(parse_secure_boot_efivar(std::string("\x06\0\0\0", 4)), std::nullopt);
    EXPECT_EQ(parse_secure_boot_efivar(std::string("\x06\0\0\0\x07", 5)), std::nullopt);
    // The value is byte 4, not byte 0: the attribute mask 0x01 alone is not "enabled".
    EXPECT_EQ(parse_secure_boot_efivar(std::string("\x01\0\0\0\0", 5)), std::optional<bool>(false));
}

} // namespace
} // namespace gpuprov
