// /var/lib/dpkg/status: installed state, holds, multi-arch, and the NVIDIA filter.
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::read_fixture;

TEST(DpkgStatus, InstalledAndHeldPackagesOnly) {
    const auto pkgs = parse_dpkg_status(read_fixture("hosts/ubuntu-20.04/var/lib/dpkg/status"));
    EXPECT_EQ(pkgs.at("bash"), "5.1-6ubuntu1");
    EXPECT_EQ(pkgs.at("libcudnn8"), "8.9.4.25-1+cuda11.8");
    EXPECT_EQ(pkgs.at("nvidia-driver-515"), "515.76-0ubuntu1"); // "hold ok installed"
    EXPECT_EQ(pkgs.count("nvidia-driver-470"), 0u);             // only config files left
}

TEST(DpkgStatus, SecondArchitectureIsKeyedWithArch) {
    const auto pkgs = parse_dpkg_status(read_fixture("hosts/ubuntu-20.04/var/lib/dpkg/status"));
    EXPECT_EQ(pkgs.at("libnvidia-compute-515"), "515.76-0ubuntu1");
    EXPECT_EQ(pkgs.at("libnvidia-compute-515:i386"), "515.76-0ubuntu1");
}

TEST(DpkgStatus, StatesThatAreNotInstalled) {
    const auto pkgs = parse_dpkg_status("Package: a\nStatus: install ok half-installed\n"
                                        "Version: 1\n\n"
                                        "Package: b\nStatus: install reinstreq installed\n"
                                        "Version: 1\n\n"
                                        "Package: c\nStatus: purge ok not-installed\n\n"
                                        "Package: d\nStatus: install ok unpacked\nVersion: 1\n\n"
                                        "Package: e\nStatus: install ok installed\nVersion: 2\n");
    EXPECT_EQ(pkgs, (std::map<std::string, std::string>{{"e", "2"}}));
}

TEST(DpkgStatus, FieldsInAnyOrderCrlfAndNoFinalNewline) {
    const auto pkgs = parse_dpkg_status("Version: 1.0\r\nStatus: install ok installed\r\n"
                                        "Package: x\r\n\r\n"
                                        "Package: y\nStatus: install ok installed\nVersion: 2.0");
    EXPECT_EQ(pkgs, (std::map<std::string, std::string>{{"x", "1.0"}, {"y", "2.0"}}));
}

TEST(DpkgStatus, ContinuationLinesAreNotFields) {
    const auto pkgs = parse_dpkg_status("Package: z\nStatus: install ok installed\nVersion: 3\n"
                                        "Description: short\n Package: fake\n Version: 9\n");
    EXPECT_EQ(pkgs, (std::map<std::string, std::string>{{"z", "3"}}));
}

TEST(DpkgStatus, StatusMustBeExact) {
    // dpkg writes single spaces; a mangled line is not trusted to mean installed.
    const auto pkgs = parse_dpkg_status("Package: a\nStatus: install  ok installed\nVersion: 1\n\n"
                                        "Package: b\nStatus: install ok installed extra\n"
                                        "Version: 1\n");
    EXPECT_TRUE(pkgs.empty());
}

TEST(DpkgStatus, Garbage) {
    EXPECT_TRUE(parse_dpkg_status("").empty());
    EXPECT_TRUE(parse_dpkg_status("\n\n\n").empty());
    EXPECT_TRUE(parse_dpkg_status("random text\nwith lines\n").empty());
    EXPECT_TRUE(parse_dpkg_status("Package: noversion\nStatus: install ok installed\n").empty());
}

TEST(NvidiaPackageFilter, KeepsTheStack) {
    for (const char* name :
         {"nvidia-driver-535", "nvidia-open", "libnvidia-compute-580", "cuda-toolkit-12-4",
          "cuda-keyring", "cuda-drivers-fabricmanager-535", "libcudnn8", "cudnn9-cuda-12",
          "libcudnn9-cuda-12", "libnccl2", "libnccl-dev", "datacenter-gpu-manager-4-cuda12",
          "nvidia-container-toolkit", "libnvidia-container1",
          "linux-modules-nvidia-580-open-generic", "nvidia-fabricmanager-580", "libcuda1"}) {
        EXPECT_TRUE(is_nvidia_package(name)) << name;
    }
}

TEST(NvidiaPackageFilter, DropsTheRest) {
    for (const char* name : {"bash", "libcurl4", "libcurl3-gnutls", "curl", "kmod", "dkms",
                             "linux-headers-generic", "barracuda"}) {
        EXPECT_FALSE(is_nvidia_package(name)) << name;
    }
}

} // namespace
} // namespace gpuprov
