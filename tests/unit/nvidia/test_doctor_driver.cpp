#include "doctor_test_util.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>

using namespace gpuprov;
using namespace gpuprov::testing;

TEST(DoctorDriver, HealthyHostHasNoFindings) {
    DoctorHost h;
    EXPECT_TRUE(h.run().empty());
}

TEST(DoctorDriver, NoDriverPackage) {
    DoctorHost h;
    h.facts.packages.clear();
    h.sys.on_command(smi_query_argv(), answer_missing());
    const auto findings = h.run();
    EXPECT_EQ(finding_ids(findings), std::vector<std::string>{"driver-not-installed"});
    EXPECT_EQ(findings[0].severity, "error");
    EXPECT_NE(findings[0].fix.find("--only driver"), std::string::npos);
}

TEST(DoctorDriver, FixNamesTheProfileOfTheLastApply) {
    DoctorHost h;
    h.facts.packages.clear();
    h.sys.on_command(smi_query_argv(), answer_missing());
    EXPECT_EQ(h.run()[0].fix, "install the driver: gpuprov apply <your profile> --only driver");
    Journal journal;
    journal.profile = "/etc/gpuprov/site.yaml";
    h.options.journal = &journal;
    EXPECT_EQ(h.run()[0].fix,
              "install the driver: gpuprov apply /etc/gpuprov/site.yaml --only driver");
}

TEST(DoctorDriver, NoNvidiaGpuOnThePciBus) {
    // A CPU-only node: no NVIDIA device on PCI, no nvidia-smi. One finding, first, that says so,
    // not "install the driver".
    DoctorHost h;
    h.facts.gpus.clear();
    h.facts.packages.clear();
    h.sys.on_command(smi_query_argv(), answer_missing());
    auto findings = h.run();
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(findings[0].id, "no-nvidia-gpu");
    EXPECT_EQ(findings[0].summary, "no NVIDIA GPU on the PCI bus");
    EXPECT_EQ(find_finding(findings, "driver-not-installed"), nullptr);
    // Driver packages installed on such a node change nothing about the first finding.
    h.facts.packages = {{"nvidia-driver-535", "535.129.03-0ubuntu1"}};
    findings = h.run();
    ASSERT_FALSE(findings.empty());
    EXPECT_EQ(findings[0].id, "no-nvidia-gpu");
    EXPECT_EQ(find_finding(findings, "driver-not-loaded"), nullptr);
    // nvidia-smi answering for GPUs the PCI scan missed (an unreadable /sys): not this finding.
    DoctorHost seen;
    seen.facts.gpus.clear();
    EXPECT_EQ(find_finding(seen.run(), "no-nvidia-gpu"), nullptr);
}

TEST(DoctorDriver, RebootPendingFromFileOrJournal) {
    DoctorHost h;
    script_query_error(h.sys, "error-driver-not-loaded.txt");
    h.sys.add_file("/var/run/reboot-required", "*** System restart required ***\n");
    h.sys.add_file("/var/run/reboot-required.pkgs", "nvidia-dkms-535\n");
    auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"driver-reboot-pending"});
    EXPECT_EQ(findings[0].evidence[1].excerpt, "nvidia-dkms-535");
    EXPECT_NE(findings[0].evidence[0].excerpt.find("couldn't communicate"), std::string::npos);

    DoctorHost j;
    script_query_error(j.sys, "error-driver-not-loaded-2lines.txt");
    Journal journal;
    journal.reboot_pending = true;
    j.options.journal = &journal;
    EXPECT_EQ(finding_ids(j.run()), std::vector<std::string>{"driver-reboot-pending"});
}

namespace {

const std::string kMokCert = "/var/lib/gpuprov/mok/mok.der";

/// `modinfo nvidia` as kmod prints it, signed by a certificate of serial `sig_key` (colon hex)
/// issued to `signer`, or unsigned (no sig_* fields) when `sig_key` is empty.
std::string modinfo_nvidia(const std::string& sig_key, const std::string& signer = "") {
    std::string out = "filename:       /lib/modules/5.15.0-91-generic/updates/dkms/nvidia.ko\n"
                      "version:        535.129.03\n"
                      "license:        NVIDIA\n"
                      "name:           nvidia\n";
    if (!sig_key.empty()) {
        out += "sig_id:         PKCS#7\nsigner:         " + signer +
               "\nsig_key:        " + sig_key +
               "\nsig_hashalgo:   sha256\nsignature:      5A:1F:0C:93\n";
    }
    return out;
}

/// The Secure Boot host whose module does not load, judged by the secure-boot step's own
/// comparison, with gpuprov's machine owner key (serial 9C4E0B2A17) in place and DKMS told to
/// sign with it; `test_key` is mokutil's answer for that key.
struct SecureBootDoctorHost : DoctorHost {
    SecureBootDoctorHost(const std::string& modinfo, const CommandResult& test_key) {
        script_query_error(sys, "error-driver-not-loaded.txt");
        facts.secure_boot = true;
        options.judge_signature = &module_trusted_at_boot;
        sys.add_file(kMokCert, "DER certificate");
        sys.add_file("/etc/dkms/framework.conf",
                     "mok_signing_key=\"/var/lib/gpuprov/mok/mok.key\"\nmok_certificate=\"" +
                         kMokCert + "\"\n");
        sys.on_command({"modinfo", "nvidia"}, answer_ok(modinfo));
        sys.on_command_prefix({"openssl", "x509"},
                              [](const Command&) { return answer_ok("serial=9C4E0B2A17\n"); });
        sys.on_command({"mokutil", "--test-key", kMokCert}, test_key);
        sys.on_command({"mokutil", "--list-enrolled"}, answer_ok("MokListRT is empty\n"));
    }
};

CommandResult mokutil_says(int exit_code, const std::string& words) {
    return {.exit_code = exit_code, .out = kMokCert + " " + words + "\n"};
}

} // namespace

