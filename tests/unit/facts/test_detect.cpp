// detect_facts on whole fixture hosts (tests/fixtures/hosts/<name>/, laid out like a root), and
// on the odd host states each reader must survive.
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;
using testing::read_fixture;

const std::string secure_boot_var =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

HostFacts detect_host(FakeSystem& sys, const std::string& name) {
    sys.load_tree("hosts/" + name);
    auto facts = detect_facts(sys, Matrix::builtin());
    // Facts are file reads only: `plan` must not pay for a process start.
    EXPECT_TRUE(sys.queries.empty()) << name;
    EXPECT_TRUE(sys.commands_ran.empty()) << name;
    return facts;
}

HostFacts detect_host(const std::string& name) {
    FakeSystem sys;
    return detect_host(sys, name);
}

std::vector<std::string> addresses(const HostFacts& facts) {
    std::vector<std::string> out;
    for (const auto& gpu : facts.gpus) {
        out.push_back(gpu.address);
    }
    return out;
}

TEST(DetectHost, Ubuntu2004V100WithTwoToolkits) {
    const auto f = detect_host("ubuntu-20.04");
    EXPECT_EQ(f.os.repo_slug, "ubuntu2004");
    EXPECT_EQ(f.os.family, "debian");
    EXPECT_EQ(f.os.profile_os, "ubuntu-20.04");
    EXPECT_EQ(f.os.codename, "focal");
    EXPECT_EQ(f.arch, "x86_64");
    EXPECT_EQ(f.repo_arch, "x86_64");
    EXPECT_EQ(f.pkg_arch, "amd64");
    EXPECT_EQ(f.kernel, "5.4.0-169-generic");
    EXPECT_TRUE(f.kernel_headers);

    ASSERT_EQ(f.gpus.size(), 1u);
    EXPECT_EQ(f.gpus[0].address, "0000:00:1e.0");
    EXPECT_EQ(f.gpus[0].device_id, 0x1db1);
    EXPECT_EQ(f.gpus[0].class_code, 0x030200u);
    EXPECT_EQ(f.gpus[0].model, "V100");
    EXPECT_EQ(f.gpus[0].driver, "nvidia");
    EXPECT_EQ(f.nvswitch_count, 0);

    EXPECT_FALSE(f.nouveau_loaded);
    EXPECT_EQ(f.secure_boot, std::nullopt); // BIOS boot: no /sys/firmware/efi
    ASSERT_TRUE(f.driver);
    EXPECT_EQ(f.driver->version, "515.76");
    EXPECT_FALSE(f.driver->open_module);

    ASSERT_EQ(f.cuda.size(), 2u);
    EXPECT_EQ(f.cuda[0].path, "/usr/local/cuda-11.0");
    EXPECT_EQ(f.cuda[0].version, "11.0.228");
    EXPECT_EQ(f.cuda[1].path, "/usr/local/cuda-11.8");
    EXPECT_EQ(f.cuda[1].version, "11.8.20220929");
    EXPECT_EQ(f.cuda_default_link, "/usr/local/cuda-11.8"); // through /etc/alternatives

    ASSERT_TRUE(f.cudnn);
    EXPECT_EQ(f.cudnn->major, 8);
    EXPECT_EQ(f.cudnn->minor, 9);
    EXPECT_EQ(f.cudnn->patch, 4);
    EXPECT_EQ(f.cudnn->header, "/usr/include/cudnn_version.h");

    EXPECT_EQ(f.packages.at("nvidia-driver-515"), "515.76-0ubuntu1");
    EXPECT_EQ(f.packages.at("libnvidia-compute-515:i386"), "515.76-0ubuntu1");
    EXPECT_EQ(f.packages.at("cuda-toolkit-11-8"), "11.8.0-1");
    EXPECT_EQ(f.packages.at("libcudnn8"), "8.9.4.25-1+cuda11.8");
    EXPECT_EQ(f.packages.count("bash"), 0u);
    EXPECT_EQ(f.packages.count("libcurl4"), 0u);
    EXPECT_EQ(f.packages.count("nvidia-driver-470"), 0u);
    EXPECT_EQ(f.memory_bytes, 62914556ull * 1024);
}

