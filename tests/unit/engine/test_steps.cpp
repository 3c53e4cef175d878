// Each step's check on the test host: fresh → pending with the exact changes and pins; state in
// place → satisfied; left out of the profile → skipped; and the ways it blocks.
#include "host_builder.hpp"
#include "kernel_hook_fixture.hpp"

#include <gpuprov/error.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

struct Steps : ::testing::Test {
    Profile profile = load_test_profile();
};

// ---- preflight ----

TEST_F(Steps, PreflightSatisfiedOnTheProfilesHost) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
    EXPECT_TRUE(r.installs.empty());
    EXPECT_TRUE(r.changes.empty());
}

TEST_F(Steps, PreflightInstallsMissingKernelHeadersFromTheDistro) {
    TestHost host({.kernel_headers = false});
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::pending);
    // The distribution's own version: no NVIDIA pin.
    EXPECT_EQ(specs(r.installs), Strings{"linux-headers-" + kKernel});
    EXPECT_TRUE(contains(r.reason, "kernel headers for " + kKernel)) << r.reason;
}

// The built-in profiles on the hosts their scenarios describe (disks from
// tests/fixtures/disks): a 2 TB NVMe is 1863 GiB, a 1 TB SSD 931 GiB.
struct ScenarioDisk {
    const char* tree;
    std::uint64_t fs_total_gib; ///< what statvfs reports for the filesystem on it
};

CheckResult preflight_of(const std::string& builtin, TestHost& host) {
    const auto p = load_profile(builtin, matrix());
    StepRunner run(host, p);
    return run.check("preflight");
}

TEST(BuiltinPreflight, CvTrainPassesOnItsScenarioHostWithA2TbNvme) {
    TestHost host; // 4x A100 SXM4 80GB, 257 GiB RAM, Debian 12
    host.sys.load_tree("disks/nvme-2tb");
    host.sys.set_disk("/", {.total_bytes = 1833ull << 30, .free_bytes = 1740ull << 30});
    const auto r = preflight_of("cv-train", host);
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
}

TEST(BuiltinPreflight, NlpInferPassesOnItsScenarioHostWithA1TbSsd) {
    TestHost host({.gpus = 2, .device_id = 0x1eb8, .nvswitches = 0}); // 2x T4
    host.sys.load_tree("disks/ssd-1tb");
    host.sys.set_disk("/", {.total_bytes = 915ull << 30, .free_bytes = 860ull << 30});
    const auto r = preflight_of("nlp-infer", host);
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
}

TEST(BuiltinPreflight, CvTrainRefusesASataSsdAndATooSmallDisk) {
    TestHost host;
    host.sys.load_tree("disks/ssd-1tb");
    host.sys.set_disk("/", {.total_bytes = 915ull << 30, .free_bytes = 860ull << 30});
    const auto r = preflight_of("cv-train", host);
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "needs a 1800 GiB disk under /; / (/dev/sda2 on sda) is 932 "
                                   "GiB"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "needs / on NVMe; it is on / (/dev/sda2 on sda)")) << r.reason;
}

TEST(BuiltinPreflight, NlpInferRefusesASpinningDisk) {
    TestHost host({.gpus = 2, .device_id = 0x1eb8, .nvswitches = 0});
    host.sys.load_tree("disks/hdd-1tb");
    host.sys.set_disk("/", {.total_bytes = 930ull << 30, .free_bytes = 900ull << 30});
    const auto r = preflight_of("nlp-infer", host);
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "needs / on an SSD; / (/dev/sda1 on sda) is a rotating disk"))
        << r.reason;
}

TEST_F(Steps, PreflightChecksADataMountsSizeAndFreeSpace) {
    profile.host.disks = {
        DiskSpec{.path = "/srv/data set", .size_gib = 3500, .free_gib = 100, .nvme = true}};
    TestHost host;
    host.sys.load_tree("disks/lvm-nvme");
    host.sys.set_disk("/srv/data set", {.total_bytes = 3570ull << 30, .free_bytes = 50ull << 30});
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "needs 100 GiB free on /srv/data set; 50.0 GiB free"))
        << r.reason;
    EXPECT_FALSE(contains(r.reason, "disk under")) << r.reason; // 3577 GiB is enough
    EXPECT_FALSE(contains(r.reason, "NVMe")) << r.reason;
}

TEST_F(Steps, PreflightSaysWhenItCannotTellTheDisk) {
    profile.host.disks = {DiskSpec{.path = "/", .nvme = true}};
    TestHost host; // no /proc/self/mountinfo
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "cannot tell which disk holds /")) << r.reason;
}

TEST_F(Steps, PreflightBlocksOnTooFewGpusAndNamesWhatItFound) {
    TestHost host({.gpus = 2});
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "needs 4× A100 with ≥80 GiB; found 2× A100 SXM4 80GB"))
        << r.reason;
}

TEST_F(Steps, PreflightBlocksOnTheDebian12T4Host) {
    TestHost host;
    host.sys.load_tree("hosts/debian-12"); // 2× T4 on top: the A100s stay, so drop them
    for (const char* a : {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0"}) {
        host.sys.add_file(std::string("/sys/bus/pci/devices/") + a + "/vendor", "0x8086\n");
    }
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "found 2× T4")) << r.reason;
}

// Secure Boot is the secure-boot step's (test_mok.cpp): it signs the DKMS module with a machine
// owner key it enrols, so preflight no longer refuses the host.
TEST_F(Steps, PreflightLeavesSecureBootToTheSecureBootStep) {
    TestHost host({.secure_boot = true});
    StepRunner run(host, profile);
    ASSERT_EQ(run.facts().secure_boot, std::optional<bool>(true));
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
}

TEST_F(Steps, PreflightBlocksOnAnUnsupportedOs) {
    TestHost host;
    host.sys.add_file("/etc/os-release", read_fixture("os/amzn-2023/etc/os-release"));
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "unsupported OS 'Amazon Linux 2023")) << r.reason;
}

