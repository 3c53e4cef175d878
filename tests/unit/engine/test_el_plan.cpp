// The built-in profiles planned on the EL fixture hosts (tests/fixtures/hosts/rhel-9, rocky-9,
// alma-9) against an NVIDIA-shaped rhel9 repository (tests/fixtures/repo/rpm-el9, real
// createrepo_c output): every package step resolves with NVIDIA's rpm names, the driver comes
// from its dnf module stream in the same transaction, and nothing is blocked for apt's sake.
#include "host_builder.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/transaction.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kElCudaUrl = "https://mirror.test/cuda/rhel9/x86_64/";
const std::string kElCtkUrl = "https://mirror.test/libnvidia-container/stable/rpm/x86_64/";

/// The repository's repomd.xml and the primary it lists, as a mirror serves them.
void serve_rpm_md(FakeSystem& sys, const std::string& url, const std::string& dir) {
    const auto repomd = read_fixture("repo/rpm-el9/" + dir + "/repomd.xml");
    sys.on_url(url + "repodata/repomd.xml", http_ok(repomd));
    sys.on_url(url + "repodata/repomd.xml.asc", http_ok("(detached signature)\n"));
    const auto at = repomd.find("href=\"repodata/", repomd.find("type=\"primary\""));
    const auto end = repomd.find('"', at + 6);
    const auto location = repomd.substr(at + 6, end - at - 6);
    sys.on_url(url + location, http_ok(read_fixture("repo/rpm-el9/" + dir + "/" +
                                                    location.substr(location.find('/') + 1))));
}

/// An EL fixture host with the NVIDIA-shaped repositories behind a mirror; gpgv answers as it
/// does for a good signature by the pinned test key.
struct ElHost {
    FakeSystem sys;
    /// `rpm_capture`: the real `rpm -qa` capture (tests/fixtures/cmd/rpm/) the host's rpm
    /// database answers with; empty: no package installed.
    explicit ElHost(const std::string& tree, bool epel = true,
                    const std::string& rpm_capture = {}) {
        sys.load_tree("hosts/" + tree);
        sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db");
        sys.on_command_prefix({"rpm", "-qa", "--qf"}, [rpm_capture](const Command&) {
            return CommandResult{
                .out = rpm_capture.empty() ? "" : read_fixture("cmd/rpm/" + rpm_capture)};
        });
        if (epel && !sys.exists("/etc/yum.repos.d/epel.repo")) {
            sys.add_file("/etc/yum.repos.d/epel.repo", "[epel]\nname=Extra Packages\n");
        }
        // Docker CE, where its RPM puts dockerd: the built-ins run containers through Docker
        // and install no engine (without one the container-toolkit step is blocked).
        sys.add_file("/usr/bin/dockerd", "\x7f"
                                         "ELF");
        sys.on_url(kKeyUrl, http_ok(read_fixture("engine/test-key.asc")));
        serve_rpm_md(sys, kElCudaUrl, "cuda");
        serve_rpm_md(sys, kElCtkUrl, "container-toolkit");
        sys.on_command_prefix({"gpgv"}, [](const Command&) {
            const auto f = fingerprint();
            return CommandResult{.out = "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + f +
                                        " 2026-12-02 1796218524 0 4 0 1 10 00 " + f + "\n"};
        });
    }
};

/// A built-in profile pointed at the mirror (re-signed with the test key, as a mirror's own
/// url and key must be), host requirements left out: the fixture hosts have other GPUs.
Profile builtin_on_mirror(const std::string& name) {
    auto p = load_profile(name, matrix());
    p.host = {};
    auto& cuda = p.repositories.at("cuda");
    cuda.url = "https://mirror.test/cuda/{distro}/{arch}/";
    cuda.key_url = kKeyUrl;
    cuda.key_fingerprint = fingerprint();
    auto& ctk = p.repositories.at("container-toolkit");
    // The built-in spelling of the path: {pkgformat}/{pkgarch} picks rpm/x86_64 here.
    EXPECT_TRUE(contains(ctk.url, "/stable/{pkgformat}/{pkgarch}/")) << ctk.url;
    ctk.url = "https://mirror.test/libnvidia-container/stable/{pkgformat}/{pkgarch}/";
    ctk.key_url = kKeyUrl;
    ctk.key_fingerprint = fingerprint();
    return p;
}