TEST(DetectHost, Ubuntu2204FourA100OnNouveauWithSecureBoot) {
    const auto f = detect_host("ubuntu-22.04");
    EXPECT_EQ(f.os.repo_slug, "ubuntu2204");
    EXPECT_EQ(f.os.profile_os, "ubuntu-22.04");
    EXPECT_EQ(f.os.codename, "jammy");
    EXPECT_EQ(f.kernel, "5.15.0-91-generic");
    EXPECT_TRUE(f.kernel_headers);

    ASSERT_EQ(f.gpus.size(), 4u);
    EXPECT_EQ(addresses(f), (std::vector<std::string>{"0000:07:00.0", "0000:0f:00.0",
                                                      "0000:47:00.0", "0000:4e:00.0"}));
    for (const auto& gpu : f.gpus) {
        EXPECT_EQ(gpu.device_id, 0x20b2);
        EXPECT_EQ(gpu.model, "A100");
        EXPECT_EQ(gpu.memory_gib, 80);
        EXPECT_EQ(gpu.compute_capability, "8.0");
        EXPECT_EQ(gpu.driver, "nouveau");
    }
    EXPECT_EQ(f.nvswitch_count, 0);
    EXPECT_TRUE(f.nouveau_loaded);
    EXPECT_EQ(f.secure_boot, std::optional<bool>(true));
    EXPECT_FALSE(f.driver);
    EXPECT_TRUE(f.cuda.empty());
    EXPECT_EQ(f.cuda_default_link, std::nullopt);
    EXPECT_FALSE(f.cudnn);
    EXPECT_TRUE(f.packages.empty());
    EXPECT_EQ(f.memory_bytes, 1056469536ull * 1024);
}

TEST(DetectHost, Ubuntu2404HgxH100WithOpenDriverAndCuda13) {
    const auto f = detect_host("ubuntu-24.04");
    EXPECT_EQ(f.os.repo_slug, "ubuntu2404");
    EXPECT_EQ(f.os.profile_os, "ubuntu-24.04");
    EXPECT_EQ(f.kernel, "6.8.0-45-generic");

    ASSERT_EQ(f.gpus.size(), 8u);
    EXPECT_EQ(f.gpus.front().address, "0000:1b:00.0");
    EXPECT_EQ(f.gpus.back().address, "0000:df:00.0");
    for (const auto& gpu : f.gpus) {
        EXPECT_EQ(gpu.device_id, 0x2330);
        EXPECT_EQ(gpu.model, "H100");
        EXPECT_EQ(gpu.architecture, "hopper");
        EXPECT_EQ(gpu.compute_capability, "9.0");
        EXPECT_TRUE(gpu.nvswitch_system);
        EXPECT_EQ(gpu.driver, "nvidia");
    }
    EXPECT_EQ(f.nvswitch_count, 4); // the 0x22a3 bridges are counted, not listed as GPUs

    EXPECT_FALSE(f.nouveau_loaded);
    EXPECT_EQ(f.secure_boot, std::optional<bool>(false));
    ASSERT_TRUE(f.driver);
    EXPECT_EQ(f.driver->version, "580.142");
    EXPECT_TRUE(f.driver->open_module);

    ASSERT_EQ(f.cuda.size(), 1u);
    EXPECT_EQ(f.cuda[0].path, "/usr/local/cuda-13.0");
    EXPECT_EQ(f.cuda[0].version, "13.0.2");
    EXPECT_EQ(f.cuda_default_link, "/usr/local/cuda-13.0");
    EXPECT_FALSE(f.cudnn);
    EXPECT_EQ(f.packages.at("nvidia-open"), "580.142-1");
    EXPECT_EQ(f.packages.at("nvidia-fabricmanager-580"), "580.142-1");
    EXPECT_EQ(f.packages.at("nvidia-container-toolkit"), "1.17.8-1");
    EXPECT_EQ(f.packages.at("datacenter-gpu-manager-4-cuda13"), "1:4.4.1-1");
    EXPECT_EQ(f.packages.at("libnccl2"), "2.27.7-1+cuda13.0");
}

