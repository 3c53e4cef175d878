// Every installed kernel gets what DKMS needs (issue 21): its build tree (kernel-devel-<k> on EL,
// linux-headers-<k> on Debian/Ubuntu), planned when a repository carries it (apt/dnf asked) and
// named as a finding with its fix when none does; and the NVIDIA module built for it
// (`dkms autoinstall -k <k>`: NVIDIA's DKMS packages build for the running kernel only), judged
// by `dkms status` per kernel in verify. On a Rocky 10 fixture host with a second, newer kernel.
#include "find_check.hpp"
#include "host_builder.hpp"

#include <gpuprov/package_manager.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kCudaUrl10 = "https://mirror.test/cuda/rhel10/x86_64/";
const std::string kRunning = "6.12.0-55.9.1.el10_0.x86_64"; // hosts/rocky-10's uname -r
const std::string kNext = "6.12.0-55.39.1.el10_0.x86_64";   // installed, not running
const std::string kNextDevel = "kernel-devel-" + kNext;
const std::string kAutoinstallNext = "dkms autoinstall -k " + kNext;

std::string rpm_line(const std::string& name, const std::string& version,
                     const std::string& release, const std::string& arch,
                     const Strings& provides = {}) {
    std::string out = "@@\t" + name + "\t(none)\t" + version + "\t" + release + "\t" + arch +
                      "\nP\t" + name + "\n";
    for (const auto& p : provides) {
        out += "P\t" + p + "\n";
    }
    return out;
}

/// Rocky 10 with EPEL, NVIDIA's rhel10 repository behind the mirror, the running kernel's build
/// tree, and a second installed kernel (kernel-core's vmlinuz and build link) whose kernel-devel
/// is not installed. dnf's repoquery answers from `repo_has`; dkms prints `dkms_status`.
struct TwoKernelHost {
    FakeSystem sys;
    std::string rpms;
    std::set<std::string> repo_has{kNextDevel};
    std::string dkms_status;
    std::vector<Strings> ran; ///< dkms autoinstall argvs

    TwoKernelHost() {
        sys.load_tree("hosts/rocky-10");
        sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db");
        sys.add_file("/etc/yum.repos.d/epel.repo", "[epel]\nname=Extra Packages\n");
        rpms = rpm_line("kernel-devel", "6.12.0", "55.9.1.el10_0", "x86_64") +
               rpm_line("kernel-headers", "6.12.0", "55.9.1.el10_0", "x86_64") +
               rpm_line("python3-dnf-plugin-versionlock", "4.7.0", "9.el10", "noarch",
                        {std::string(kVersionlockCommand)});
        for (const auto& k : {kRunning, kNext}) {
            sys.add_file("/lib/modules/" + k + "/vmlinuz", "kernel\n");
            sys.add_link("/lib/modules/" + k + "/build", "/usr/src/kernels/" + k);
        }
        sys.add_file("/usr/src/kernels/" + kRunning + "/Makefile", "");
        sys.on_command_prefix({"rpm", "-qa", "--qf"},
                              [this](const Command&) { return CommandResult{.out = rpms}; });
        sys.on_command_prefix({"dnf", "-q", "repoquery"}, [this](const Command& c) {
            const auto& spec = c.argv.back();
            return CommandResult{.out = repo_has.count(spec) != 0 ? spec + "\n" : ""};
        });
        sys.on_command_prefix({"dkms", "status"},
                              [this](const Command&) { return CommandResult{.out = dkms_status}; });
        sys.on_command_prefix({"dkms", "autoinstall"}, [this](const Command& c) {
            ran.push_back(c.argv);
            dkms_status += "nvidia/595.91.07, " + c.argv.back() + ", x86_64: installed\n";
            return CommandResult{};
        });
        sys.on_url(kKeyUrl, http_ok(read_fixture("engine/test-key.asc")));
        const auto repomd = read_fixture("repo/rpm-el10/cuda/repomd.xml");
        sys.on_url(kCudaUrl10 + "repodata/repomd.xml", http_ok(repomd));
        sys.on_url(kCudaUrl10 + "repodata/repomd.xml.asc", http_ok("(detached signature)\n"));
        const auto at = repomd.find("href=\"repodata/", repomd.find("type=\"primary\""));
        const auto location = repomd.substr(at + 6, repomd.find('"', at + 6) - at - 6);
        sys.on_url(
            kCudaUrl10 + location,
            http_ok(read_fixture("repo/rpm-el10/cuda/" + location.substr(location.find('/') + 1))));
        sys.on_command_prefix({"gpgv"}, [](const Command&) {
            const auto f = fingerprint();
            return CommandResult{.out = "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + f +
                                        " 2026-12-02 1796218524 0 4 0 1 10 00 " + f + "\n"};
        });
    }

    /// The newer kernel's kernel-devel installed (its tree behind kernel-core's link).
    void install_next_devel() {
        rpms += rpm_line("kernel-devel", "6.12.0", "55.39.1.el10_0", "x86_64");
        sys.add_file("/usr/src/kernels/" + kNext + "/Makefile", "");
        sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db2"); // the rpm database changed
    }