const Strings kPackageSteps{"cuda-repo", "driver", "fabric-manager",   "cuda-toolkit",
                            "cudnn",     "nccl",   "container-toolkit"};

struct Expected {
    const char* profile;
    Strings driver;
    std::string module;
    Strings toolkit;
    Strings cudnn;
    Strings nccl;
};

const std::vector<Expected> kExpected{
    {"cv-train",
     {"nvidia-open=3:580.95.05-1.el9", "kmod-nvidia-open-dkms=3:580.95.05-1.el9"},
     "nvidia-driver:580-open",
     {"cuda-toolkit-13-0=13.0.2-1"},
     {"libcudnn9-cuda-13=9.17.0.29-1", "libcudnn9-devel-cuda-13=9.17.0.29-1"},
     {"libnccl=2.27.7-1+cuda13.0", "libnccl-devel=2.27.7-1+cuda13.0"}},
    {"nlp-infer",
     {"nvidia-driver=3:580.95.05-1.el9", "nvidia-driver-cuda=3:580.95.05-1.el9",
      "kmod-nvidia-latest-dkms=3:580.95.05-1.el9"},
     "nvidia-driver:580-dkms",
     {"cuda-toolkit-12-6=12.6.3-1"},
     {"libcudnn9-cuda-12=9.10.2.21-1", "libcudnn9-devel-cuda-12=9.10.2.21-1"},
     {}},
    {"sci-sim",
     {"nvidia-open=3:580.95.05-1.el9", "kmod-nvidia-open-dkms=3:580.95.05-1.el9"},
     "nvidia-driver:580-open",
     {"cuda-toolkit-13-0=13.0.2-1"},
     {},
     {"libnccl=2.27.7-1+cuda13.0", "libnccl-devel=2.27.7-1+cuda13.0"}},
};

TEST(ElPlan, EveryPackageStepResolvesWithRpmNamesOnRhelRockyAndAlma) {
    for (const auto* tree : {"rhel-9", "rocky-9", "alma-9"}) {
        for (const auto& want : kExpected) {
            SCOPED_TRACE(std::string(tree) + " " + want.profile);
            ElHost host(tree);
            auto profile = builtin_on_mirror(want.profile);
            profile.fabric_manager = FabricManagerMode::enabled; // no NVSwitch in the fixtures
            StepRunner run(host.sys, profile);
            ASSERT_EQ(run.facts().os.family, "rhel");
            for (const auto& id : kPackageSteps) {
                const auto r = run.check(id);
                EXPECT_NE(r.status, StepStatus::blocked) << id << ": " << r.reason;
            }
            const auto drv = run.check("driver");
            EXPECT_EQ(specs(drv.installs), want.driver);
            EXPECT_EQ(drv.hold_installs, true);
            if (std::string(tree) == "alma-9" && want.module == "nvidia-driver:580-open") {
                // Alma's modules.d already has 580-open enabled: nothing to enable.
                EXPECT_TRUE(drv.modules.empty());
            } else {
                ASSERT_EQ(drv.modules.size(), 1u);
                EXPECT_EQ(drv.modules[0].spec(), want.module);
                // Alma has another nvidia-driver stream enabled: dnf must switch, not enable.
                EXPECT_EQ(drv.modules[0].switch_from_other, std::string(tree) == "alma-9");
            }
            EXPECT_EQ(specs(run.check("cuda-toolkit").installs), want.toolkit);
            EXPECT_EQ(specs(run.check("cudnn").installs), want.cudnn);
            EXPECT_EQ(specs(run.check("nccl").installs), want.nccl);
            const auto branch = profile.driver->branch;
            const auto ver = branch == "550" ? "550.127.08-1" : "580.95.05-1";
            const auto fm = run.check("fabric-manager");
            // NVIDIA's rpm names: nvidia-fabric-manager + libnvidia-nscq-<b> before R580,
            // nvidia-fabricmanager + libnvidia-nscq from it.
            EXPECT_EQ(specs(fm.installs),
                      branch == "550" ? (Strings{std::string("nvidia-fabric-manager=") + ver,
                                                 std::string("libnvidia-nscq-550=") + ver})
                                      : (Strings{std::string("nvidia-fabricmanager=") + ver,
                                                 std::string("libnvidia-nscq=") + ver}));
            // sci-sim asks for no container toolkit.
            const Strings ctk{
                "nvidia-container-toolkit=1.17.8-1", "nvidia-container-toolkit-base=1.17.8-1",
                "libnvidia-container-tools=1.17.8-1", "libnvidia-container1=1.17.8-1"};
            EXPECT_EQ(specs(run.check("container-toolkit").installs),
                      profile.container ? ctk : Strings{});
        }
    }
}