TEST(DetectHost, Debian12TwoT4NoDriverWheelAssembledCuda) {
    const auto f = detect_host("debian-12");
    EXPECT_EQ(f.os.repo_slug, "debian12");
    EXPECT_EQ(f.os.family, "debian");
    EXPECT_EQ(f.os.profile_os, "debian-12");
    EXPECT_EQ(f.os.codename, "bookworm");
    EXPECT_EQ(f.pkg_arch, "amd64");
    EXPECT_EQ(f.kernel, "6.1.0-18-cloud-amd64");
    EXPECT_FALSE(f.kernel_headers);

    ASSERT_EQ(f.gpus.size(), 2u);
    for (const auto& gpu : f.gpus) {
        EXPECT_EQ(gpu.model, "T4");
        EXPECT_EQ(gpu.compute_capability, "7.5");
        EXPECT_EQ(gpu.driver, ""); // nothing bound
    }
    EXPECT_FALSE(f.nouveau_loaded);
    EXPECT_EQ(f.secure_boot, std::optional<bool>(false));
    EXPECT_FALSE(f.driver);
    // No version.json or version.txt: the version comes from include/cuda.h.
    ASSERT_EQ(f.cuda.size(), 1u);
    EXPECT_EQ(f.cuda[0].path, "/usr/local/cuda-13.0");
    EXPECT_EQ(f.cuda[0].version, "13.0");
    EXPECT_EQ(f.cuda_default_link, "/usr/local/cuda-13.0");
    EXPECT_FALSE(f.cudnn);
    EXPECT_TRUE(f.packages.empty());
    EXPECT_EQ(f.memory_bytes, 61678544ull * 1024);
}

TEST(DetectHost, Rhel9L40SWithDriverSeenInSysfsOnly) {
    const auto f = detect_host("rhel-9");
    EXPECT_EQ(f.os.repo_slug, "rhel9");
    EXPECT_EQ(f.os.family, "rhel");
    EXPECT_EQ(f.os.profile_os, "rhel-9");
    EXPECT_EQ(f.os.version_id, "9.6");
    EXPECT_EQ(f.pkg_arch, "x86_64");
    EXPECT_TRUE(f.kernel_headers);

    ASSERT_EQ(f.gpus.size(), 1u);
    EXPECT_EQ(f.gpus[0].model, "L40S");
    ASSERT_TRUE(f.driver);
    EXPECT_EQ(f.driver->version, "550.54.14");
    EXPECT_FALSE(f.driver->open_module);
    EXPECT_EQ(f.secure_boot, std::optional<bool>(true));

    ASSERT_EQ(f.cuda.size(), 1u);
    EXPECT_EQ(f.cuda[0].version, "12.4.1");
    EXPECT_EQ(f.cuda_default_link, "/usr/local/cuda-12.4");
    ASSERT_TRUE(f.cudnn);
    EXPECT_EQ(f.cudnn->major, 9);
    EXPECT_EQ(f.cudnn->minor, 2);
    EXPECT_EQ(f.cudnn->header, "/usr/include/cudnn_version.h");
    EXPECT_TRUE(f.packages.empty()); // no rpm database in this tree: rpm is not started
    ASSERT_FALSE(f.kernel_devel);
    EXPECT_TRUE(f.module_streams.empty());
    EXPECT_FALSE(f.epel);
    EXPECT_EQ(f.selinux, "");
}

TEST(DetectHost, Alma9RpmPackagesModuleStreamEpelAndSelinux) {
    FakeSystem sys;
    sys.load_tree("hosts/alma-9");
    sys.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
        return CommandResult{.out = read_fixture("cmd/rpm/qa-el9-570-open.txt")};
    });
    const auto f = detect_facts(sys, Matrix::builtin());
    EXPECT_EQ(f.os.id, "almalinux");
    EXPECT_EQ(f.os.repo_slug, "rhel9");
    EXPECT_EQ(f.os.profile_os, "rhel-9");
    // The rpm database, NVIDIA's packages only, with epochs.
    EXPECT_EQ(f.packages.at("nvidia-driver"), "3:570.195.03-1.el9");
    EXPECT_EQ(f.packages.at("kmod-nvidia-open-dkms"), "3:570.195.03-1.el9");
    EXPECT_EQ(f.packages.at("cuda-toolkit-12-8"), "12.8.1-1");
    EXPECT_EQ(f.packages.count("dkms"), 0u);
    // kernel-devel is installed, but for 5.14.0-503.14.1.el9_5, not the running kernel.
    EXPECT_FALSE(f.kernel_devel);
    EXPECT_EQ(f.module_streams,
              (std::map<std::string, std::string>{{"nvidia-driver", "580-open"}}));
    EXPECT_TRUE(f.epel);
    EXPECT_EQ(f.selinux, "enforcing");
    EXPECT_EQ(sys.queries.size(), 1u); // one rpm query, cached for the rest of the run
}