TEST_F(Steps, PreflightBlocksOnDiskSpaceAndListsEveryReason) {
    TestHost host({.gpus = 3, .free_gib = 5});
    StepRunner run(host, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "needs 20 GiB free on /; 5.0 GiB free")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "found 3× A100 SXM4 80GB")) << r.reason;
    // One line per unmet requirement, each with its own fix (issue 20 item 5).
    const auto lines = split(r.reason, '\n');
    ASSERT_EQ(lines.size(), 3U) << r.reason;
    EXPECT_EQ(lines[0], "2 host requirements are not met:");
    EXPECT_TRUE(starts_with(lines[1], "- needs 4× A100")) << lines[1];
    EXPECT_TRUE(contains(lines[1], "; fix: run on a host with those GPUs, or set host.gpus"));
    EXPECT_TRUE(starts_with(lines[2], "- needs 20 GiB free on /")) << lines[2];
    EXPECT_TRUE(contains(lines[2], "; fix: free space on /, or lower host.disk.free_gib"));
    // verify: one failed check each, the fix apart from the finding.
    const auto outcomes = run.step("preflight").verify(run.ctx(), host.sys);
    ASSERT_EQ(outcomes.size(), 2U);
    EXPECT_TRUE(starts_with(outcomes[0].found, "needs 4× A100")) << outcomes[0].found;
    EXPECT_EQ(outcomes[1].fix, "free space on /, or lower host.disk.free_gib");
    for (const auto& o : outcomes) {
        EXPECT_FALSE(o.passed);
        EXPECT_FALSE(contains(o.fix, o.found)) << o.fix;
    }
}

// ---- nouveau ----

TEST_F(Steps, NouveauPendingWritesTheBlacklistAndRebuildsTheInitramfs) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kBlacklistPath});
    EXPECT_EQ(targets(r, Change::Kind::command), Strings{"update-initramfs -u -k all"});
    EXPECT_TRUE(r.installs.empty());
}

TEST_F(Steps, NouveauSatisfiedWhenBlacklistedEvenIfStillLoaded) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file(kBlacklistPath, kBlacklist);
    host.sys.add_file("/boot/initrd.img-" + kKernel, "regenerated after the blacklist\n");
    StepRunner run(host, profile);
    const auto r = run.check("nouveau");
    EXPECT_EQ(r.status, StepStatus::satisfied);
    EXPECT_TRUE(contains(r.reason, "until the next reboot")) << r.reason;
}

TEST_F(Steps, NouveauSkippedWhenTheProfileKeepsIt) {
    profile.nouveau_blacklist = false;
    TestHost host;
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("nouveau").status, StepStatus::skipped);
}

TEST_F(Steps, NouveauApplyWritesTheExactFileThenRunsUpdateInitramfs) {
    TestHost host;
    StepRunner run(host, profile);
    const auto planned = run.check("nouveau");
    EXPECT_EQ(run.step("nouveau").apply(run.ctx(), host.sys, planned, ApplyPhase::prepare),
              StepStatus::done);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kBlacklist);
    EXPECT_EQ(host.sys.commands_ran,
              (std::vector<Strings>{{"update-initramfs", "-u", "-k", "all"}}));
    // The image now postdates the blacklist: a second check is satisfied.
    EXPECT_EQ(run.check("nouveau").status, StepStatus::satisfied);
}

TEST_F(Steps, NouveauApplyUndoesTheBlacklistWhenTheInitramfsFails) {
    TestHost host;
    host.sys.on_command({"update-initramfs", "-u", "-k", "all"},
                        {.exit_code = 1, .err = "E: no space\n"});
    StepRunner run(host, profile);
    const auto planned = run.check("nouveau");
    EXPECT_THROW(run.step("nouveau").apply(run.ctx(), host.sys, planned, ApplyPhase::prepare),
                 CommandError);
    EXPECT_FALSE(host.sys.exists(kBlacklistPath));
}

// ---- cuda-repo ----

TEST_F(Steps, CudaRepoPendingWithKeySourceAndOneRefresh) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::file), (Strings{kCudaKeyring, kCudaSourcePath}));
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{display_argv(refresh_argv(kCudaSourcePath))});
    EXPECT_TRUE(contains(r.changes[0].detail, fingerprint())) << r.changes[0].detail;
    // Plan reads the repository into gpuprov's own cache, never apt's lists.
    EXPECT_TRUE(host.sys.commands_ran.empty());
    for (const auto& f : host.sys.files_written) {
        EXPECT_TRUE(f.starts_with(kCacheDir)) << f;
    }
}

TEST_F(Steps, CudaRepoSatisfiedWithKeyAndSourceInPlaceWithoutTheNetwork) {
    TestHost host;
    converge_config(host);
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("cuda-repo").status, StepStatus::satisfied);
    EXPECT_TRUE(host.sys.urls_fetched.empty());
}

TEST_F(Steps, CudaRepoPendingWhenTheKeyringHoldsAnotherKey) {
    TestHost host;
    converge_config(host);
    host.sys.add_file(kCudaKeyring, read_fixture("repo/test-key.gpg"));
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("cuda-repo").status, StepStatus::pending);
}

TEST_F(Steps, CudaRepoBlockedWhenTheKeyDoesNotMatchThePin) {
    profile.repositories["cuda"].key_fingerprint =
        std::string(trim(read_fixture("repo/test-key.fpr")));
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "has fingerprint " + fingerprint())) << r.reason;
    EXPECT_TRUE(contains(r.reason, kKeyUrl)) << r.reason;
}

TEST_F(Steps, CudaRepoBlockedWhenTheSignatureDoesNotCoverTheInRelease) {
    if (!gpgv_installed()) {
        GTEST_SKIP() << "gpgv not installed (the scripted stand-in accepts any InRelease)";
    }
    TestHost host;
    auto inrelease = read_fixture("engine/cuda/InRelease");
    const auto at = inrelease.find("Label: cuda");
    ASSERT_NE(at, std::string::npos);
    inrelease.replace(at, 11, "Label: cudb"); // one byte changed after signing
    host.sys.on_url(kCudaUrl + "InRelease", http_ok(inrelease));
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "BAD signature")) << r.reason;
    EXPECT_EQ(run.check("cuda-toolkit").status, StepStatus::blocked);
}

/// The test host turned into Rocky 9, serving NVIDIA's rhel9 layout: repomd.xml, its detached
/// signature (gpgv scripted to accept it with the pinned key) and the real createrepo_c primary.
void make_el_host(TestHost& host) {
    host.sys.add_file("/etc/os-release", read_fixture("os/rocky-9/usr/lib/os-release"));
    const std::string url = "https://mirror.test/cuda/rhel9/x86_64/";
    host.sys.on_url(url + "repodata/repomd.xml", http_ok(read_fixture("repo/rpm/repomd.xml")));
    host.sys.on_url(url + "repodata/repomd.xml.asc", http_ok("(detached signature)\n"));
    const std::string primary =
        "repodata/7b33d53e4d072310042934c35dea2ac843ae94b09762cac577678bbc3de1f9f4-primary.xml.gz";
    host.sys.on_url(url + primary,
                    http_ok(read_fixture("repo/rpm/" + primary.substr(primary.find('/') + 1))));
    host.sys.on_command_prefix({"gpgv"}, [](const Command& c) {
        EXPECT_EQ(c.argv.size(), 7u); // keyring, status fd, detached signature, data on stdin
        const auto f = fingerprint();
        return CommandResult{.out = "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + f +
                                    " 2026-12-02 1796218524 0 4 0 1 10 00 " + f + "\n"};
    });
}