TEST(ElPlan, TheContainerToolkitRepoIsTheRpmLayoutAndAStrayDebUrlIsRefused) {
    ElHost host("rocky-9");
    auto profile = builtin_on_mirror("nlp-infer");
    StepRunner run(host.sys, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_TRUE(contains(r.changes.at(1).detail, "baseurl=" + kElCtkUrl)) << r.changes.at(1).detail;

    auto deb = load_profile("nlp-infer", matrix());
    deb.repositories.at("container-toolkit").url =
        "https://nvidia.github.io/libnvidia-container/stable/deb/{pkgarch}/";
    StepRunner nvidia(host.sys, deb);
    const auto refused = nvidia.check("container-toolkit");
    EXPECT_EQ(refused.status, StepStatus::blocked);
    EXPECT_TRUE(contains(refused.reason, "stable/rpm/x86_64/")) << refused.reason;
    EXPECT_TRUE(contains(refused.reason, "{pkgformat}")) << refused.reason;
}

// GH200/GB200/GB300 hosts are aarch64: NVIDIA's CUDA repositories call that sbsa, its container
// toolkit repository stable/rpm/$basearch, i.e. aarch64 (reference §3.7). Checked against sbsa,
// the built-in URL was refused on every EL aarch64 host (issue 22).
TEST(ElPlan, OnAarch64TheBuiltInContainerToolkitUrlIsRpmAarch64AndSbsaIsRefused) {
    ElHost host("rocky-9");
    host.sys.set_machine("aarch64");
    const auto profile = load_profile("nlp-infer", matrix());
    StepRunner run(host.sys, profile);
    ASSERT_EQ(run.facts().repo_arch, "sbsa");
    const auto r = run.check("container-toolkit");
    EXPECT_FALSE(contains(r.reason, "NVIDIA publishes")) << r.reason;

    auto sbsa = profile;
    sbsa.repositories.at("container-toolkit").url =
        "https://nvidia.github.io/libnvidia-container/stable/rpm/{arch}/";
    StepRunner wrong(host.sys, sbsa);
    const auto refused = wrong.check("container-toolkit");
    EXPECT_EQ(refused.status, StepStatus::blocked);
    EXPECT_TRUE(contains(refused.reason, "stable/rpm/sbsa/")) << refused.reason;
    EXPECT_TRUE(contains(refused.reason, "NVIDIA publishes the toolkit for dnf at "
                                         ".../stable/rpm/aarch64/"))
        << refused.reason;
}

TEST(ElPlan, WithoutDockerTheContainerStepIsBlockedNamingDockerCe) {
    ElHost host("rocky-9");
    host.sys.remove_file("/usr/bin/dockerd");
    const auto profile = builtin_on_mirror("cv-train"); // runtime docker, engine none
    StepRunner run(host.sys, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "docker is not installed on this host")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "container.engine: docker-ce")) << r.reason;
    EXPECT_FALSE(contains(r.reason, "docker.io")) << r.reason; // RHEL has none
}