    /// The 595 driver installed, locked and loaded; dkms built it for the running kernel only.
    void converge_driver() {
        rpms += read_fixture("cmd/rpm/qa-el10-595-open.txt");
        std::string locks;
        for (const auto* n : {"nvidia-open", "kmod-nvidia-open-dkms", "nvidia-driver",
                              "nvidia-driver-cuda", "nvidia-driver-libs", "nvidia-kmod-common",
                              "libnvidia-gpucomp", "libnvidia-ml", "nvidia-driver-cuda-libs",
                              "nvidia-persistenced", "nvidia-modprobe", "libnvidia-cfg"}) {
            locks += std::string(n) + "-3:595.91.07-1.el10.*\n";
        }
        sys.add_file("/etc/dnf/plugins/versionlock.list", locks);
        sys.add_file("/proc/driver/nvidia/version",
                     "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  595.91.07  Release "
                     "Build  (dvs-builder@U22-I3-AD05-51-5)  Tue Mar  3 19:14:46 UTC 2026\n");
        sys.add_file("/proc/modules", "nvidia 14381056 0 - Live 0x0000000000000000\n");
        sys.add_file("/usr/sbin/dkms", "#!/bin/sh\n");
        // Verify's other driver checks read nvidia-smi; this test is about dkms status alone.
        sys.on_command_prefix({"nvidia-smi"}, [](const Command&) {
            CommandResult r;
            r.exit_code = 127;
            r.not_found = true;
            return r;
        });
        dkms_status = "nvidia/595.91.07, " + kRunning + ", x86_64: installed\n";
        sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db3");
    }
};

Profile el10_profile() {
    return load_profile_text("name: el10\nhost: {os: [rhel-10]}\nrepositories:\n  cuda:\n"
                             "    url: https://mirror.test/cuda/{distro}/{arch}/\n"
                             "    key_url: " +
                                 kKeyUrl + "\n    key_fingerprint: " + fingerprint() +
                                 "\ndriver: {branch: \"595\", flavor: open, hold: true}\n",
                             "el10.yaml", matrix());
}

bool has_note(const CheckResult& r, const std::string& text) {
    return std::any_of(r.changes.begin(), r.changes.end(), [&](const Change& c) {
        return c.kind == Change::Kind::note && contains(c.detail + c.target, text);
    });
}

} // namespace

TEST(KernelTrees, FactsListEveryInstalledKernelWithWhetherDkmsCanBuildForIt) {
    TwoKernelHost host;
    // A directory DKMS left for a removed kernel: no vmlinuz, not a kernel to boot.
    host.sys.add_file("/lib/modules/6.12.0-1.el10.x86_64/extra/nvidia.ko", "");
    {
        const auto f = detect_facts(host.sys, matrix());
        ASSERT_EQ(f.kernels.size(), 2U);
        EXPECT_EQ(f.kernels[0].release, kNext); // sorted by name
        EXPECT_FALSE(f.kernels[0].build_tree);  // the link dangles: no kernel-devel
        EXPECT_EQ(f.kernels[1].release, kRunning);
        EXPECT_TRUE(f.kernels[1].build_tree);
    }
    // The tree alone, without its rpm (a leftover directory), is no build tree on EL.
    host.sys.add_file("/usr/src/kernels/" + kNext + "/Makefile", "");
    EXPECT_FALSE(detect_facts(host.sys, matrix()).kernels[0].build_tree);
    host.install_next_devel();
    EXPECT_TRUE(detect_facts(host.sys, matrix()).kernels[0].build_tree);
}

TEST(KernelTrees, PreflightInstallsTheOtherKernelsDevelAndTheDriverBuildsForIt) {
    TwoKernelHost host;
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    const auto p = run.check("preflight");
    ASSERT_EQ(p.status, StepStatus::pending) << p.reason;
    EXPECT_EQ(specs(p.installs), Strings{kNextDevel}); // not the running kernel's: installed
    EXPECT_TRUE(p.installs.front().version.empty());   // the distribution's build of it
    EXPECT_TRUE(contains(p.reason, "build tree of every installed kernel")) << p.reason;
    EXPECT_TRUE(contains(p.reason, kNext)) << p.reason;

    const auto d = run.check("driver");
    ASSERT_EQ(d.status, StepStatus::pending) << d.reason;
    const auto cmds = targets(d, Change::Kind::command);
    EXPECT_NE(std::find(cmds.begin(), cmds.end(), kAutoinstallNext), cmds.end());
    // The package's own %post builds for the running kernel.
    EXPECT_EQ(std::find(cmds.begin(), cmds.end(), "dkms autoinstall -k " + kRunning), cmds.end());
}