TEST_F(Steps, CudaRepoOnElIsADotRepoFileWithBothSignatureChecks) {
    TestHost host;
    make_el_host(host);
    StepRunner run(host, profile);
    ASSERT_EQ(run.facts().os.family, "rhel");
    const auto r = run.check("cuda-repo");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    std::vector<std::string> targets;
    for (const auto& c : r.changes) {
        targets.push_back(c.target);
    }
    EXPECT_EQ(targets,
              (std::vector<std::string>{"/etc/pki/rpm-gpg/gpuprov-cuda.asc",
                                        "/etc/yum.repos.d/gpuprov-cuda.repo",
                                        "dnf -y makecache --refresh --repo gpuprov-cuda"}));
    // The index plan resolves from is the rpm-md one.
    EXPECT_EQ(run.ctx().repos.repo("cuda").index->newest("nvidia-open")->version,
              "3:580.95.05-1.el9");

    // Real makecache leaves the repository's metadata in dnf's cache, which verify and the next
    // check compare with what gpuprov verified.
    const auto dnf_repomd =
        "/var/cache/dnf/" +
        dnf_cache_dir_name("gpuprov-cuda", "https://mirror.test/cuda/rhel9/x86_64/") +
        "/repodata/repomd.xml";
    host.sys.on_command_prefix(
        {"dnf", "-y", "makecache", "--refresh", "--repo", "gpuprov-cuda"}, [&](const Command&) {
            host.sys.add_file(dnf_repomd, read_fixture("repo/rpm/repomd.xml"));
            return CommandResult{};
        });
    run.step("cuda-repo").apply(run.ctx(), host.sys, r, ApplyPhase::sources);
    const auto repo = host.sys.file("/etc/yum.repos.d/gpuprov-cuda.repo").value_or("");
    EXPECT_TRUE(contains(repo, "[gpuprov-cuda]\n")) << repo;
    EXPECT_TRUE(contains(repo, "baseurl=https://mirror.test/cuda/rhel9/x86_64/\n")) << repo;
    EXPECT_TRUE(contains(repo, "gpgcheck=1\nrepo_gpgcheck=1\n")) << repo;
    EXPECT_TRUE(contains(repo, "gpgkey=file:///etc/pki/rpm-gpg/gpuprov-cuda.asc\n")) << repo;
    const auto key =
        parse_openpgp_key(host.sys.file("/etc/pki/rpm-gpg/gpuprov-cuda.asc").value_or(""));
    ASSERT_TRUE(key.key) << key.error;
    EXPECT_EQ(key.key->fingerprint, fingerprint());
    EXPECT_FALSE(host.sys.exists("/etc/apt/sources.list.d/gpuprov-cuda.sources"));
    EXPECT_EQ(run.check("cuda-repo").status, StepStatus::satisfied);
    // verify judges dnf's cache of the repository, not apt's lists.
    const auto outcomes = run.step("cuda-repo").verify(run.ctx(), host.sys);
    ASSERT_EQ(outcomes.size(), 2u);
    EXPECT_TRUE(outcomes[1].passed) << outcomes[1].found;
    EXPECT_EQ(outcomes[1].command, dnf_repomd);

    // `dnf clean all` empties the cache: verify says so and the check plans the refresh alone.
    host.sys.remove_file(dnf_repomd);
    const auto stale = run.step("cuda-repo").verify(run.ctx(), host.sys);
    EXPECT_FALSE(stale[1].passed);
    EXPECT_TRUE(contains(stale[1].found, "dnf has no metadata")) << stale[1].found;
    const auto again = run.check("cuda-repo");
    EXPECT_EQ(again.status, StepStatus::pending);
    EXPECT_EQ(enginetest::targets(again, Change::Kind::command),
              Strings{"dnf -y makecache --refresh --repo gpuprov-cuda"});
    EXPECT_EQ(again.changes.size(), 1u);
    // An older repomd in dnf's cache than the one gpuprov verified is stale too.
    auto older = read_fixture("repo/rpm/repomd.xml");
    const auto rev = older.find("<revision>");
    ASSERT_NE(rev, std::string::npos);
    older.replace(rev + 10, 1, "0");
    host.sys.add_file(dnf_repomd, older);
    EXPECT_FALSE(run.step("cuda-repo").verify(run.ctx(), host.sys)[1].passed);
}

TEST_F(Steps, CudaRepoOnElPutsBothFilesBackWhenTheRefreshFails) {
    TestHost host;
    make_el_host(host);
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    host.sys.on_command({"dnf", "-y", "makecache", "--refresh", "--repo", "gpuprov-cuda"},
                        CommandResult{.exit_code = 1, .err = "Error: Failed to download metadata"});
    EXPECT_THROW(run.step("cuda-repo").apply(run.ctx(), host.sys, r, ApplyPhase::sources), Error);
    EXPECT_FALSE(host.sys.exists("/etc/yum.repos.d/gpuprov-cuda.repo"));
    EXPECT_FALSE(host.sys.exists("/etc/pki/rpm-gpg/gpuprov-cuda.asc"));
}

TEST_F(Steps, CudaRepoBlockedOnAHostWithoutAPackageManager) {
    TestHost host;
    host.sys.add_file("/etc/os-release", read_fixture("os/amzn-2023/etc/os-release"));
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "apt (Debian, Ubuntu) or dnf")) << r.reason;
}

// ---- driver ----

TEST_F(Steps, DriverPinsTheBranchFromTheIndexAndHoldsIt) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    // Newest 550.x, not the newer cuda-drivers meta package of branch 560.
    EXPECT_EQ(specs(r.installs), Strings{"cuda-drivers-550=550.127.08-1"});
    // Not installed yet: the hold covers the closure the transaction installs (the engine marks
    // it from apt's resolution), not a name list guessed here.
    EXPECT_TRUE(r.hold_installs);
    EXPECT_EQ(targets(r, Change::Kind::command), Strings{});
}