TEST(ElPlan, WithoutEpelTheDriverIsBlockedWithTheFix) {
    ElHost host("rhel-9", /*epel=*/false);
    const auto profile = builtin_on_mirror("sci-sim");
    StepRunner run(host.sys, profile);
    ASSERT_FALSE(run.facts().epel);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "EPEL")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "epel-release")) << r.reason;
}

TEST(ElPlan, OneDnfTransactionEnablesTheStreamAndInstallsThePins) {
    ElHost host("rocky-9");
    auto profile = builtin_on_mirror("nlp-infer"); // 580 proprietary: the capture's stream
    StepRunner run(host.sys, profile);
    auto plan = run.plan();
    std::optional<std::string> fed;
    Strings argv;
    host.sys.on_command_prefix({"dnf", "-y"}, [](const Command&) {
        return CommandResult{.out = "Metadata cache created.\n"};
    });
    host.sys.on_command_prefix({"dnf", "--assumeno"}, [&](const Command& c) {
        fed = c.stdin_data;
        argv = c.argv;
        return CommandResult{.exit_code = 1,
                             .out = read_fixture("cmd/dnf/shell-module-enable-install.txt"),
                             .err = "Error: Operation aborted.\n"};
    });
    resolve_transactions(host.sys, run.ctx(), plan,
                         {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
    ASSERT_FALSE(plan.transactions.empty());
    const auto& t = plan.transactions.back();
    EXPECT_TRUE(t.blocked.empty()) << t.blocked;
    ASSERT_TRUE(fed.has_value());
    // The stream first, then every package of the batch, one `run`: a single transaction.
    EXPECT_TRUE(starts_with(*fed, "module enable nvidia-driver:580-dkms\ninstall ")) << *fed;
    EXPECT_TRUE(contains(*fed, " nvidia-driver-3:580.95.05-1.el9 ")) << *fed;
    EXPECT_TRUE(contains(*fed, " cuda-toolkit-12-6-12.6.3-1")) << *fed;
    EXPECT_TRUE(contains(*fed, " libcudnn9-cuda-12-9.10.2.21-1")) << *fed;
    EXPECT_TRUE(*fed.value().rbegin() == '\n' && contains(*fed, "\nrun\n")) << *fed;
    EXPECT_EQ(argv.back(), "shell");
    EXPECT_EQ(t.transaction.module_changes, Strings{"enable nvidia-driver 580-dkms"});
    EXPECT_EQ(t.transaction.modules.size(), 1u);
    for (const auto& a : argv) {
        EXPECT_EQ(a.find("nogpgcheck"), std::string::npos);
    }
}

TEST(ElPlan, AnotherFlavourInstalledByHandBlocksWithTheRemovalToRun) {
    // Alma: nvidia-open 570 installed (real rpm -qa capture), stream 580-open enabled.
    ElHost host("alma-9", true, "qa-el9-570-open.txt");
    const auto profile = builtin_on_mirror("nlp-infer"); // 580 proprietary
    StepRunner run(host.sys, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "dnf remove nvidia-open kmod-nvidia-open-dkms")) << r.reason;
}

/// The versionlock plugin as EL 9 ships it (python3-dnf-plugin-versionlock-4.3.0-11.el9, an EL 9
/// host's rpm -qa; reference rpm-sources EL9-VL), in gpuprov's rpm query format.
const std::string kEl9Plugin = "@@\tpython3-dnf-plugin-versionlock\t(none)\t4.3.0\t11.el9\tnoarch\n"
                               "P\tdnf-command(versionlock)\nP\tpython3-dnf-plugin-versionlock\n";

TEST(ElPlan, SameFlavourNewerBranchUpgradesInTheEnabledStreamAndReleasesTheLock) {
    ElHost host("alma-9", true, "qa-el9-570-open.txt");
    // Locked: the list and the plugin that reads it (a list alone locks nothing).
    host.sys.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
        return CommandResult{.out = read_fixture("cmd/rpm/qa-el9-570-open.txt") + kEl9Plugin};
    });
    host.sys.add_file("/etc/dnf/plugins/versionlock.list",
                      read_fixture("cmd/dnf/versionlock-570-open.list"));
    const auto profile = builtin_on_mirror("sci-sim"); // 580 open; alma enabled 580-open
    StepRunner run(host.sys, profile);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(r.modules.empty());
    EXPECT_EQ(specs(r.installs), (Strings{"nvidia-open=3:580.95.05-1.el9",
                                          "kmod-nvidia-open-dkms=3:580.95.05-1.el9"}));
    // The 570 closure is versionlocked: released before the transaction, as on apt.
    EXPECT_FALSE(r.unholds.empty());
    EXPECT_NE(std::find(r.unholds.begin(), r.unholds.end(), "nvidia-open"), r.unholds.end());
    EXPECT_TRUE(contains(r.changes.front().target, "dnf versionlock delete"))
        << r.changes.front().target;
}

