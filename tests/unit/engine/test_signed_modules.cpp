// Secure Boot on Ubuntu (issue 23 item 1): `driver.flavor: server` installs Canonical's signed
// precompiled modules the way ubuntu-drivers --gpgpu picks them, and every other way to a module
// (DKMS, whatever the flavour) stays blocked by preflight with the fix.
#include "driver_signed.hpp"
#include "host_builder.hpp"

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kUbuntuKernel = "6.8.0-50-generic";

TEST(UbuntuKernelFlavour, IsWhatFollowsTheAbiNumber) {
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-50-generic"), "generic");
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-1015-aws"), "aws");
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-50-generic-64k"), "generic-64k");
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-1017-nvidia"), "nvidia");
}

TEST(UbuntuKernelFlavour, IsEmptyForReleasesWithoutAnAbiAndFlavour) {
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0"), "");
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-50"), "");
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-50-"), "");
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0-rc1-custom"), ""); // no ABI number
    EXPECT_EQ(ubuntu_kernel_flavour("6.8.0--generic"), "");
}

TEST(SignedModulePackages, AreTheHeadlessUserspaceThisKernelsModuleAndTheFlavourMeta) {
    EXPECT_EQ(steps::signed_module_packages("580", false, kUbuntuKernel),
              (Strings{"nvidia-headless-no-dkms-580-server", "nvidia-utils-580-server",
                       "linux-modules-nvidia-580-server-6.8.0-50-generic",
                       "linux-modules-nvidia-580-server-generic"}));
    EXPECT_EQ(steps::signed_module_packages("580", true, "6.8.0-1015-aws"),
              (Strings{"nvidia-headless-no-dkms-580-server-open", "nvidia-utils-580-server",
                       "linux-modules-nvidia-580-server-open-6.8.0-1015-aws",
                       "linux-modules-nvidia-580-server-open-aws"}));
    EXPECT_TRUE(steps::signed_module_packages("580", false, "6.8.0").empty());
}

/// openssl is installed (the secure-boot step looks before it plans a key).
void script_openssl(TestHost& host) {
    host.sys.add_file("/usr/bin/openssl", "");
}

struct SignedModules : ApplyTest {
    /// The engine profile on an NVSwitch-less Ubuntu 24.04 host, with the given driver.
    Profile ubuntu(const std::string& flavor) {
        auto p = profile;
        p.driver->branch = "580";
        p.driver->flavor = flavor;
        p.cuda->version = "13.0";
        p.host = {};
        return p;
    }
    /// Ubuntu 24.04 with Secure Boot on, running an Ubuntu generic kernel without its headers
    /// (precompiled modules need none).
    static void secure_boot_ubuntu(TestHost& host) {
        script_openssl(host);
        host.sys.add_file("/proc/sys/kernel/osrelease", kUbuntuKernel + "\n");
        host.sys.add_file("/lib/modules/" + kUbuntuKernel + "/modules.dep", "");
    }
};

TEST_F(SignedModules, ServerFlavourUnderSecureBootInstallsCanonicalsSignedModules) {
    TestHost host({.nvswitches = 0, .secure_boot = true, .os = "ubuntu-24.04"});
    secure_boot_ubuntu(host);
    auto p = ubuntu("server");
    p.driver->hold = true;
    StepRunner run(host, p);
    ASSERT_EQ(run.facts().kernel, kUbuntuKernel);
    const auto pre = run.check("preflight");
    EXPECT_EQ(pre.status, StepStatus::satisfied) << pre.reason;
    EXPECT_TRUE(pre.installs.empty()) << "no kernel headers: nothing is compiled";
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    const auto installs = specs(r.installs);
    for (const auto* name : {"nvidia-headless-no-dkms-580-server", "nvidia-utils-580-server",
                             "linux-modules-nvidia-580-server-6.8.0-50-generic",
                             "linux-modules-nvidia-580-server-generic"}) {
        EXPECT_TRUE(std::any_of(installs.begin(), installs.end(),
                                [&](const std::string& s) { return s.starts_with(name); }))
            << name << " not in " << join(installs, " ");
    }
    EXPECT_FALSE(std::any_of(installs.begin(), installs.end(), [](const std::string& s) {
        return s.starts_with("nvidia-driver-580-server");
    })) << "the DKMS package: its module is unsigned";
    // Held, the module packages would hold the kernel metapackage back with them.
    EXPECT_FALSE(r.hold_installs);
    EXPECT_TRUE(std::any_of(r.changes.begin(), r.changes.end(), [](const Change& c) {
        return contains(c.detail,
                        "Canonical-signed precompiled modules for kernel 6.8.0-50-generic");
    }));
}

TEST_F(SignedModules, ServerFlavourWithoutSecureBootKeepsUbuntusDkmsPackage) {
    TestHost host({.nvswitches = 0, .os = "ubuntu-24.04"});
    secure_boot_ubuntu(host); // the kernel only: the firmware says Secure Boot is off
    const auto p = ubuntu("server");
    StepRunner run(host, p);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), Strings{"nvidia-driver-580-server"});
}