TEST(DoctorDriver, SecureBootWithUnsignedModule) {
    SecureBootDoctorHost h(modinfo_nvidia(""), mokutil_says(0, "is already enrolled"));
    auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"secure-boot-unsigned-module"});
    // DKMS built it for this kernel (dkms status) and framework.conf names gpuprov's key: the
    // judgement's own fix, DKMS re-signing for the running kernel.
    EXPECT_EQ(findings[0].fix, "dkms autoinstall -k 5.15.0-91-generic --force (DKMS re-signs it "
                               "with the machine owner key /etc/dkms/framework.conf names)");
    // No key DKMS signs with yet: the secure-boot step first.
    h.sys.remove_file("/etc/dkms/framework.conf");
    findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"secure-boot-unsigned-module"});
    EXPECT_NE(findings[0].fix.find("--only secure-boot"), std::string::npos) << findings[0].fix;
}

// Signed is not trusted: a key that is neither gpuprov's enrolled one, nor the distribution's,
// nor in MokListRT is refused by the kernel all the same.
TEST(DoctorDriver, SecureBootWithAModuleSignedByAnUntrustedKey) {
    SecureBootDoctorHost h(modinfo_nvidia("51:D8:0F:3A", "Someone's signing key"),
                           mokutil_says(0, "is already enrolled"));
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"secure-boot-untrusted-module"});
    EXPECT_NE(findings[0].summary.find("'Someone's signing key' (key 51D80F3A)"), std::string::npos)
        << findings[0].summary;
    EXPECT_NE(findings[0].summary.find("neither an enrolled machine owner key"), std::string::npos)
        << findings[0].summary;
    EXPECT_NE(findings[0].fix.find("dkms autoinstall -k 5.15.0-91-generic --force"),
              std::string::npos)
        << findings[0].fix;
}

// Signed by gpuprov's key, which still waits for MokManager: the console, not DKMS, is the fix.
TEST(DoctorDriver, SecureBootWithOurKeyAwaitingEnrolment) {
    SecureBootDoctorHost h(modinfo_nvidia("00:9C:4E:0B:2A:17", "gpuprov DKMS module signing key"),
                           mokutil_says(0, "is already in the enrollment request"));
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"secure-boot-untrusted-module"});
    EXPECT_NE(findings[0].summary.find("awaits enrolment"), std::string::npos)
        << findings[0].summary;
    EXPECT_NE(findings[0].fix.find("MokManager"), std::string::npos) << findings[0].fix;
}

TEST(DoctorDriver, SecureBootWithATrustedSignerIsNotThisProblem) {
    // Signed by gpuprov's enrolled key: the generic finding remains.
    SecureBootDoctorHost h(modinfo_nvidia("00:9C:4E:0B:2A:17", "gpuprov DKMS module signing key"),
                           mokutil_says(0, "is already enrolled"));
    EXPECT_EQ(finding_ids(h.run()), std::vector<std::string>{"driver-not-loaded"});
    // Not judged (no judge passed in, or modinfo cannot answer): no guess either way.
    SecureBootDoctorHost unjudged(modinfo_nvidia(""), mokutil_says(0, "is already enrolled"));
    unjudged.options.judge_signature = nullptr;
    EXPECT_EQ(finding_ids(unjudged.run()), std::vector<std::string>{"driver-not-loaded"});
    SecureBootDoctorHost blind(modinfo_nvidia(""), mokutil_says(0, "is already enrolled"));
    blind.sys.on_command({"modinfo", "nvidia"},
                         {.exit_code = 1, .err = "modinfo: ERROR: Module nvidia not found.\n"});
    EXPECT_EQ(finding_ids(blind.run()), std::vector<std::string>{"driver-not-loaded"});
}

TEST(DoctorDriver, NouveauStillBound) {
    DoctorHost h;
    script_query_error(h.sys, "error-driver-not-loaded.txt");
    PciGpu gpu;
    gpu.address = "0000:17:00.0";
    gpu.driver = "nouveau";
    h.facts.gpus.push_back(gpu);
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"nouveau-bound"});
    EXPECT_EQ(findings[0].evidence[1].command, "/sys/bus/pci/devices/0000:17:00.0/driver");
}

