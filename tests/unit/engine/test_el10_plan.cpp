// EL 10 on a Rocky 10 fixture host (tests/fixtures/hosts/rocky-10) against an NVIDIA-shaped
// rhel10 repository (tests/fixtures/repo/rpm-el10: no module streams; NVIDIA's rpm names and
// relations for two 595 builds and a 610, real createrepo_c output). dnf's answers are real dnf
// 4.14 captures of that repository (tests/fixtures/cmd/dnf/el10-*.txt, lab/el10.sh): with only
// the top-level packages pinned dnf reaches into 610 (nvidia-kmod-common requires nvidia-modprobe
// without a version); with the branch's closure pinned it does not. Also: dnf's versionlock
// plugin is planned wherever a lock is, on 10 and on 9.
#include "host_builder.hpp"
#include "kernel_hook_fixture.hpp"

#include <gpuprov/journal.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/transaction.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kEl10CudaUrl = "https://mirror.test/cuda/rhel10/x86_64/";
const std::string kEl10Kernel = "6.12.0-55.9.1.el10_0.x86_64";
const std::string kPlugin = "python3-dnf-plugin-versionlock";
const std::string kLockList = "/etc/dnf/plugins/versionlock.list";

/// What `rpm -qa --qf` prints for one package (gpuprov's query format).
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

/// The plugin as Rocky 10's BaseOS ships it (reference rpm-sources ROCKY10-PKGS, ALMA10-VL).
std::string plugin_rpm() {
    return rpm_line(kPlugin, "4.7.0", "9.el10", "noarch", {std::string(kVersionlockCommand)});
}

/// The 12 driver packages of one build that the open flavour's closure holds.
Strings open_closure(const std::string& evr) {
    Strings out;
    for (const auto* n :
         {"nvidia-open", "kmod-nvidia-open-dkms", "nvidia-driver", "nvidia-driver-cuda",
          "nvidia-driver-libs", "nvidia-kmod-common", "libnvidia-gpucomp", "libnvidia-ml",
          "nvidia-driver-cuda-libs", "nvidia-persistenced", "nvidia-modprobe", "libnvidia-cfg"}) {
        out.push_back(std::string(n) + "=" + evr);
    }
    return out;
}

Strings sorted(Strings v) {
    std::sort(v.begin(), v.end());
    return v;
}

/// A Rocky 10 host with EPEL, the kernel build tree for its kernel, and NVIDIA's rhel10
/// repository behind the mirror (re-signed: gpgv answers for the test key).
struct El10Host {
    FakeSystem sys;
    std::string rpms; ///< what rpm -qa answers, in gpuprov's query format

    explicit El10Host(const std::string& tree = "rocky-10") {
        sys.load_tree("hosts/" + tree);
        sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db");
        sys.add_file("/etc/yum.repos.d/epel.repo", "[epel]\nname=Extra Packages\n");
        rpms = rpm_line("kernel-devel", "6.12.0", "55.9.1.el10_0", "x86_64") +
               rpm_line("kernel-headers", "6.12.0", "55.9.1.el10_0", "x86_64");
        sys.add_file("/usr/src/kernels/" + kEl10Kernel + "/Makefile", "");
        sys.add_link("/lib/modules/" + kEl10Kernel + "/build", "/usr/src/kernels/" + kEl10Kernel);
        sys.on_command_prefix({"rpm", "-qa", "--qf"},
                              [this](const Command&) { return CommandResult{.out = rpms}; });
        sys.on_url(kKeyUrl, http_ok(read_fixture("engine/test-key.asc")));
        const auto repomd = read_fixture("repo/rpm-el10/cuda/repomd.xml");
        sys.on_url(kEl10CudaUrl + "repodata/repomd.xml", http_ok(repomd));
        sys.on_url(kEl10CudaUrl + "repodata/repomd.xml.asc", http_ok("(detached signature)\n"));
        const auto at = repomd.find("href=\"repodata/", repomd.find("type=\"primary\""));
        const auto location = repomd.substr(at + 6, repomd.find('"', at + 6) - at - 6);
        sys.on_url(
            kEl10CudaUrl + location,
            http_ok(read_fixture("repo/rpm-el10/cuda/" + location.substr(location.find('/') + 1))));
        sys.on_command_prefix({"gpgv"}, [](const Command&) {
            const auto f = fingerprint();
            return CommandResult{.out = "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + f +
                                        " 2026-12-02 1796218524 0 4 0 1 10 00 " + f + "\n"};
        });
    }