TEST(DetectHost, KernelDevelMustMatchUnameR) {
    FakeSystem sys;
    sys.load_tree("hosts/alma-9");
    sys.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
        return CommandResult{.out = "@@\tkernel-devel\t(none)\t5.14.0\t503.14.1.el9_5\tx86_64\n"
                                    "@@\tkernel-devel\t(none)\t5.14.0\t570.12.1.el9_6\tx86_64\n"
                                    "@@\tkernel-headers\t(none)\t5.14.0\t570.12.1.el9_6\t"
                                    "x86_64\n"};
    });
    const auto f = detect_facts(sys, Matrix::builtin());
    EXPECT_TRUE(f.kernel_devel);
    EXPECT_TRUE(f.kernel_headers_rpm);
}

TEST(DetectSelinux, ConfigOnlyWhenSelinuxfsIsNotMounted) {
    EXPECT_EQ(parse_selinux_config("# comment\nSELINUX=permissive\n"), "permissive");
    EXPECT_EQ(parse_selinux_config("SELINUX=Disabled\n"), "disabled");
    EXPECT_EQ(parse_selinux_config("SELINUX=bogus\n"), "");
    FakeSystem sys;
    sys.add_file("/etc/os-release", read_fixture("os/rocky-9/usr/lib/os-release"));
    sys.add_file("/etc/selinux/config", "SELINUX=enforcing\n");
    // Configured on, but no selinuxfs: not running (selinux=0 on the kernel command line).
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).selinux, "disabled");
    sys.add_file("/sys/fs/selinux/enforce", "0");
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).selinux, "permissive");
}

TEST(DnfModules, RealModuleFileAndOtherStates) {
    EXPECT_EQ(
        parse_dnf_module_file(read_fixture("cmd/dnf/modules.d/nvidia-driver-580-open.module")),
        (std::map<std::string, std::string>{{"nvidia-driver", "580-open"}}));
    // `dnf module reset` leaves state= empty; disabled streams are not enabled.
    EXPECT_TRUE(parse_dnf_module_file("[nvidia-driver]\nname=nvidia-driver\nstream=\n"
                                      "profiles=\nstate=\n")
                    .empty());
    EXPECT_TRUE(parse_dnf_module_file("[x]\nstream=1\nstate=disabled\n").empty());
    EXPECT_EQ(parse_dnf_module_file("[a]\nstream=1\nstate=enabled\n[b]\nstate=enabled\n"
                                    "stream=2\n"),
              (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
}

TEST(DetectHost, Rocky9OsReleaseThroughSymlinkAndNouveauFromProcModules) {
    const auto f = detect_host("rocky-9");
    EXPECT_EQ(f.os.id, "rocky");
    EXPECT_EQ(f.os.repo_slug, "rhel9");
    EXPECT_EQ(f.os.family, "rhel");
    EXPECT_EQ(f.os.profile_os, "rhel-9");
    EXPECT_FALSE(f.kernel_headers);
    ASSERT_EQ(f.gpus.size(), 2u);
    EXPECT_EQ(f.gpus[0].model, "A10");
    EXPECT_EQ(f.gpus[1].address, "0000:ca:00.0");
    EXPECT_TRUE(f.nouveau_loaded); // no /sys/module/nouveau in this tree
    EXPECT_EQ(f.secure_boot, std::nullopt);
    EXPECT_FALSE(f.driver);
    EXPECT_EQ(f.memory_bytes, 263940132ull * 1024);
}

TEST(DetectHost, Debian11IsNamedButUnsupported) {
    const auto f = detect_host("debian-11");
    EXPECT_EQ(f.os.family, "debian");
    EXPECT_EQ(f.os.repo_slug, "");
    EXPECT_EQ(f.os.profile_os, "debian-11");
    EXPECT_EQ(f.pkg_arch, "amd64");
    ASSERT_EQ(f.gpus.size(), 1u);
    EXPECT_EQ(f.gpus[0].model, "T4");
}

// ---- arch ----

TEST(DetectArch, ArmServerUsesSbsaRepoAndArm64Packages) {
    FakeSystem deb;
    deb.set_machine("aarch64");
    const auto d = detect_host(deb, "ubuntu-24.04");
    EXPECT_EQ(d.arch, "aarch64");
    EXPECT_EQ(d.repo_arch, "sbsa");
    EXPECT_EQ(d.pkg_arch, "arm64");

    FakeSystem rpm;
    rpm.set_machine("aarch64");
    const auto r = detect_host(rpm, "rhel-9");
    EXPECT_EQ(r.repo_arch, "sbsa");
    EXPECT_EQ(r.pkg_arch, "aarch64");
}

TEST(DetectArch, UnknownMachine) {
    FakeSystem sys;
    sys.set_machine("ppc64le");
    const auto f = detect_host(sys, "ubuntu-22.04");
    EXPECT_EQ(f.repo_arch, "");
    EXPECT_EQ(f.pkg_arch, "");
}

// ---- PCI ----

TEST(DetectPci, SkipsNonDisplayFunctionsAndOddFiles) {
    FakeSystem sys;
    const std::string d = "/sys/bus/pci/devices/";
    // A GPU's HDMI audio function: NVIDIA vendor, class 0x0403.
    sys.add_file(d + "0000:01:00.1/vendor", "0x10de\n");
    sys.add_file(d + "0000:01:00.1/device", "0x10f0\n");
    sys.add_file(d + "0000:01:00.1/class", "0x040300\n");
    // Unreadable class, garbage vendor, missing device.
    sys.add_file(d + "0000:02:00.0/vendor", "0x10de\n");
    sys.add_file(d + "0000:02:00.0/device", "0x20b2\n");
    sys.add_file(d + "0000:03:00.0/vendor", "nvidia\n");
    sys.add_file(d + "0000:04:00.0/vendor", "0x10de\n");
    sys.add_file(d + "0000:04:00.0/class", "0x030200\n");
    // A VGA-class GPU the matrix does not know: still a GPU, just unnamed.
    sys.add_file(d + "0000:05:00.0/vendor", "0x10de\n");
    sys.add_file(d + "0000:05:00.0/device", "0xffee\n");
    sys.add_file(d + "0000:05:00.0/class", "0x030000\n");
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_EQ(f.gpus.size(), 1u);
    EXPECT_EQ(f.gpus[0].address, "0000:05:00.0");
    EXPECT_EQ(f.gpus[0].device_id, 0xffee);
    EXPECT_EQ(f.gpus[0].class_code, 0x030000u);
    EXPECT_EQ(f.gpus[0].model, "");
    EXPECT_EQ(f.gpus[0].memory_gib, 0);
    EXPECT_EQ(f.nvswitch_count, 0);
}

TEST(DetectPci, OtherVendorsBridgesAreNotNvswitches) {
    FakeSystem sys;
    sys.add_file("/sys/bus/pci/devices/0000:00:01.0/vendor", "0x8086\n");
    sys.add_file("/sys/bus/pci/devices/0000:00:01.0/device", "0x09a2\n");
    sys.add_file("/sys/bus/pci/devices/0000:00:01.0/class", "0x068000\n");
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).nvswitch_count, 0);
}