// driver.hold on RHEL 9 needs dnf's versionlock plugin, which stock RHEL/Rocky images lack:
// preflight installs it from the distribution (no NVIDIA pin) in its own transaction, before the
// driver's, so the lock after the driver's transaction works. Not planned without a lock, nor
// when an installed rpm already provides dnf-command(versionlock).
TEST(ElPlan, HoldOnNineWithoutThePluginPlansThePlugin) {
    ElHost host("rocky-9");
    host.sys.add_file("/usr/src/kernels/5.14.0-362.8.1.el9_3.x86_64/Makefile", "");
    host.sys.add_link("/lib/modules/5.14.0-362.8.1.el9_3.x86_64/build",
                      "/usr/src/kernels/5.14.0-362.8.1.el9_3.x86_64");
    const std::string kernel_rpms =
        "@@\tkernel-devel\t(none)\t5.14.0\t362.8.1.el9_3\tx86_64\nP\tkernel-devel\n"
        "@@\tkernel-headers\t(none)\t5.14.0\t362.8.1.el9_3\tx86_64\nP\tkernel-headers\n";
    host.sys.on_command_prefix({"rpm", "-qa", "--qf"}, [kernel_rpms](const Command&) {
        return CommandResult{.out = kernel_rpms};
    });
    auto profile = builtin_on_mirror("cv-train"); // 580 open, hold: true
    ASSERT_TRUE(profile.driver->hold);
    {
        StepRunner run(host.sys, profile);
        const auto r = run.check("preflight");
        EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
        EXPECT_EQ(specs(r.installs), Strings{"python3-dnf-plugin-versionlock"});
        EXPECT_TRUE(contains(r.reason, "the driver's branch lock")) << r.reason;
        // The driver's transaction is another one: preflight's runs first.
        auto plan = run.plan();
        const auto groups = package_groups(plan);
        ASSERT_EQ(groups.size(), 2u);
        EXPECT_EQ(plan.steps[groups.front().front()].id, "preflight");
    }
    // No hold, no kernel hold: nothing to lock on 9 (the module stream keeps the branch).
    profile.driver->hold = false;
    profile.driver->hold_kernel = false;
    {
        StepRunner run(host.sys, profile);
        EXPECT_TRUE(run.check("preflight").installs.empty());
    }
    profile.driver->hold_kernel = true; // the kernel's lock needs it as much
    {
        StepRunner run(host.sys, profile);
        EXPECT_EQ(specs(run.check("preflight").installs),
                  Strings{"python3-dnf-plugin-versionlock"});
    }
    // Installed already: nothing to install.
    profile.driver->hold = true;
    host.sys.on_command_prefix({"rpm", "-qa", "--qf"}, [kernel_rpms](const Command&) {
        return CommandResult{.out = kernel_rpms + kEl9Plugin};
    });
    host.sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db");
    StepRunner run(host.sys, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
    EXPECT_TRUE(r.installs.empty());
}

} // namespace