// Ubuntu 26.04's nova_core holds a Turing-or-newer GPU (its PCI driver registers as "NovaCore"):
// named, with the link as evidence and the nouveau step's blacklist plus a reboot as the fix.
TEST(DoctorDriver, NovaCoreStillBound) {
    DoctorHost h;
    script_query_error(h.sys, "error-driver-not-loaded.txt");
    h.facts.gpus.front().driver = "NovaCore";
    h.facts.nova_core_loaded = true;
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"nova-core-bound"});
    EXPECT_EQ(findings[0].severity, "error");
    EXPECT_EQ(findings[0].evidence[1].command, "/sys/bus/pci/devices/0000:17:00.0/driver");
    EXPECT_EQ(findings[0].evidence[1].excerpt, "-> NovaCore");
    EXPECT_NE(findings[0].fix.find("nova_core"), std::string::npos) << findings[0].fix;
    EXPECT_NE(findings[0].fix.find("--only nouveau"), std::string::npos) << findings[0].fix;
    EXPECT_NE(findings[0].fix.find("reboot"), std::string::npos) << findings[0].fix;
}

TEST(DoctorDriver, NvmlMismatchNamesBothVersions) {
    DoctorHost h;
    script_query_error(h.sys, "error-nvml-mismatch.txt");
    h.sys.add_file("/proc/driver/nvidia/version",
                   read_fixture("cmd/files/proc-driver-version-515.txt"));
    const auto findings = h.run();
    ASSERT_EQ(finding_ids(findings), std::vector<std::string>{"nvml-mismatch"});
    EXPECT_EQ(findings[0].summary, "NVML driver/library version mismatch: userspace 535.129.03, "
                                   "loaded kernel module 515.76");
    EXPECT_NE(findings[0].fix.find("reboot"), std::string::npos);
}

TEST(DoctorDriver, KernelUpgradedWithoutDkmsBuild) {
    DoctorHost h;
    h.facts.kernel = "6.8.0-45-generic";
    script_query_error(h.sys, "error-driver-not-loaded.txt");
    const auto findings = h.run();
    ASSERT_NE(find_finding(findings, "dkms-module-missing"), nullptr);
    const auto& f = *find_finding(findings, "dkms-module-missing");
    EXPECT_NE(f.fix.find("linux-headers-6.8.0-45-generic"), std::string::npos);
    EXPECT_NE(f.evidence[0].excerpt.find("5.15.0-91-generic"), std::string::npos);
}

// Installed, but DKMS built the module for no kernel at all (the build failed, or the driver's
// BUILD_EXCLUSIVE_KERNEL skipped a kernel newer than it supports): not a kernel upgrade.
TEST(DoctorDriver, ModuleDkmsNeverBuiltPointsAtTheBuildNotAtHeaders) {
    DoctorHost h;
    h.facts.kernel = "6.12.12+bpo-amd64";
    script_query_error(h.sys, "error-driver-not-loaded.txt");
    h.sys.on_command({"dkms", "status"}, answer_ok(read_fixture("cmd/dkms/added-only-550.txt")));
    const auto findings = h.run();
    ASSERT_NE(find_finding(findings, "dkms-module-missing"), nullptr);
    const auto& f = *find_finding(findings, "dkms-module-missing");
    EXPECT_NE(f.summary.find("never built"), std::string::npos) << f.summary;
    EXPECT_NE(f.fix.find("/var/lib/dkms/nvidia/550.90.07/build/make.log"), std::string::npos)
        << f.fix;
    EXPECT_NE(f.fix.find("-k 6.12.12+bpo-amd64"), std::string::npos) << f.fix;
}

TEST(DoctorDriver, OldDkmsFormatForRunningKernelIsFine) {
    DoctorHost h;
    h.facts.kernel = "5.11.0-36-generic";
    h.sys.on_command({"dkms", "status"}, answer_ok(read_fixture("cmd/dkms/old-form-460.txt")));
    EXPECT_EQ(find_finding(h.run(), "dkms-module-missing"), nullptr);
}

TEST(DoctorDriver, ElHostReadsTheRpmDatabase) {
    // Facts of an AlmaLinux 9 host whose rpm database holds NVIDIA's open driver (real rpm -qa
    // output): doctor must see the packages rather than report none installed.
    FakeSystem el;
    el.load_tree("hosts/alma-9");
    el.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
        return CommandResult{.out = read_fixture("cmd/rpm/qa-el9-570-open.txt")};
    });
    DoctorHost h;
    h.facts = detect_facts(el, Matrix::builtin());
    ASSERT_EQ(h.facts.packages.count("nvidia-driver"), 1u);
    h.facts.secure_boot = false; // the tree's firmware says on; that finding is another test's
    h.sys.on_command(smi_query_argv(), answer_missing());
    const auto findings = h.run();
    EXPECT_EQ(find_finding(findings, "driver-not-installed"), nullptr);
    ASSERT_FALSE(findings.empty());
    bool names_rpm = false;
    for (const auto& f : findings) {
        for (const auto& e : f.evidence) {
            names_rpm = names_rpm || e.excerpt.find("kmod-nvidia-open-dkms") != std::string::npos;
        }
    }
    EXPECT_TRUE(names_rpm) << findings[0].summary;
}