    /// dnf answers the plan's simulation with the real capture for what it was asked: the
    /// branch's closure pinned (nvidia-modprobe of the build named), or the top-level packages
    /// alone.
    void dnf_answers(const std::string& closure_capture, const std::string& roots_capture,
                     const std::string& modprobe_spec) {
        sys.on_command_prefix({"dnf", "-y"}, [](const Command&) {
            return CommandResult{.out = "Metadata cache created.\n"};
        });
        sys.on_command_prefix({"dnf", "--assumeno"}, [=, this](const Command& c) {
            asked.push_back(c.argv);
            const bool closure =
                std::find(c.argv.begin(), c.argv.end(), modprobe_spec) != c.argv.end();
            return CommandResult{
                .exit_code = 1,
                .out = read_fixture("cmd/dnf/" + (closure ? closure_capture : roots_capture)),
                .err = "Error: Operation aborted.\n"};
        });
    }
    std::vector<Strings> asked; ///< every `dnf --assumeno` argv
};

/// A profile for EL 10 on the mirror: 595 open modules, held, the key pinned (the matrix knows
/// NVIDIA's rhel10 key by file name only, so a rhel-10 profile pins one).
Profile el10_profile(const std::string& extra = {}) {
    auto p =
        load_profile_text("name: el10\nhost: {os: [rhel-10]}\nrepositories:\n  cuda:\n"
                          "    url: https://mirror.test/cuda/{distro}/{arch}/\n"
                          "    key_url: " +
                              kKeyUrl + "\n    key_fingerprint: " + fingerprint() +
                              "\ndriver: {branch: \"595\", flavor: open, hold: true}\n" + extra,
                          "el10.yaml", matrix());
    return p;
}

const PackageAction* action(const PackageTransaction& t, const std::string& name) {
    for (const auto& a : t.actions) {
        if (a.name == name) {
            return &a;
        }
    }
    return nullptr;
}

TEST(El10Plan, RockyTenIsTheRhel10RepositoryWithoutModuleStreams) {
    El10Host host;
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    EXPECT_EQ(run.facts().os.repo_slug, "rhel10");
    EXPECT_EQ(run.facts().os.profile_os, "rhel-10");
    EXPECT_TRUE(run.facts().kernel_devel);
    EXPECT_EQ(make_package_manager(run.facts())->name(), "dnf");
    const auto* names = matrix().package_names("rhel");
    ASSERT_TRUE(names != nullptr && names->driver);
    EXPECT_FALSE(names->driver->modular(10));
    EXPECT_TRUE(names->driver->modular(9));
    EXPECT_EQ(names->driver->versionlock_plugin.at(10), kPlugin);
    EXPECT_EQ(run.check("preflight").status, StepStatus::pending); // the plugin (below)
    EXPECT_NE(run.check("cuda-repo").status, StepStatus::blocked);
}