// Issue 23 item 3: the driver step installs the kernel hook that forecasts every new kernel's
// next boot; the plan shows it, apply writes it executable, and a lost execute bit is put back.
TEST_F(Steps, DriverInstallsTheKernelHookExecutable) {
    TestHost host;
    host.converge();
    const std::string hook = "/etc/kernel/postinst.d/zz-gpuprov-forecast";
    host.sys.remove_file(hook);
    StepRunner run(host, profile);
    auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{hook});
    ASSERT_EQ(run.step("driver").apply(run.ctx(), host.sys, r, ApplyPhase::prepare),
              StepStatus::done);
    const auto text = host.sys.file(hook).value_or("");
    EXPECT_TRUE(starts_with(text, "#!/bin/sh\n")) << text;
    EXPECT_TRUE(contains(text, "/usr/local/bin/gpuprov forecast --hook --kernel \"$1\"\n")) << text;
    EXPECT_FALSE(contains(text, "--block")) << text;
    EXPECT_EQ(host.sys.mode_of(hook), 0755u);
    EXPECT_EQ(run.check("driver").status, StepStatus::satisfied);

    host.sys.set_mode(hook, 0644); // the right text, not executable: run-parts skips it
    r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending);
    ASSERT_EQ(run.step("driver").apply(run.ctx(), host.sys, r, ApplyPhase::prepare),
              StepStatus::done);
    EXPECT_EQ(host.sys.mode_of(hook), 0755u);
    EXPECT_EQ(run.check("driver").status, StepStatus::satisfied);
}

// driver.kernel_guard: block installs the hook with --block (Debian's postinst.d and EL's
// kernel-install plugin alike); switching the mode is a change to that file, and the plan names
// the mode either way.
TEST_F(Steps, KernelGuardBlockInstallsTheBlockingHookAndThePlanSaysSo) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys); // warn, as a converged host has it
    const std::string hook = "/etc/kernel/postinst.d/zz-gpuprov-forecast";
    const auto guard_notes = [](const CheckResult& r) {
        Strings out;
        for (const auto& c : r.changes) {
            if (c.kind == Change::Kind::note && starts_with(c.detail, "driver.kernel_guard")) {
                out.push_back(c.detail);
            }
        }
        return out;
    };
    StepRunner warn(host, profile);
    auto r = warn.check("driver");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
    auto notes = guard_notes(r);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_TRUE(contains(notes[0], "never refuses the kernel")) << notes[0];

    profile.driver->kernel_guard = KernelGuard::block;
    StepRunner block(host, profile);
    r = block.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{hook});
    notes = guard_notes(r);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0], "driver.kernel_guard: block: " + hook +
                            " refuses a new kernel that has no nvidia module and whose headers "
                            "are missing (its install fails before the boot loader lists it)");
    ASSERT_EQ(block.step("driver").apply(block.ctx(), host.sys, r, ApplyPhase::prepare),
              StepStatus::done);
    const auto text = host.sys.file(hook).value_or("");
    EXPECT_TRUE(contains(text, "/usr/local/bin/gpuprov forecast --hook --kernel \"$1\" --block\n"))
        << text;
    EXPECT_TRUE(contains(text, "# driver.kernel_guard: block")) << text;
    // The hook's own exit is the package's: nothing swallows the refusal.
    EXPECT_TRUE(contains(text, "rc=$?\n") && contains(text, "exit $rc\n")) << text;
    EXPECT_EQ(host.sys.mode_of(hook), 0755u);
    EXPECT_EQ(block.check("driver").status, StepStatus::satisfied);

    // Back to warn: the file goes back to the warning hook.
    profile.driver->kernel_guard = KernelGuard::warn;
    StepRunner back(host, profile);
    r = back.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{hook});
}

TEST(KernelHookFile, ElPluginBlocksWithExit77) {
    const auto f = steps::kernel_hook_file("rhel", "/usr/bin/gpuprov", true);
    EXPECT_EQ(f.path, "/etc/kernel/install.d/45-gpuprov-forecast.install");
    EXPECT_TRUE(contains(f.content, "/usr/bin/gpuprov forecast --hook --kernel \"$2\" --block\n"))
        << f.content;
    EXPECT_TRUE(contains(f.content, "[ $rc -eq 0 ] || exit 77\n")) << f.content;
    const auto warn = steps::kernel_hook_file("rhel", "/usr/bin/gpuprov", false);
    EXPECT_FALSE(contains(warn.content, "--block")) << warn.content;
}

TEST_F(Steps, DriverSatisfiedWhenInstalledHeldAndLoaded) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys);
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
    // Nothing to change; only NVIDIA's lifecycle for R550, which NVIDIA lists as end of life,
    // and the kernel guard's mode.
    ASSERT_EQ(r.changes.size(), 2U);
    EXPECT_EQ(r.changes[0].kind, Change::Kind::note);
    EXPECT_TRUE(contains(r.changes[0].detail, "driver branch R550: past its end of life"))
        << r.changes[0].detail;
    EXPECT_EQ(r.changes[1].kind, Change::Kind::note);
    EXPECT_TRUE(starts_with(r.changes[1].detail, "driver.kernel_guard: warn: "))
        << r.changes[1].detail;
}

TEST_F(Steps, DriverNotesTheLongTermBranchAndItsEndOfLife) {
    profile.driver->branch = "580";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    std::vector<std::string> notes;
    for (const auto& c : r.changes) {
        if (c.kind == Change::Kind::note) {
            notes.push_back(c.detail);
        }
    }
    ASSERT_FALSE(notes.empty());
    EXPECT_EQ(notes[0], "driver branch R580: Long Term Support Branch, end of life June 2028");
}

TEST_F(Steps, DriverNotesANewFeatureBranchHasNoEndOfLifeDate) {
    // R615 (CUDA 13.4's branch) and R590: New Feature Branches, which NVIDIA does not date.
    for (const char* branch : {"615", "590"}) {
        profile.driver->branch = branch;
        TestHost host;
        StepRunner run(host, profile);
        const auto r = run.check("driver");
        std::vector<std::string> notes;
        for (const auto& c : r.changes) {
            if (c.kind == Change::Kind::note) {
                notes.push_back(c.detail);
            }
        }
        ASSERT_FALSE(notes.empty()) << branch;
        EXPECT_EQ(notes[0], std::string("driver branch R") + branch +
                                ": New Feature Branch, no end-of-life date: NVIDIA fixes a new "
                                "feature branch only until the next branch ships; for fixes over "
                                "years choose a production or long term support branch");
    }
}

TEST_F(Steps, DriverOnlyHoldsWhenInstalledButNotHeld) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys);
    host.set_package("cuda-drivers-550", "550.127.08-1", "install ok installed");
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_EQ(targets(r, Change::Kind::command), Strings{"apt-mark hold cuda-drivers-550"});
}