// A transaction killed during cuda-toolkit's %post: rpm records the package, but the
// scriptlet's `alternatives --install` never ran (e2e 35). The step redoes it, and leaves a
// /usr/local/cuda that points elsewhere alone.
TEST(ElPlan, AToolkitWhosePostWasKilledGetsItsAlternativesBack) {
    ElHost host("rocky-9");
    host.sys.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
        return CommandResult{.out = "@@\tcuda-toolkit-13-0\t(none)\t13.0.2\t1\tx86_64\n"
                                    "P\tcuda-toolkit-13-0\n"};
    });
    host.sys.add_file("/usr/local/cuda-13.0/bin/nvcc", "nvcc");
    host.sys.add_file("/etc/profile.d/gpuprov-cuda.sh", "");
    auto profile = builtin_on_mirror("cv-train");
    StepRunner run(host.sys, profile);
    const auto r = run.check("cuda-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_EQ(
        targets(r, Change::Kind::command),
        (Strings{"alternatives --install /usr/local/cuda cuda /usr/local/cuda-13.0 130",
                 "alternatives --install /usr/local/cuda-13 cuda-13 /usr/local/cuda-13.0 130"}));
    host.sys.on_command_prefix({"alternatives"}, [](const Command&) { return CommandResult{}; });
    EXPECT_EQ(run.step("cuda-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.commands_ran.size(), 2u);
    // An admin's /usr/local/cuda (another toolkit) is not this step's to change.
    host.sys.add_link("/usr/local/cuda", "/usr/local/cuda-12.6");
    host.sys.add_dir("/usr/local/cuda-12.6");
    EXPECT_TRUE(targets(run.check("cuda-toolkit"), Change::Kind::command).empty());
}

// EL ships podman, not Docker: the distro engines block with the ways that do work.
TEST(ElPlan, TheDistroEnginesAreNotOnElAndTheFixSaysWhatIs) {
    ElHost host("rocky-9");
    auto profile = builtin_on_mirror("nlp-infer");
    profile.container->engine = "docker.io";
    {
        StepRunner run(host.sys, profile);
        const auto r = run.check("container-toolkit");
        EXPECT_EQ(r.status, StepStatus::blocked);
        EXPECT_TRUE(contains(r.reason, "ships podman, not Docker")) << r.reason;
        EXPECT_TRUE(contains(r.reason, "container.engine: docker-ce")) << r.reason;
        EXPECT_TRUE(contains(r.reason, "container.cdi: true")) << r.reason;
        EXPECT_TRUE(r.installs.empty());
    }
    profile.container->engine = "containerd";
    profile.container->runtime = "containerd";
    StepRunner run(host.sys, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "containerd.io")) << r.reason;
}

TEST(ElPlan, AUserProfilesPinWinsOverNvidiasKey) {
    // A site profile extending cv-train points cuda at its re-signed mirror with its own key.
    ElHost host("rocky-9");
    auto profile = load_profile_text("name: site\nextends: cv-train\nrepositories:\n  cuda:\n"
                                     "    url: https://mirror.test/cuda/{distro}/{arch}/\n"
                                     "    key_url: " +
                                         kKeyUrl + "\n    key_fingerprint: " + fingerprint() + "\n",
                                     "site.yaml", matrix());
    profile.host = {};
    StepRunner run(host.sys, profile);
    const auto plan = run.plan();
    const auto cuda = std::find_if(plan.repositories.begin(), plan.repositories.end(),
                                   [](const ResolvedRepo& r) { return r.name == "cuda"; });
    ASSERT_NE(cuda, plan.repositories.end());
    EXPECT_EQ(cuda->url, kElCudaUrl);
    EXPECT_EQ(cuda->key_url, kKeyUrl);
    EXPECT_EQ(cuda->key_fingerprint, fingerprint());
    EXPECT_EQ(cuda->key_source, "pinned by the profile");
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(
        contains(r.changes.at(0).detail, "OpenPGP key " + fingerprint() + " from " + kKeyUrl +
                                             " (fingerprint checked; pinned by the profile)"))
        << r.changes.at(0).detail;
    // NVIDIA's key file was never asked for.
    for (const auto& url : host.sys.urls_fetched) {
        EXPECT_FALSE(contains(url, "D42D0685")) << url;
    }
}