// The exemption issue 23 found: `server` skipped the Secure Boot judgement everywhere, though
// outside the signed path it is a DKMS package. Now only Canonical's signed modules do: every
// DKMS flavour gets the machine owner key (test_mok.cpp).
TEST_F(SignedModules, OnlyTheSignedPathSkipsTheMachineOwnerKey) {
    for (const std::string flavor : {"server", "open", "proprietary"}) {
        TestHost host({.nvswitches = 0, .secure_boot = true, .os = "ubuntu-24.04"});
        secure_boot_ubuntu(host);
        const auto p = ubuntu(flavor);
        StepRunner run(host, p);
        const auto r = run.check("secure-boot");
        if (flavor == "server") {
            EXPECT_EQ(r.status, StepStatus::skipped) << r.reason;
            EXPECT_TRUE(contains(r.reason, "signed by Canonical")) << r.reason;
        } else {
            EXPECT_NE(r.status, StepStatus::skipped) << flavor << ": " << r.reason;
        }
    }
    // Off Ubuntu `server` is no signed path (nor a package): the key is planned as for any DKMS.
    TestHost debian({.secure_boot = true});
    script_openssl(debian);
    auto p = profile;
    p.driver->flavor = "server";
    StepRunner run(debian, p);
    EXPECT_NE(run.check("secure-boot").status, StepStatus::skipped);
}

/// `modinfo -k KERNEL nvidia` as kmod prints it for Canonical's precompiled module (the path
/// linux-modules-nvidia-<b>-server-<kernel> links it to), signed by `signer` with key
/// `sig_key`; no sig_* fields when `signer` is empty.
std::string modinfo_precompiled(const std::string& signer, const std::string& sig_key) {
    std::string out = "filename:       /lib/modules/" + kUbuntuKernel +
                      "/kernel/nvidia-580srv/nvidia.ko\n"
                      "version:        580.95.05\n"
                      "license:        NVIDIA\n"
                      "name:           nvidia\n"
                      "vermagic:       " +
                      kUbuntuKernel + " SMP preempt mod_unload modversions \n";
    if (!signer.empty()) {
        out += "sig_id:         PKCS#7\nsigner:         " + signer +
               "\nsig_key:        " + sig_key +
               "\nsig_hashalgo:   sha256\nsignature:      41:72:A0:52:61:DF:0E:38:\n"
               "\t\t80:97:F1:4D:C4:86:09:AF\n";
    }
    return out;
}

// Secure Boot verify on the signed path has no machine owner key to look at, but it still proves
// the module the running kernel loads is signed by the key Ubuntu's kernels trust; anything else
// (unsigned, another signer) fails with the fix.
TEST_F(SignedModules, VerifyProvesTheRunningKernelsModuleIsSignedByCanonical) {
    TestHost host({.nvswitches = 0, .secure_boot = true, .os = "ubuntu-24.04"});
    secure_boot_ubuntu(host);
    std::string signer = "Canonical Ltd. Kernel Module Signing";
    std::string key = "3B:8B:60:D1:3A:7E";
    Strings asked;
    host.sys.on_command_prefix({"modinfo"}, [&](const Command& c) {
        asked = c.argv;
        return CommandResult{.exit_code = 0, .out = modinfo_precompiled(signer, key)};
    });
    const auto p = ubuntu("server");
    StepRunner run(host, p);
    const auto find = [&] {
        const auto all = run.step("secure-boot").verify(run.ctx(), host.sys);
        EXPECT_EQ(all.size(), 1U) << "no machine owner key outcome on the signed path";
        return all.empty() ? CheckOutcome{} : all.front();
    };
    auto c = find();
    EXPECT_EQ(asked, (Strings{"modinfo", "-k", kUbuntuKernel, "nvidia"}));
    EXPECT_EQ(c.id, "secure-boot.module-signer");
    EXPECT_TRUE(c.passed) << c.found;
    EXPECT_EQ(c.found, "signed by Canonical Ltd. Kernel Module Signing (key 3B8B60D13A7E)");

    signer = "gpuprov DKMS module signing key";
    c = find();
    EXPECT_FALSE(c.passed);
    EXPECT_TRUE(contains(c.found, "not by the distribution's module key")) << c.found;
    EXPECT_TRUE(contains(c.fix, "linux-modules-nvidia-<branch>-server-" + kUbuntuKernel)) << c.fix;

    signer.clear();
    c = find();
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.found, "the nvidia module is unsigned");

    host.sys.on_command_prefix({"modinfo"}, [](const Command&) {
        return CommandResult{.exit_code = 1, .err = "modinfo: ERROR: Module nvidia not found.\n"};
    });
    c = find();
    EXPECT_FALSE(c.passed);
    EXPECT_TRUE(contains(c.found, "modinfo failed")) << c.found;
}

TEST_F(SignedModules, AKernelThatIsNotUbuntusBlocksWithTheReason) {
    TestHost host({.nvswitches = 0, .secure_boot = true, .os = "ubuntu-24.04"});
    host.sys.add_file("/proc/sys/kernel/osrelease", "6.8.0\n");
    const auto p = ubuntu("server");
    StepRunner run(host, p);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "kernel 6.8.0 is not an Ubuntu kernel")) << r.reason;
}

} // namespace