TEST_F(Steps, DriverUpgradesAnotherBranch) {
    TestHost host;
    host.set_package("cuda-drivers-550", "535.183.06-1");
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending);
    ASSERT_EQ(specs(r.installs), Strings{"cuda-drivers-550=550.127.08-1"});
    const auto package = std::find_if(r.changes.begin(), r.changes.end(), [](const Change& c) {
        return c.kind == Change::Kind::package;
    });
    ASSERT_NE(package, r.changes.end());
    EXPECT_EQ(package->detail, "535.183.06-1 -> 550.127.08-1");
}

TEST_F(Steps, DriverNeedsARebootWhenInstalledButNouveauHoldsTheGpus) {
    TestHost host({.nouveau_loaded = true});
    host.converge();
    host.sys.remove_file("/proc/driver/nvidia/version");
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::reboot_required);
    EXPECT_TRUE(contains(r.reason, "nouveau")) << r.reason;
}

TEST_F(Steps, DriverSkippedWithoutADriverSection) {
    profile.driver.reset();
    TestHost host;
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("driver").status, StepStatus::skipped);
}

TEST_F(Steps, DriverBlockedWhenTheCudaRepositoryIsUnreachable) {
    TestHost host;
    host.sys.on_url(kCudaUrl + "InRelease",
                    {.ok = false, .http_status = 503, .error = "HTTP 503", .attempts = 4});
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_EQ(r.reason, "needs the 'cuda' repository, which is unavailable (see cuda-repo)");
    const auto repo = run.check("cuda-repo");
    EXPECT_EQ(repo.status, StepStatus::blocked);
    EXPECT_TRUE(contains(repo.reason, kCudaUrl + "InRelease: HTTP 503")) << repo.reason;
}

// ---- fabric-manager ----

TEST_F(Steps, FabricManagerPinsTheDriversVersionAndEnablesTheService) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("fabric-manager");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), (Strings{"nvidia-fabricmanager-550=550.127.08-1",
                                          "libnvidia-nscq-550=550.127.08-1"}));
    // Branch 550 names carry the branch: held with the driver (hold: true).
    EXPECT_TRUE(r.hold_installs);
    EXPECT_EQ(targets(r, Change::Kind::service), Strings{"nvidia-fabricmanager.service"});
}

TEST_F(Steps, FabricManagerFollowsAnOlderInstalledDriverExactly) {
    TestHost host;
    host.set_package("cuda-drivers-550", "550.54.15-1", "hold ok installed");
    StepRunner run(host, profile);
    EXPECT_EQ(specs(run.check("fabric-manager").installs),
              (Strings{"nvidia-fabricmanager-550=550.54.15-1", "libnvidia-nscq-550=550.54.15-1"}));
}

TEST_F(Steps, FabricManagerSatisfiedWhenInstalledAndEnabled) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys);
    converge_config(host);
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("fabric-manager").status, StepStatus::satisfied);
}

// fabric.imex on branch 550: nvidia-imex-550 at the driver's build, which this repository
// (tests/fixtures/engine/cuda) does not carry: the plan blocks naming it rather than installing
// fabric manager without IMEX.
TEST_F(Steps, FabricManagerBlocksWhenImexIsNotInTheRepository) {
    profile.fabric.imex = true;
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("fabric-manager");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "nvidia-imex-550")) << r.reason;
    // Without NVSwitches and with fabric_manager: false, IMEX alone keeps the step.
    profile.fabric_manager = FabricManagerMode::disabled;
    TestHost bare({.nvswitches = 0});
    StepRunner alone(bare, profile);
    const auto a = alone.check("fabric-manager");
    EXPECT_EQ(a.status, StepStatus::blocked) << a.reason;
    profile.fabric.imex = false;
    StepRunner off(bare, profile);
    const auto o = off.check("fabric-manager");
    EXPECT_EQ(o.status, StepStatus::skipped);
    EXPECT_EQ(o.reason, "fabric_manager: false and no fabric.imex");
}

TEST_F(Steps, FabricManagerSkippedWithoutNvswitches) {
    TestHost host({.nvswitches = 0});
    StepRunner run(host, profile);
    const auto r = run.check("fabric-manager");
    EXPECT_EQ(r.status, StepStatus::skipped);
    EXPECT_TRUE(contains(r.reason, "no NVSwitch")) << r.reason;
}

TEST_F(Steps, CudaRepoBlocksAnNvidiaUrlPinnedToAnotherDistrosKey) {
    // NVIDIA signs its RHEL repositories with D42D0685; this Debian 12 host's repo uses 3bf863cc.
    auto& cuda = profile.repositories.at("cuda");
    cuda.url = "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/";
    cuda.key_fingerprint = "610C7B14E068A878070DA4E99CD0A493D42D0685";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "but NVIDIA signs "
                                   "https://developer.download.nvidia.com/compute/cuda/repos/"
                                   "{distro}/{arch}/ with EB693B3035CD5710E231E123A4B469963BF863CC "
                                   "(3bf863cc.pub (debian12)"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "remove key_url and key_fingerprint to use NVIDIA's key"))
        << r.reason;
    EXPECT_TRUE(host.sys.urls_fetched.empty());
    // The right key for this distro passes that check (and goes on to fetch the key).
    cuda.key_fingerprint = "EB693B3035CD5710E231E123A4B469963BF863CC";
    StepRunner again(host, profile);
    EXPECT_FALSE(contains(again.check("cuda-repo").reason, "NVIDIA signs"));
}

TEST_F(Steps, CudaRepoOnUbuntu2604WantsItsOwnKeyNot3bf863cc) {
    // NVIDIA signs ubuntu2604 with 60DF8A40, not with the 3bf863cc of its older Ubuntu repositories
    // (matrix comments): a profile that pins 3bf863cc for it is refused before any download.
    auto& cuda = profile.repositories.at("cuda");
    cuda.url = "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/";
    cuda.key_fingerprint = "EB693B3035CD5710E231E123A4B469963BF863CC";
    TestHost host({.os = "ubuntu-26.04"});
    StepRunner run(host, profile);
    ASSERT_EQ(run.facts().os.repo_slug, "ubuntu2604");
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "with 14BAFBC7562AD710CA04E69905FBB6DA60DF8A40 "
                                   "(60DF8A40.pub (ubuntu2604)"))
        << r.reason;
    EXPECT_TRUE(host.sys.urls_fetched.empty());
    cuda.key_fingerprint = "14BAFBC7562AD710CA04E69905FBB6DA60DF8A40";
    StepRunner again(host, profile);
    EXPECT_FALSE(contains(again.check("cuda-repo").reason, "NVIDIA signs"));
}