TEST(El10Plan, TheDriverIsTheWholeClosureOfTheNewest595BuildAndNoModule) {
    El10Host host;
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    const auto r = run.check("driver");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(r.modules.empty());
    ASSERT_GE(r.installs.size(), 2u);
    EXPECT_EQ(
        specs({r.installs[0], r.installs[1]}),
        (Strings{"nvidia-open=3:595.91.07-1.el10", "kmod-nvidia-open-dkms=3:595.91.07-1.el10"}));
    EXPECT_EQ(sorted(specs(r.installs)), sorted(open_closure("3:595.91.07-1.el10")));
    for (const auto& pin : r.installs) {
        EXPECT_FALSE(contains(pin.version, "610.")) << pin.spec();
    }
    EXPECT_TRUE(r.hold_installs);
    bool said = false;
    for (const auto& c : r.changes) {
        said = said || (c.kind == Change::Kind::note && contains(c.detail, "no module streams"));
    }
    EXPECT_TRUE(said);

    // driver.version pins the older build: every part of the closure follows it.
    auto older = el10_profile();
    older.driver->version = "595.71.05";
    StepRunner pinned(host.sys, older);
    EXPECT_EQ(sorted(specs(pinned.check("driver").installs)),
              sorted(open_closure("3:595.71.05-1.el10")));

    // The proprietary modules: NVIDIA's proprietary packages and their closure; the open kmod
    // (only a Recommends of nvidia-kmod-common) is not pinned.
    auto prop = el10_profile();
    prop.driver->flavor = "proprietary";
    StepRunner proprietary(host.sys, prop);
    const auto p = specs(proprietary.check("driver").installs);
    const Strings want_first{"nvidia-driver=3:595.91.07-1.el10",
                             "nvidia-driver-cuda=3:595.91.07-1.el10",
                             "kmod-nvidia-latest-dkms=3:595.91.07-1.el10"};
    ASSERT_GE(p.size(), 3u);
    EXPECT_EQ(Strings(p.begin(), p.begin() + 3), want_first);
    EXPECT_NE(std::find(p.begin(), p.end(), "nvidia-modprobe=3:595.91.07-1.el10"), p.end());
    for (const auto& s : p) {
        EXPECT_FALSE(contains(s, "kmod-nvidia-open-dkms")) << s;
        EXPECT_FALSE(contains(s, "610.")) << s;
    }
}