// ---- Secure Boot corner cases ----

TEST(DetectSecureBoot, EfiWithoutTheVariableIsOff) {
    FakeSystem sys;
    sys.add_file("/sys/firmware/efi/efivars/BootOrder-8be4df61-93ca-11d2-aa0d-00e098032b8c",
                 std::string("\x07\0\0\0\x01\0", 6));
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).secure_boot, std::optional<bool>(false));
}

TEST(DetectSecureBoot, EfivarfsNotMountedIsUnknown) {
    FakeSystem sys;
    sys.add_dir("/sys/firmware/efi/efivars");
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).secure_boot, std::nullopt);
}

TEST(DetectSecureBoot, TruncatedVariableIsUnknown) {
    FakeSystem sys;
    sys.add_file(secure_boot_var, std::string("\x06\0", 2));
    EXPECT_EQ(detect_facts(sys, Matrix::builtin()).secure_boot, std::nullopt);
}

// ---- the rest ----

TEST(DetectKernelHeaders, DanglingBuildLinkMeansNoHeaders) {
    FakeSystem sys;
    sys.add_file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
    sys.add_link("/lib/modules/6.8.0-45-generic/build", "/usr/src/linux-headers-6.8.0-45-generic");
    EXPECT_FALSE(detect_facts(sys, Matrix::builtin()).kernel_headers);
    sys.add_dir("/usr/src/linux-headers-6.8.0-45-generic");
    EXPECT_TRUE(detect_facts(sys, Matrix::builtin()).kernel_headers);
}

TEST(DetectKernelHeaders, UnknownKernelHasNoHeaders) {
    FakeSystem sys;
    sys.add_dir("/lib/modules//build");
    EXPECT_FALSE(detect_facts(sys, Matrix::builtin()).kernel_headers);
}

TEST(DetectDriver, GarbageProcFileFallsBackToSysfs) {
    FakeSystem sys;
    sys.add_file("/proc/driver/nvidia/version", "garbage\n");
    sys.add_file("/sys/module/nvidia/version", "550.54.14\n");
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_TRUE(f.driver);
    EXPECT_EQ(f.driver->version, "550.54.14");
    sys.add_file("/sys/module/nvidia/version", "\n");
    EXPECT_FALSE(detect_facts(sys, Matrix::builtin()).driver);
}