// ---- cuda-toolkit ----

TEST_F(Steps, CudaToolkitPinsTheToolkitPackageNeverTheDriverDraggingMeta) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), Strings{"cuda-toolkit-12-4=12.4.1-1"});
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kProfileDPath});
    for (const auto& c : r.changes) {
        EXPECT_FALSE(c.target.starts_with("cuda-12-4")) << c.target;
    }
}

TEST_F(Steps, CudaToolkitOnR535PlansWithAMinorVersionCompatibilityNote) {
    profile.driver->branch = "535";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), Strings{"cuda-toolkit-12-4=12.4.1-1"});
    std::vector<std::string> notes;
    for (const auto& c : r.changes) {
        if (c.kind == Change::Kind::note) {
            notes.push_back(c.detail);
        }
    }
    ASSERT_EQ(notes.size(), 1U);
    EXPECT_TRUE(contains(notes[0], "minor version compatibility: CUDA 12.4 applications run on "
                                   "driver branch 535"))
        << notes[0];
    EXPECT_TRUE(contains(notes[0], "PTX JIT")) << notes[0];
}

TEST_F(Steps, CudaToolkitPinsAnExactUpdate) {
    profile.cuda->exact = "12.4.1";
    TestHost host;
    host.set_package("cuda-toolkit-12-4", "12.4.0-1");
    host.sys.add_file(kProfileDPath, kProfileD);
    StepRunner run(host, profile);
    const auto r = run.check("cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs), Strings{"cuda-toolkit-12-4=12.4.1-1"});
    // An update the repository does not have is named.
    profile.cuda->exact = "12.4.0";
    StepRunner again(host, profile);
    const auto b = again.check("cuda-toolkit");
    EXPECT_EQ(b.status, StepStatus::satisfied) << b.reason; // 12.4.0-1 is installed
    profile.cuda->exact = "12.4.9";
    StepRunner third(host, profile);
    const auto c = third.check("cuda-toolkit");
    EXPECT_EQ(c.status, StepStatus::blocked);
    EXPECT_TRUE(contains(c.reason, "has no cuda-toolkit-12-4 version 12.4.9-*")) << c.reason;
}

TEST_F(Steps, DriverPinsAnExactVersion) {
    // The index has 550.54.15-1 and 550.127.08-1: a pin takes the older one, not the newest.
    profile.driver->version = "550.54.15";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    const auto s = specs(r.installs);
    EXPECT_NE(std::find(s.begin(), s.end(), "cuda-drivers-550=550.54.15-1"), s.end());
    profile.driver->version = "550.90.07";
    StepRunner again(host, profile);
    const auto b = again.check("driver");
    EXPECT_EQ(b.status, StepStatus::blocked);
    EXPECT_TRUE(contains(b.reason, "has no cuda-drivers-550 version 550.90.07-*")) << b.reason;
}

TEST_F(Steps, CudaToolkitOnItsOwnDriverBranchHasNoNote) {
    TestHost host;
    StepRunner run(host, profile);
    for (const auto& c : run.check("cuda-toolkit").changes) {
        EXPECT_NE(c.kind, Change::Kind::note) << c.detail;
    }
}

TEST_F(Steps, CudaToolkitSatisfiedWhenInstalledAndOnPath) {
    TestHost host;
    host.set_package("cuda-toolkit-12-4", "12.4.0-1");
    host.sys.add_file(kProfileDPath, kProfileD);
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("cuda-toolkit").status, StepStatus::satisfied);
}

TEST_F(Steps, CudaToolkitOnlyRewritesPathWhenInstalled) {
    TestHost host;
    host.set_package("cuda-toolkit-12-4", "12.4.1-1");
    StepRunner run(host, profile);
    const auto r = run.check("cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kProfileDPath});
}

TEST_F(Steps, CudaToolkitApplyWritesThePathSnippet) {
    TestHost host;
    StepRunner run(host, profile);
    const auto planned = run.check("cuda-toolkit");
    EXPECT_EQ(run.step("cuda-toolkit").apply(run.ctx(), host.sys, planned, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.file(kProfileDPath), kProfileD);
}

TEST_F(Steps, CudaToolkitSkippedWithoutCuda) {
    profile.cuda.reset();
    TestHost host;
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("cuda-toolkit").status, StepStatus::skipped);
}

TEST_F(Steps, CudaToolkitBlockedWhenTheDistroRepoDoesNotCarryIt) {
    // A profile for hosts whose repositories carry CUDA 12.4 (cv-train's list before it moved
    // to CUDA 13.0), run on Ubuntu 24.04.
    profile.host.os = {"ubuntu-20.04", "ubuntu-22.04", "debian-12", "rhel-8", "rhel-9"};
    gpuprov::testing::FakeSystem sys;
    sys.load_tree("hosts/ubuntu-24.04");
    const auto facts = detect_facts(sys, matrix());
    ASSERT_EQ(facts.os.repo_slug, "ubuntu2404");
    LiveRepoProvider repos(sys, profile, facts, matrix(), kCacheDir);
    const StepContext ctx{profile, facts, matrix(), repos};
    const auto steps = make_steps();
    const auto r = steps.at(6)->check(ctx, sys);
    ASSERT_EQ(steps.at(6)->id(), "cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "CUDA 12.4 is not in NVIDIA's ubuntu2404 repository (it "
                                   "carries 12.5 and newer)"))
        << r.reason;
    // Decided from the version matrix, before any download.
    EXPECT_TRUE(sys.urls_fetched.empty());
    // preflight says the same from the profile's host.os.
    const auto pre = steps.at(0)->check(ctx, sys);
    EXPECT_EQ(pre.status, StepStatus::blocked);
    EXPECT_TRUE(contains(pre.reason, "this host is ubuntu-24.04")) << pre.reason;
}

TEST_F(Steps, CudaToolkitBlockedWhenTheIndexLacksTheRelease) {
    profile.cuda->version = "12.6";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "the CUDA repository has no cuda-toolkit-12-6")) << r.reason;
}

// ---- cudnn ----

TEST_F(Steps, CudnnNinePicksTheCudaTwelveBuildPair) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cudnn");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    // 9.10 sorts above 9.1 (dpkg order, not string order); the -cuda-11 build is never picked.
    EXPECT_EQ(specs(r.installs),
              (Strings{"libcudnn9-cuda-12=9.10.2.21-1", "libcudnn9-dev-cuda-12=9.10.2.21-1"}));
}