TEST(El10Plan, DnfResolvesInsideTheBranchAndWithoutTheClosureTheGuardBlocks) {
    El10Host host;
    host.rpms += plugin_rpm(); // preflight has nothing to install: one transaction
    host.dnf_answers("el10-install-closure-595.txt", "el10-install-roots.txt",
                     "nvidia-modprobe-3:595.91.07-1.el10");
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    auto plan = run.plan();
    resolve_transactions(host.sys, run.ctx(), plan,
                         {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
    ASSERT_EQ(plan.transactions.size(), 1u);
    const auto& t = plan.transactions.front();
    EXPECT_TRUE(t.blocked.empty()) << t.blocked;
    EXPECT_TRUE(t.transaction.modules.empty());
    EXPECT_EQ(t.transaction.simulated_with.find("shell"), std::string::npos); // no module: install
    for (const auto& a : t.transaction.actions) {
        EXPECT_NE(driver_branch_of(a.to), "610") << describe(a);
    }
    ASSERT_NE(action(t.transaction, "nvidia-modprobe"), nullptr);
    EXPECT_EQ(action(t.transaction, "nvidia-modprobe")->to, "3:595.91.07-1.el10");
    EXPECT_TRUE(action(t.transaction, "nvidia-open")->hold);
    EXPECT_TRUE(action(t.transaction, "nvidia-modprobe")->hold);
    EXPECT_FALSE(action(t.transaction, "dkms")->hold);

    // The closure taken away (the top-level packages alone, as NVIDIA's guide has them without
    // its versionlock): real dnf pulls nvidia-modprobe 610 and the cross-branch guard names it.
    for (auto& s : plan.steps) {
        if (s.id == "driver") {
            s.check.installs.resize(2);
            ASSERT_EQ(specs(s.check.installs),
                      (Strings{"nvidia-open=3:595.91.07-1.el10",
                               "kmod-nvidia-open-dkms=3:595.91.07-1.el10"}));
        }
    }
    resolve_transactions(host.sys, run.ctx(), plan,
                         {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
    ASSERT_EQ(plan.transactions.size(), 1u);
    const auto& bare = plan.transactions.front();
    EXPECT_TRUE(contains(bare.blocked, "nvidia-modprobe 3:610.57.04-1.el10")) << bare.blocked;
    EXPECT_TRUE(contains(bare.blocked, "branch 610, not the profile's 595")) << bare.blocked;
    EXPECT_TRUE(contains(bare.blocked, "pulled by nvidia-kmod-common 3:595.91.07-1.el10"))
        << bare.blocked;
    ASSERT_EQ(host.asked.size(), 2u);
}

TEST(El10Plan, ThePluginIsPlannedWhenMissingAndNotWhenPresent) {
    El10Host host;
    auto profile = el10_profile();
    {
        StepRunner run(host.sys, profile);
        const auto r = run.check("preflight");
        EXPECT_EQ(r.status, StepStatus::pending);
        EXPECT_EQ(specs(r.installs), Strings{kPlugin}); // the distribution's version: no pin
        EXPECT_TRUE(r.installs.front().version.empty());
        EXPECT_EQ(targets(r, Change::Kind::package), Strings{kPlugin});
        EXPECT_TRUE(contains(r.reason, "dnf versionlock needs " + kPlugin)) << r.reason;
    }
    // EL 10 locks whatever driver.hold says: nothing else keeps the branch.
    profile.driver->hold = false;
    {
        StepRunner run(host.sys, profile);
        EXPECT_EQ(specs(run.check("preflight").installs), Strings{kPlugin});
        const auto d = run.check("driver");
        EXPECT_TRUE(d.hold_installs);
        bool said = false;
        for (const auto& c : d.changes) {
            said = said || contains(c.detail, "driver.hold is false");
        }
        EXPECT_TRUE(said);
    }
    host.rpms += plugin_rpm();
    host.sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db"); // the rpm database changed
    StepRunner run(host.sys, profile);
    const auto r = run.check("preflight");
    EXPECT_EQ(r.status, StepStatus::satisfied) << r.reason;
    EXPECT_TRUE(r.installs.empty());
}

TEST(El10Plan, AConvergedHostIsSatisfiedAndALockWithoutThePluginIsNoLock) {
    El10Host host;
    host.rpms += read_fixture("cmd/rpm/qa-el10-595-open.txt");
    std::string locks;
    for (const auto& s : open_closure("3:595.91.07-1.el10")) {
        locks += "\n# Added lock on Fri Dec  4 13:24:01 2026\n" + s.substr(0, s.find('=')) +
                 "-3:595.91.07-1.el10.*\n";
    }
    host.sys.add_file(kLockList, locks);
    host.sys.add_file("/proc/driver/nvidia/version",
                      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  595.91.07  Release "
                      "Build  (dvs-builder@U22-I3-AD05-51-5)  Tue Mar  3 19:14:46 UTC 2026\n");
    host.sys.add_file("/proc/modules", "nvidia 14381056 0 - Live 0x0000000000000000\n");
    const auto profile = el10_profile();
    {
        // The list is there but nothing reads it: the closure is not locked, and preflight
        // brings the plugin the lock needs.
        StepRunner run(host.sys, profile);
        const auto d = run.check("driver");
        EXPECT_EQ(d.status, StepStatus::pending) << d.reason;
        EXPECT_TRUE(d.installs.empty());
        const auto cmds = targets(d, Change::Kind::command);
        ASSERT_EQ(cmds.size(), 1u);
        EXPECT_TRUE(starts_with(cmds[0], "dnf versionlock add ")) << cmds[0];
        EXPECT_TRUE(contains(cmds[0], " nvidia-modprobe")) << cmds[0];
        EXPECT_EQ(specs(run.check("preflight").installs), Strings{kPlugin});
    }
    host.rpms += plugin_rpm();
    host.sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db");
    StepRunner run(host.sys, profile);
    // The driver step's kernel-install plugin (issue 23) is part of a converged driver.
    EXPECT_EQ(targets(run.check("driver"), Change::Kind::file),
              Strings{"/etc/kernel/install.d/45-gpuprov-forecast.install"});
    install_kernel_hook(host.sys, "rhel");
    const auto d = run.check("driver");
    EXPECT_EQ(d.status, StepStatus::satisfied) << d.reason;
    EXPECT_TRUE(d.installs.empty());
    EXPECT_EQ(run.check("preflight").status, StepStatus::satisfied);
}

TEST(El10Plan, ABranchChangeReleasesTheLocksMovesTheClosureAndLocksAgain) {
    struct Case {
        const char* installed; ///< rpm -qa capture
        const char* from;      ///< its build
        const char* branch;    ///< the profile's
        const char* to;        ///< the build the closure moves to
        const char* capture;   ///< real dnf for the closure pinned
        PackageAction::Kind kind;
    };
    for (const auto& c :
         {Case{"qa-el10-595-open.txt", "3:595.91.07-1.el10", "610", "3:610.57.04-1.el10",
               "el10-change-closure-610.txt", PackageAction::Kind::upgrade},
          Case{"qa-el10-610-open.txt", "3:610.57.04-1.el10", "595", "3:595.91.07-1.el10",
               "el10-change-closure-595.txt", PackageAction::Kind::downgrade}}) {
        SCOPED_TRACE(std::string(c.from) + " -> " + c.branch);
        El10Host host;
        host.rpms += read_fixture(std::string("cmd/rpm/") + c.installed) + plugin_rpm();
        std::string locks;
        for (const auto& s : open_closure(c.from)) {
            locks += s.substr(0, s.find('=')) + "-" + c.from + ".*\n";
        }
        host.sys.add_file(kLockList, locks);
        host.dnf_answers(c.capture, "el10-change-roots-595.txt",
                         std::string("nvidia-modprobe-") + c.to);
        auto profile = el10_profile();
        profile.driver->branch = c.branch;
        StepRunner run(host.sys, profile);
        const auto d = run.check("driver");
        ASSERT_EQ(d.status, StepStatus::pending) << d.reason;
        // 1. the old closure's locks released, before the transaction (prepare).
        Strings closure_names;
        for (const auto& s : open_closure(c.from)) {
            closure_names.push_back(s.substr(0, s.find('=')));
        }
        EXPECT_EQ(sorted(d.unholds), sorted(closure_names));
        ASSERT_FALSE(d.changes.empty());
        EXPECT_TRUE(starts_with(d.changes.front().target, "dnf versionlock delete "))
            << d.changes.front().target;
        // 2. the whole closure moved to the other branch's build, in one transaction.
        EXPECT_EQ(sorted(specs(d.installs)), sorted(open_closure(c.to)));
        EXPECT_TRUE(d.modules.empty());
        // 3. locked again after it (configure holds the installed closure).
        EXPECT_TRUE(d.hold_installs);

        auto plan = run.plan();
        resolve_transactions(host.sys, run.ctx(), plan,
                             {.scratch_dir = "/tmp/gpuprov-sim", .cache_dir = kCacheDir});
        ASSERT_EQ(plan.transactions.size(), 1u);
        const auto& t = plan.transactions.front();
        EXPECT_TRUE(t.blocked.empty()) << t.blocked;
        EXPECT_EQ(t.transaction.actions.size(), 12u);
        for (const auto& a : t.transaction.actions) {
            EXPECT_EQ(a.kind, c.kind) << describe(a);
            EXPECT_EQ(a.to, c.to) << describe(a);
            EXPECT_EQ(a.from, c.from) << describe(a);
            EXPECT_TRUE(a.hold) << describe(a);
        }

        // After the move (the other build installed, not yet locked): configure locks the
        // closure, the old locks gone.
        El10Host after;
        after.rpms += read_fixture(std::string("cmd/rpm/") + (c.kind == PackageAction::Kind::upgrade
                                                                  ? "qa-el10-610-open.txt"
                                                                  : "qa-el10-595-open.txt")) +
                      plugin_rpm();
        StepRunner moved(after.sys, profile);
        const auto m = moved.check("driver");
        EXPECT_TRUE(m.installs.empty()) << m.reason;
        const auto cmds = targets(m, Change::Kind::command);
        ASSERT_EQ(cmds.size(), 1u);
        for (const auto& name : closure_names) {
            EXPECT_TRUE(contains(cmds[0] + " ", " " + name + " ")) << name << ": " << cmds[0];
        }
    }
}

TEST(El10Plan, ADriverPackageMovedToAnotherBranchIsPendingAndMovedBack) {
    // nvidia-modprobe 610 beside a 595 driver: what an unlocked `dnf upgrade` leaves.
    El10Host host;
    auto rpms = read_fixture("cmd/rpm/qa-el10-595-open.txt");
    const auto at = rpms.find("@@\tnvidia-modprobe\t3\t595.91.07");
    ASSERT_NE(at, std::string::npos);
    rpms.replace(at, std::string("@@\tnvidia-modprobe\t3\t595.91.07").size(),
                 "@@\tnvidia-modprobe\t3\t610.57.04");
    host.rpms += rpms + plugin_rpm();
    const auto profile = el10_profile();
    StepRunner run(host.sys, profile);
    const auto d = run.check("driver");
    ASSERT_EQ(d.status, StepStatus::pending) << d.reason;
    EXPECT_EQ(specs(d.installs), Strings{"nvidia-modprobe=3:595.91.07-1.el10"});
}

TEST(El10Plan, AFlavourChangeRemovesTheOtherFlavoursPartsAndPinsNoneOfThem) {
    // 595 with the open modules, installed by gpuprov; the profile now asks for the proprietary
    // ones. The installed closure holds nvidia-open and kmod-nvidia-open-dkms, which conflict
    // with kmod-nvidia-latest-dkms: pinned with the rest of the closure they would stay, and the
    // transaction could never resolve.
    El10Host host;
    host.rpms += read_fixture("cmd/rpm/qa-el10-595-open.txt") + plugin_rpm();
    Journal j{.profile = "el10"};
    JournalStep s{.id = "driver", .status = "done"};
    for (const auto& spec : open_closure("3:595.91.07-1.el10")) {
        s.versions[spec.substr(0, spec.find('='))] = spec.substr(spec.find('=') + 1);
    }
    j.steps.push_back(s);
    save_journal(host.sys, j);
    auto profile = el10_profile();
    profile.driver->flavor = "proprietary";
    StepRunner run(host.sys, profile);
    const auto d = run.check("driver");
    ASSERT_EQ(d.status, StepStatus::pending) << d.reason;
    EXPECT_EQ(sorted(d.removals), (Strings{"kmod-nvidia-open-dkms", "nvidia-open"}));
    const auto pins = specs(d.installs);
    EXPECT_NE(std::find(pins.begin(), pins.end(), "kmod-nvidia-latest-dkms=3:595.91.07-1.el10"),
              pins.end());
    for (const auto& p : pins) {
        EXPECT_FALSE(contains(p, "nvidia-open")) << p;
        EXPECT_FALSE(contains(p, "610.")) << p;
    }
}

TEST(El10Plan, FabricManagerHasNoStreamAndIsLockedWithTheDriver) {
    El10Host host;
    auto profile = el10_profile("fabric_manager: true\n");
    StepRunner run(host.sys, profile);
    const auto r = run.check("fabric-manager");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(r.modules.empty());
    // NVIDIA's names from 580 (nvidia-fabricmanager, libnvidia-nscq) at the driver's version;
    // each its own epoch and release.
    EXPECT_EQ(specs(r.installs), (Strings{"nvidia-fabricmanager=595.91.07-1.el10",
                                          "libnvidia-nscq=595.91.07-1.el10"}));
    EXPECT_TRUE(r.hold_installs);
}

TEST(El10Plan, NvidiasRhel10KeyIsKnownByFileOnlySoAProfileWithoutAPinIsToldToPinIt) {
    const auto* d = matrix().distro("rhel10");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->os, "rhel-10");
    EXPECT_EQ(d->family, "rhel");
    EXPECT_EQ(d->key_file, "CDF6BA43.pub");
    EXPECT_TRUE(d->key_fingerprint.empty());
    El10Host host;
    auto profile = el10_profile();
    profile.repositories.at("cuda").url =
        "https://developer.download.nvidia.com/compute/cuda/repos/{distro}/{arch}/";
    profile.repositories.at("cuda").key_url.clear();
    profile.repositories.at("cuda").key_fingerprint.clear();
    const auto repo = resolve_host_repo(profile.repositories.at("cuda"),
                                        StepRunner(host.sys, profile).facts(), matrix());
    EXPECT_TRUE(repo.key_fingerprint.empty());
    EXPECT_TRUE(contains(repo.key_source, "CDF6BA43.pub (rhel10)")) << repo.key_source;
    EXPECT_TRUE(contains(repo.key_source, "host.os naming rhel-10")) << repo.key_source;
    StepRunner run(host.sys, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "CDF6BA43.pub")) << r.reason;
}

} // namespace