// driver.hold_kernel on EL: with the driver installed, `dnf versionlock add` locks the installed
// kernel packages (dnf's installonly kernel set) beside the driver's closure, so `dnf update`
// brings no kernel the module was not built for. Never a kernel package that is not installed;
// nothing of the kernel without hold_kernel.
TEST(ElPlan, HoldKernelVersionlocksTheInstalledKernelPackages) {
    ElHost host("alma-9", true, "qa-el9-580-open.txt");
    // The running kernel's packages (uname -r 5.14.0-570.12.1.el9_6.x86_64), as rpm -qa prints
    // them.
    std::string kernel_rpms;
    for (const auto* n : {"kernel", "kernel-core", "kernel-modules", "kernel-modules-core"}) {
        kernel_rpms +=
            std::string("@@\t") + n + "\t(none)\t5.14.0\t570.12.1.el9_6\tx86_64\nP\t" + n + "\n";
    }
    host.sys.on_command_prefix({"rpm", "-qa", "--qf"}, [kernel_rpms](const Command&) {
        return CommandResult{.out = read_fixture("cmd/rpm/qa-el9-580-open.txt") + kernel_rpms};
    });
    auto profile = builtin_on_mirror("sci-sim"); // 580 open, hold and hold_kernel
    ASSERT_TRUE(profile.driver->hold_kernel);
    const auto lock_command = [&](const Profile& p) {
        StepRunner run(host.sys, p);
        const auto r = run.check("driver");
        EXPECT_NE(r.status, StepStatus::blocked) << r.reason;
        std::string out;
        for (const auto& c : r.changes) {
            if (starts_with(c.target, "dnf versionlock add ")) {
                out = c.target;
            }
        }
        return out;
    };
    const auto with_kernel = lock_command(profile);
    EXPECT_TRUE(contains(with_kernel, " nvidia-open")) << with_kernel;
    EXPECT_TRUE(with_kernel.ends_with(" kernel kernel-core kernel-modules kernel-modules-core"))
        << with_kernel;
    EXPECT_FALSE(contains(with_kernel, "kernel-devel")) << with_kernel;
    EXPECT_FALSE(contains(with_kernel, "kernel-headers")) << with_kernel;

    profile.driver->hold_kernel = false;
    const auto driver_only = lock_command(profile);
    EXPECT_TRUE(contains(driver_only, " nvidia-open")) << driver_only;
    EXPECT_FALSE(contains(driver_only, "kernel ")) << driver_only;
    EXPECT_FALSE(driver_only.ends_with(" kernel-modules-core")) << driver_only;
}

// docker-ce on EL: Docker's RHEL repository (a dnf baseurl, no dists) with the key Docker's
// rhel.md pins, from the matrix; a key at Docker's gpg URL that is not Docker's is refused.
TEST(ElPlan, DockerCeUsesDockersRhelRepositoryAndItsKey) {
    ElHost host("rocky-9");
    auto profile = builtin_on_mirror("nlp-infer");
    profile.container->engine = "docker-ce";
    profile.repositories["docker"] =
        RepositorySpec{.name = "docker", .url = std::string(kDockerRepoRoot)};
    host.sys.on_url("https://download.docker.com/linux/rhel/gpg",
                    http_ok(read_fixture("engine/test-key.asc")));
    StepRunner run(host.sys, profile);
    const auto repo = resolve_host_repo(profile.repositories.at("docker"), run.facts(), matrix());
    EXPECT_EQ(repo.url, "https://download.docker.com/linux/rhel/9/x86_64/stable/");
    EXPECT_EQ(repo.suite, "");
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "key at https://download.docker.com/linux/rhel/gpg has "
                                   "fingerprint " +
                                       fingerprint() +
                                       ", expected 060A61C51B558A7F742B77AAC52FEB6B621E9F35"))
        << r.reason;
    EXPECT_TRUE(r.installs.empty());
}