TEST(DetectCuda, NumericOrderAndLeftoverDirectories) {
    FakeSystem sys;
    sys.add_file("/usr/local/cuda-12.10/version.json",
                 R"({"cuda": {"name": "CUDA SDK", "version": "12.10.0"}})");
    sys.add_file("/usr/local/cuda-12.4/version.json",
                 R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})");
    sys.add_file("/usr/local/cuda-12.2/bin/nvcc", "");            // no version file: leftover
    sys.add_file("/usr/local/cuda-12.3/version.json", "{broken"); // unreadable: skipped
    sys.add_file("/usr/local/cudagdb/version.json",
                 R"({"cuda": {"name": "CUDA SDK", "version": "1.0"}})");
    sys.add_link("/usr/local/cuda", "cuda-12.4"); // relative, as a hand-made link would be
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_EQ(f.cuda.size(), 2u);
    EXPECT_EQ(f.cuda[0].version, "12.4.1");
    EXPECT_EQ(f.cuda[1].version, "12.10.0");
    EXPECT_EQ(f.cuda_default_link, "/usr/local/cuda-12.4");
}

TEST(DetectCuda, LinkLoopStops) {
    FakeSystem sys;
    sys.add_link("/usr/local/cuda", "/etc/alternatives/cuda");
    sys.add_link("/etc/alternatives/cuda", "/usr/local/cuda");
    EXPECT_TRUE(detect_facts(sys, Matrix::builtin()).cuda_default_link.has_value());
}

TEST(DetectCudnn, FirstParsableCandidateWins) {
    FakeSystem sys;
    sys.add_file("/usr/include/cudnn_version.h", "not a header\n");
    sys.add_file(
        "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",
        read_fixture("hosts/ubuntu-20.04/usr/include/x86_64-linux-gnu/cudnn_version_v8.h"));
    sys.add_file("/usr/local/cuda/include/cudnn_version.h",
                 read_fixture("hosts/rhel-9/usr/include/cudnn_version.h"));
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_TRUE(f.cudnn);
    EXPECT_EQ(f.cudnn->major, 8);
    EXPECT_EQ(f.cudnn->header, "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h");
}

TEST(DetectCudnn, TarballInstallUnderCuda) {
    FakeSystem sys;
    sys.add_file("/usr/local/cuda-12.4/include/cudnn_version.h",
                 read_fixture("hosts/rhel-9/usr/include/cudnn_version.h"));
    sys.add_link("/usr/local/cuda", "/usr/local/cuda-12.4");
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_TRUE(f.cudnn);
    EXPECT_EQ(f.cudnn->major, 9);
    EXPECT_EQ(f.cudnn->header, "/usr/local/cuda/include/cudnn_version.h");
}

TEST(DetectPackages, RhelFamilyIgnoresAStrayDpkgDatabase) {
    FakeSystem sys;
    sys.load_tree("hosts/rhel-9");
    sys.add_file("/var/lib/dpkg/status",
                 "Package: nvidia-open\nStatus: install ok installed\nVersion: 1\n");
    EXPECT_TRUE(detect_facts(sys, Matrix::builtin()).packages.empty());
}

TEST(DetectDisk, RootDiskComesFromSystem) {
    FakeSystem sys;
    EXPECT_FALSE(detect_facts(sys, Matrix::builtin()).root_disk);
    sys.set_disk({500ull << 30, 200ull << 30});
    const auto f = detect_facts(sys, Matrix::builtin());
    ASSERT_TRUE(f.root_disk);
    EXPECT_EQ(f.root_disk->free_bytes, 200ull << 30);
}

TEST(DetectEmptyHost, NothingThrowsAndEverythingIsEmpty) {
    FakeSystem sys;
    const auto f = detect_facts(sys, Matrix::builtin());
    EXPECT_EQ(f.kernel, "");
    EXPECT_FALSE(f.kernel_headers);
    EXPECT_TRUE(f.gpus.empty());
    EXPECT_FALSE(f.nouveau_loaded);
    EXPECT_EQ(f.secure_boot, std::nullopt);
    EXPECT_FALSE(f.driver);
    EXPECT_TRUE(f.cuda.empty());
    EXPECT_FALSE(f.cudnn);
    EXPECT_TRUE(f.packages.empty());
    EXPECT_EQ(f.memory_bytes, 0u);
}

} // namespace
} // namespace gpuprov