TEST(KernelTrees, AKernelWhoseDevelNoRepositoryCarriesIsAFindingWithItsFixNotAnInstall) {
    TwoKernelHost host;
    host.repo_has.clear(); // dnf: no enabled repository has it (a point release moved on)
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    const auto p = run.check("preflight");
    EXPECT_NE(p.status, StepStatus::blocked) << p.reason; // the running kernel is fine
    EXPECT_TRUE(p.installs.empty()) << specs(p.installs).front();
    EXPECT_TRUE(has_note(p, "no enabled repository carries " + kNextDevel));
    EXPECT_TRUE(has_note(p, "dnf remove kernel-core-" + kNext));
    const auto d = run.check("driver");
    const auto cmds = targets(d, Change::Kind::command);
    EXPECT_EQ(std::find(cmds.begin(), cmds.end(), kAutoinstallNext), cmds.end());

    // dnf could not answer (its query failed): planned, and the transaction's simulation asks.
    host.sys.on_command_prefix({"dnf", "-q", "repoquery"}, [](const Command&) {
        return CommandResult{.exit_code = 1, .err = "Error: Failed to download metadata\n"};
    });
    StepRunner unknown(host.sys, profile);
    EXPECT_EQ(specs(unknown.check("preflight").installs), Strings{kNextDevel});
}

TEST(KernelTrees, AConvergedDriverIsBuiltForTheOtherKernelThenVerifies) {
    TwoKernelHost host;
    host.install_next_devel();
    host.converge_driver();
    const auto profile = el10_profile();
    {
        StepRunner run(host.sys, profile);
        EXPECT_EQ(run.check("preflight").status, StepStatus::satisfied);
        const auto v = run.step("driver").verify(run.ctx(), host.sys);
        const auto* dk = gpuprov::testing::find_check(v, "driver.dkms-kernels");
        ASSERT_NE(dk, nullptr);
        EXPECT_FALSE(dk->passed);
        EXPECT_EQ(dk->found, "not installed for " + kNext);
        EXPECT_EQ(dk->fix, kAutoinstallNext);

        const auto d = run.check("driver");
        ASSERT_EQ(d.status, StepStatus::pending) << d.reason;
        EXPECT_TRUE(d.installs.empty());
        EXPECT_EQ(targets(d, Change::Kind::command), Strings{kAutoinstallNext});
        ASSERT_EQ(run.step("driver").apply(run.ctx(), host.sys, d, ApplyPhase::configure),
                  StepStatus::done);
        ASSERT_EQ(host.ran.size(), 1U);
        EXPECT_EQ(host.ran.front(), (Strings{"dkms", "autoinstall", "-k", kNext}));
    }
    StepRunner after(host.sys, profile);
    EXPECT_EQ(after.check("driver").status, StepStatus::satisfied);
    const auto v = after.step("driver").verify(after.ctx(), host.sys);
    const auto* dk = gpuprov::testing::find_check(v, "driver.dkms-kernels");
    ASSERT_NE(dk, nullptr);
    EXPECT_TRUE(dk->passed) << dk->found;
    EXPECT_TRUE(contains(dk->expected, kNext) && contains(dk->expected, kRunning)) << dk->expected;
}

TEST(KernelTrees, AKernelWithoutItsTreeFailsVerifyNamingThePackage) {
    TwoKernelHost host;
    host.converge_driver(); // kernel-devel of the newer kernel never installed
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    const auto v = run.step("driver").verify(run.ctx(), host.sys);
    const auto* dk = gpuprov::testing::find_check(v, "driver.dkms-kernels");
    ASSERT_NE(dk, nullptr);
    EXPECT_FALSE(dk->passed);
    EXPECT_EQ(dk->fix, "dnf install " + kNextDevel + "; " + kAutoinstallNext);
}

TEST(KernelTrees, AptSaysWhetherARepositoryCarriesAPackage) {
    FakeSystem sys;
    HostFacts f;
    f.os.family = "debian";
    f.os.id = "debian";
    const auto pm = make_package_manager(f);
    ASSERT_NE(pm, nullptr);
    // apt-cache policy as apt 2.6 prints it (C locale).
    sys.on_command({"apt-cache", "policy", "linux-headers-6.1.0-28-amd64"},
                   CommandResult{.out = "linux-headers-6.1.0-28-amd64:\n  Installed: (none)\n"
                                        "  Candidate: 6.1.119-1\n  Version table:\n"
                                        "     6.1.119-1 500\n        500 "
                                        "http://deb.debian.org/debian bookworm/main amd64 "
                                        "Packages\n"});
    sys.on_command({"apt-cache", "policy", "linux-headers-6.1.0-9-amd64"},
                   CommandResult{.out = "linux-headers-6.1.0-9-amd64:\n  Installed: (none)\n"
                                        "  Candidate: (none)\n  Version table:\n"});
    sys.on_command({"apt-cache", "policy", "linux-headers-6.1.0-1-amd64"}, CommandResult{});
    sys.on_command({"apt-cache", "policy", "linux-headers-broken"},
                   CommandResult{.exit_code = 100, .err = "E: cache is broken\n"});
    EXPECT_EQ(pm->available(sys, "linux-headers-6.1.0-28-amd64"), std::optional<bool>(true));
    EXPECT_EQ(pm->available(sys, "linux-headers-6.1.0-9-amd64"), std::optional<bool>(false));
    EXPECT_EQ(pm->available(sys, "linux-headers-6.1.0-1-amd64"), std::optional<bool>(false));
    EXPECT_EQ(pm->available(sys, "linux-headers-broken"), std::nullopt);
}