TEST_F(Steps, CudnnSatisfiedWhenBothPackagesAreInstalled) {
    TestHost host;
    host.set_package("libcudnn9-cuda-12", "9.1.0.70-1");
    host.set_package("libcudnn9-dev-cuda-12", "9.1.0.70-1");
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("cudnn").status, StepStatus::satisfied);
}

TEST_F(Steps, CudnnPendingWhenOnlyTheRuntimeIsInstalled) {
    TestHost host;
    host.set_package("libcudnn9-cuda-12", "9.10.2.21-1");
    StepRunner run(host, profile);
    const auto r = run.check("cudnn");
    EXPECT_EQ(r.status, StepStatus::pending);
    // Only the missing package: the runtime already at the pinned version is no change (the
    // plan used to show "9.10.2.21-1 -> 9.10.2.21-1").
    EXPECT_EQ(specs(r.installs), Strings{"libcudnn9-dev-cuda-12=9.10.2.21-1"});
    EXPECT_EQ(targets(r, Change::Kind::package), Strings{"libcudnn9-dev-cuda-12"});
    for (const auto& c : r.changes) {
        EXPECT_FALSE(contains(c.detail, "9.10.2.21-1 -> 9.10.2.21-1")) << c.detail;
    }
}

TEST_F(Steps, CudnnOlderRuntimeShowsItsUpgrade) {
    TestHost host;
    host.set_package("libcudnn9-cuda-12", "9.1.0.70-1");
    host.set_package("libcudnn9-dev-cuda-12", "9.1.0.70-1");
    profile.cudnn->version = "9.10";
    StepRunner run(host, profile);
    const auto r = run.check("cudnn");
    EXPECT_EQ(r.status, StepStatus::pending);
    ASSERT_EQ(r.changes.size(), 2U);
    EXPECT_EQ(r.changes[0].detail, "9.1.0.70-1 -> 9.10.2.21-1");
}

TEST_F(Steps, CudnnSkippedWhenNotAskedFor) {
    profile.cudnn.reset();
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cudnn");
    EXPECT_EQ(r.status, StepStatus::skipped);
    EXPECT_EQ(r.reason, "profile asks for no cuDNN");
}

TEST_F(Steps, CudnnEightBlockedWhenTheIndexHasNoSuchBuild) {
    profile.cudnn->version = "8.9";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cudnn");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "has no libcudnn8 version 8.9.7.29-1+cuda12.2*")) << r.reason;
}

// ---- nccl ----

TEST_F(Steps, NcclPicksTheBuildForTheProfilesCudaOverANewerOne) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("nccl");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(specs(r.installs),
              (Strings{"libnccl2=2.21.5-1+cuda12.4", "libnccl-dev=2.21.5-1+cuda12.4"}));
}

TEST_F(Steps, NcclSatisfiedWithTheCudaTwelveFourBuild) {
    TestHost host;
    host.set_package("libnccl2", "2.20.5-1+cuda12.4");
    host.set_package("libnccl-dev", "2.20.5-1+cuda12.4");
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("nccl").status, StepStatus::satisfied);
}

TEST_F(Steps, NcclReplacesABuildForAnotherCuda) {
    TestHost host;
    host.set_package("libnccl2", "2.22.3-1+cuda12.5");
    host.set_package("libnccl-dev", "2.22.3-1+cuda12.5");
    StepRunner run(host, profile);
    const auto r = run.check("nccl");
    EXPECT_EQ(r.status, StepStatus::pending);
    ASSERT_FALSE(r.changes.empty());
    EXPECT_EQ(r.changes[0].detail, "2.22.3-1+cuda12.5 -> 2.21.5-1+cuda12.4");
}

TEST_F(Steps, NcclSkippedWhenOff) {
    profile.nccl = false;
    TestHost host;
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("nccl").status, StepStatus::skipped);
}

TEST_F(Steps, NcclBlockedWithoutABuildForTheCuda) {
    profile.cuda->version = "12.6";
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("nccl");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_EQ(r.reason, "the CUDA repository has no libnccl2 built for CUDA 12.6");
}

// ---- container-toolkit ----

TEST_F(Steps, ContainerToolkitPendingWithRepoPackagesAndRuntime) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(
        specs(r.installs),
        (Strings{"nvidia-container-toolkit=1.17.0-1", "nvidia-container-toolkit-base=1.17.0-1",
                 "libnvidia-container-tools=1.17.0-1", "libnvidia-container1=1.17.0-1"}));
    EXPECT_EQ(targets(r, Change::Kind::file), (Strings{kCtkKeyring, kCtkSourcePath}));
    EXPECT_EQ(targets(r, Change::Kind::command),
              (Strings{display_argv(refresh_argv(kCtkSourcePath)),
                       "nvidia-ctk runtime configure --runtime=docker"}));
}

TEST_F(Steps, ContainerToolkitSatisfiedWhenInPlace) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys);
    converge_config(host);
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::satisfied);
}

TEST_F(Steps, ContainerToolkitSkippedWithoutContainers) {
    profile.container.reset();
    TestHost host;
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::skipped);
}

// ---- tuning, monitoring ----

TEST_F(Steps, TuningPendingWithDropinAndService) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("tuning");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kPersistencedDropinPath});
    EXPECT_EQ(targets(r, Change::Kind::service), Strings{"nvidia-persistenced.service"});
}

TEST_F(Steps, TuningSatisfiedAndSkipped) {
    TestHost host;
    host.converge(); // the driver package ships the unit file the wants link points at
    converge_config(host);
    {
        StepRunner run(host, profile);
        EXPECT_EQ(run.check("tuning").status, StepStatus::satisfied);
    }
    profile.tuning.persistence_mode = false;
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("tuning").status, StepStatus::skipped);
}

TEST_F(Steps, MonitoringPendingThenSatisfiedThenSkipped) {
    TestHost host;
    {
        StepRunner run(host, profile);
        const auto r = run.check("monitoring");
        EXPECT_EQ(r.status, StepStatus::pending);
        EXPECT_EQ(targets(r, Change::Kind::file), (Strings{kMetricsService, kMetricsTimer}));
        EXPECT_EQ(targets(r, Change::Kind::service), Strings{"gpuprov-metrics.timer"});
    }
    converge_config(host);
    {
        StepRunner run(host, profile);
        EXPECT_EQ(run.check("monitoring").status, StepStatus::satisfied);
    }
    profile.monitoring.reset();
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("monitoring").status, StepStatus::skipped);
}

// ---- all at once ----

TEST_F(Steps, EveryStepSatisfiedOnAConvergedHostWithoutNetworkOrCommands) {
    TestHost host;
    host.converge();
    install_kernel_hook(host.sys);
    converge_config(host);
    host.clear_records();
    StepRunner run(host, profile);
    for (const auto& id : step_ids()) {
        const auto r = run.check(id);
        // cv-train asks for no TensorRT, DCGM or readiness gate and has no infiniband or mig
        // section: the steps it leaves out; Secure Boot is off on this host.
        EXPECT_EQ(r.status, (id == "infiniband" || id == "tensorrt" || id == "secure-boot" ||
                             id == "mig" || id == "dcgm" || id == "readiness")
                                ? StepStatus::skipped
                                : StepStatus::satisfied)
            << id << ": " << r.reason;
    }
    EXPECT_TRUE(host.sys.urls_fetched.empty());
    EXPECT_TRUE(host.sys.queries.empty());
    EXPECT_TRUE(host.sys.commands_ran.empty());
}

} // namespace

// ---- infiniband ----

namespace {

/// A ConnectX-6 in InfiniBand mode with one HDR port ACTIVE (values as the kernel prints them:
/// tests/fixtures/README.md, InfiniBand).
void add_hdr_hca(TestHost& host) {
    const std::string pci = "/sys/bus/pci/devices/0000:0c:00.0/";
    host.sys.add_file(pci + "vendor", "0x15b3\n");
    host.sys.add_file(pci + "device", "0x101b\n");
    host.sys.add_file(pci + "class", "0x020700\n");
    const std::string dev = "/sys/class/infiniband/mlx5_0/";
    host.sys.add_link(dev + "device", "../../../0000:0c:00.0");
    host.sys.add_file(dev + "ports/1/state", "4: ACTIVE\n");
    host.sys.add_file(dev + "ports/1/phys_state", "5: LinkUp\n");
    host.sys.add_file(dev + "ports/1/rate", "200 Gb/sec (4X HDR)\n");
    host.sys.add_file(dev + "ports/1/link_layer", "InfiniBand\n");
}

const std::string kNcclConf = "/etc/nccl.conf";
const std::string kPeermemConf = "/etc/modules-load.d/gpuprov-nvidia-peermem.conf";

} // namespace

TEST_F(Steps, InfinibandPlansTheDistrosRdmaStackPeermemAndNcclsPorts) {
    profile.infiniband = InfinibandSpec{.gpudirect_rdma = GpuDirectMode::peermem};
    TestHost host;
    add_hdr_hca(host);
    StepRunner run(host, profile);
    const auto r = run.check("infiniband");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    // The distribution's versions: no NVIDIA pin.
    // ibverbs-providers by name: libibverbs1 only Recommends it, and without it no device lists.
    EXPECT_EQ(specs(r.installs),
              (Strings{"rdma-core", "ibverbs-providers", "ibverbs-utils", "infiniband-diags"}));
    EXPECT_EQ(targets(r, Change::Kind::file), (Strings{kPeermemConf, kNcclConf}));
    // The nvidia module is not loaded on the fresh host: the file loads peermem at boot.
    EXPECT_TRUE(targets(r, Change::Kind::command).empty());
}

TEST_F(Steps, InfinibandApplyWritesTheFilesAndConverges) {
    profile.infiniband = InfinibandSpec{.gpudirect_rdma = GpuDirectMode::peermem};
    TestHost host;
    add_hdr_hca(host);
    for (const auto* p : {"rdma-core", "ibverbs-providers", "ibverbs-utils", "infiniband-diags"}) {
        host.set_package(p, "44.0-2");
    }
    StepRunner run(host, profile);
    const auto planned = run.check("infiniband");
    EXPECT_TRUE(planned.installs.empty());
    EXPECT_EQ(run.step("infiniband").apply(run.ctx(), host.sys, planned, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.file(kNcclConf), "# Managed by gpuprov; local edits are replaced.\n"
                                        "# The InfiniBand ports of this host, for NCCL.\n"
                                        "NCCL_IB_HCA==mlx5_0:1\n");
    EXPECT_TRUE(contains(host.sys.file(kPeermemConf).value_or(""), "\nnvidia-peermem\n"));
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_EQ(run.check("infiniband").status, StepStatus::satisfied);
}

TEST_F(Steps, InfinibandPeermemThatCannotLoadFailsWithTheReasonAndTheWayOut) {
    profile.infiniband = InfinibandSpec{.gpudirect_rdma = GpuDirectMode::peermem};
    TestHost host;
    add_hdr_hca(host);
    host.sys.add_dir("/sys/module/nvidia");
    // What kmod says when the inbox RDMA stack lacks the peer-memory API.
    host.sys.on_command({"modprobe", "nvidia-peermem"},
                        CommandResult{.exit_code = 1,
                                      .out = {},
                                      .err = "modprobe: ERROR: could not insert "
                                             "'nvidia_peermem': Invalid argument\n"});
    StepRunner run(host, profile);
    const auto planned = run.check("infiniband");
    EXPECT_EQ(targets(planned, Change::Kind::command), Strings{"modprobe nvidia-peermem"});
    try {
        (void)run.step("infiniband").apply(run.ctx(), host.sys, planned, ApplyPhase::configure);
        ADD_FAILURE() << "apply did not fail";
    } catch (const HostError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "Invalid argument")) << what;
        EXPECT_TRUE(contains(what, "DOCA-OFED")) << what;
        EXPECT_TRUE(contains(what, "gpudirect_rdma: dmabuf")) << what;
    }
}

TEST_F(Steps, InfinibandWithDmaBufLoadsNoModule) {
    profile.driver->flavor = "open"; // kernel 6.1: DMA-BUF
    profile.infiniband = InfinibandSpec{};
    TestHost host;
    add_hdr_hca(host);
    host.sys.add_dir("/sys/module/nvidia");
    StepRunner run(host, profile);
    const auto r = run.check("infiniband");
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{kNcclConf});
    EXPECT_TRUE(targets(r, Change::Kind::command).empty());
}

TEST_F(Steps, InfinibandWithoutAnHcaBlocksUnlessOptional) {
    profile.infiniband = InfinibandSpec{};
    TestHost host;
    StepRunner run(host, profile);
    auto r = run.check("infiniband");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "infiniband.required: false")) << r.reason;
    profile.infiniband->required = false;
    EXPECT_EQ(run.check("infiniband").status, StepStatus::skipped);
    profile.infiniband.reset();
    EXPECT_EQ(run.check("infiniband").status, StepStatus::skipped);
}
