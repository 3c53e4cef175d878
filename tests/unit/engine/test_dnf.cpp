// The dnf backend: argv it builds, dnf's transaction table parsed from real output, holds read
// from a real versionlock list, interrupted transactions, and the rhel family's choice of it.
#include "dnf/dnf_api.hpp"
#include "fake_system.hpp"

#include <algorithm>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/transaction.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;
using testing::read_fixture;
using Kind = PackageAction::Kind;

PackageAction act(Kind k, std::string name, std::string from, std::string to) {
    return PackageAction{
        .kind = k, .name = std::move(name), .from = std::move(from), .to = std::move(to)};
}

TEST(DnfTable, UpgradesFromRealOutput) {
    const auto a = parse_dnf_transaction(read_fixture("cmd/dnf/install-upgrade.txt"));
    // nvidia-driver-cuda-libs stays: nothing in this stand-in set requires its new version.
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a[0], act(Kind::upgrade, "kmod-nvidia-open-dkms", "", "3:580.95.05-1.el9"));
    EXPECT_EQ(a[3], act(Kind::upgrade, "nvidia-open", "", "3:580.95.05-1.el9"));
}

TEST(DnfTable, InstallsWithDependencies) {
    const auto a = parse_dnf_transaction(read_fixture("cmd/dnf/install-fresh-with-deps.txt"));
    ASSERT_EQ(a.size(), 7u);
    EXPECT_EQ(a[0], act(Kind::install, "cuda-toolkit-12-8", "", "12.8.1-1"));
    EXPECT_EQ(a[2], act(Kind::install, "dkms", "", "3.2.1-1.el9")); // "Installing dependencies:"
    EXPECT_EQ(a[6], act(Kind::install, "nvidia-kmod-common", "", "3:580.95.05-1.el9"));
}

TEST(DnfTable, DowngradesAndEveryRemovalGroup) {
    const auto down = parse_dnf_transaction(read_fixture("cmd/dnf/install-downgrade.txt"));
    ASSERT_EQ(down.size(), 5u);
    EXPECT_EQ(down[1], act(Kind::downgrade, "nvidia-driver", "", "3:570.195.03-1.el9"));

    const auto rm = parse_dnf_transaction(read_fixture("cmd/dnf/remove-dependents.txt"));
    ASSERT_EQ(rm.size(), 6u);
    EXPECT_EQ(rm[0], act(Kind::remove, "nvidia-kmod-common", "3:570.195.03-1.el9", ""));
    EXPECT_EQ(rm[1], act(Kind::remove, "nvidia-open", "3:570.195.03-1.el9", ""));
    EXPECT_EQ(rm[2], act(Kind::remove, "dkms", "3.2.1-1.el9", "")); // unused dependency
}

TEST(DnfTable, LongNamesWrapOntoTheirOwnLine) {
    const auto a = parse_dnf_transaction(read_fixture("cmd/dnf/shell-install-upgrade-remove.txt"));
    ASSERT_EQ(a.size(), 6u);
    EXPECT_EQ(a[0],
              act(Kind::install, "datacenter-gpu-manager-4-multinode-cuda12", "", "1:4.5.2-1"));
    EXPECT_EQ(a[1], act(Kind::upgrade, "kmod-nvidia-open-dkms", "", "3:580.95.05-1.el9"));
    EXPECT_EQ(a[5], act(Kind::remove, "cuda-toolkit-12-8", "12.8.1-1", ""));
}

TEST(DnfTable, NothingOutsideTheTable) {
    EXPECT_TRUE(parse_dnf_transaction(read_fixture("cmd/dnf/error-no-match.txt")).empty());
    EXPECT_TRUE(
        parse_dnf_transaction("Dependencies resolved.\nNothing to do.\nComplete!\n").empty());
    // Module stream groups change no package.
    EXPECT_TRUE(
        parse_dnf_transaction("Enabling module streams:\n nvidia-driver    580-open\n\n").empty());
}

TEST(DnfTable, ModuleStreamRowsFromRealOutput) {
    const auto enable = read_fixture("cmd/dnf/shell-module-enable-install.txt");
    EXPECT_EQ(parse_dnf_module_changes(enable),
              (std::vector<std::string>{"enable nvidia-driver 580-dkms"}));
    const auto a = parse_dnf_transaction(enable);
    ASSERT_EQ(a.size(), 7u); // the module row is not a package
    EXPECT_EQ(a[0], act(Kind::install, "kmod-nvidia-latest-dkms", "", "3:580.95.05-1.el9"));
    EXPECT_EQ(a[3], act(Kind::install, "dkms", "", "3.2.1-1.el9"));

    const auto sw = read_fixture("cmd/dnf/shell-switch-to-upgrade.txt");
    EXPECT_EQ(parse_dnf_module_changes(sw),
              (std::vector<std::string>{"switch nvidia-driver 570-open -> 580-open"}));
    EXPECT_EQ(parse_dnf_transaction(sw).size(), 7u);

    const auto flavor = read_fixture("cmd/dnf/shell-switch-to-flavor-change.txt");
    EXPECT_EQ(parse_dnf_module_changes(flavor),
              (std::vector<std::string>{"switch nvidia-driver 570-open -> 580-dkms"}));
    const auto f = parse_dnf_transaction(flavor);
    ASSERT_EQ(f.size(), 8u);
    EXPECT_EQ(f[0], act(Kind::install, "kmod-nvidia-latest-dkms", "", "3:580.95.05-1.el9"));
    EXPECT_EQ(f[7], act(Kind::remove, "nvidia-open", "3:570.195.03-1.el9", ""));
    // `dnf module list` is no transaction.
    EXPECT_TRUE(
        parse_dnf_transaction(read_fixture("cmd/dnf/module-list-570-open-enabled.txt")).empty());
}

class DnfTest : public ::testing::Test {
protected:
    void SetUp() override {
        sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db");
        sys.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
            return CommandResult{.out = read_fixture("cmd/rpm/qa-el9-570-open.txt")};
        });
    }
    FakeSystem sys;
    std::unique_ptr<PackageManager> dnf = make_dnf();
};

TEST_F(DnfTest, InstallsExactVersionsWithoutEverSkippingSignatures) {
    const auto cmd = dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}, {"kernel-devel", ""}});
    EXPECT_EQ(cmd.argv,
              (std::vector<std::string>{"dnf", "install", "-y", "nvidia-open-3:580.95.05-1.el9",
                                        "kernel-devel"}));
    EXPECT_TRUE(cmd.finish_on_stop);
    EXPECT_GT(cmd.idle_timeout.count(), 0);
    for (const auto& a : cmd.argv) {
        EXPECT_EQ(a.find("nogpgcheck"), std::string::npos);
    }
}

TEST_F(DnfTest, InstallAndRemoveInOneTransactionThroughDnfShell) {
    const auto cmd = dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}, {"cuda-toolkit-12-8"});
    EXPECT_EQ(cmd.argv, (std::vector<std::string>{"dnf", "shell", "-y"}));
    EXPECT_EQ(cmd.stdin_data,
              "install nvidia-open-3:580.95.05-1.el9\nremove cuda-toolkit-12-8\nrun\n");
    // A spec cannot smuggle a second shell command.
    EXPECT_THROW((void)dnf->install({{"a", "1\nremove kernel"}}, {"b"}), Error);
    EXPECT_THROW((void)dnf->install({{"a b", ""}}), Error);
}

TEST_F(DnfTest, ModuleStreamsOpenTheShellScriptOfTheOneTransaction) {
    const ModuleStream open{.module = "nvidia-driver", .stream = "580-open"};
    const auto cmd = dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}, {}, {open});
    EXPECT_EQ(cmd.argv, (std::vector<std::string>{"dnf", "shell", "-y"}));
    EXPECT_EQ(cmd.stdin_data, "module enable nvidia-driver:580-open\n"
                              "install nvidia-open-3:580.95.05-1.el9\nrun\n");
    // Another stream enabled: a plain enable is refused by dnf (error-stream-switch.txt).
    auto sw = open;
    sw.switch_from_other = true;
    EXPECT_EQ(
        dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}, {"kmod-nvidia-latest-dkms"}, {sw})
            .stdin_data,
        "module switch-to nvidia-driver:580-open\ninstall nvidia-open-3:580.95.05-1.el9\n"
        "remove kmod-nvidia-latest-dkms\nrun\n");
    EXPECT_THROW((void)dnf->install({}, {}, {{.module = "nvidia-driver", .stream = "580\nrun"}}),
                 Error);
    // apt has no module streams: asking it for one is a bug, never a silent drop.
    HostFacts debian;
    debian.os.family = "debian";
    debian.os.repo_slug = "debian12";
    EXPECT_THROW((void)make_package_manager(debian)->install({}, {}, {open}), BugError);
}

TEST_F(DnfTest, AShellThatExitsZeroAfterARefusalIsAFailedTransaction) {
    const auto cmd = dnf->install({{"nvidia-open", "3:580.95.05-1.el9"}}, {},
                                  {{.module = "nvidia-driver", .stream = "580-open"}});
    // Real dnf 4.14 exits 0 here, with the refusal on stderr.
    EXPECT_THROW(dnf->check_install(
                     cmd, CommandResult{.exit_code = 0,
                                        .out = "> Leaving Shell\n",
                                        .err = read_fixture("cmd/dnf/error-stream-switch.txt")}),
                 CommandError);
    EXPECT_NO_THROW(dnf->check_install(cmd, CommandResult{.out = "Complete!\n"}));
}

TEST_F(DnfTest, SimulationRefusesSkippedPackagesAndAStreamItWillNotSwitch) {
    // dnf prints a summary yet leaves the conflicting kmod out: not the transaction asked for.
    sys.on_command_prefix({"dnf", "--assumeno", "shell"}, [](const Command&) {
        return CommandResult{.out = read_fixture("cmd/dnf/shell-switch-to-skipped-conflicts.txt"),
                             .err = "Error: Operation aborted.\n"};
    });
    const ModuleStream dkms{
        .module = "nvidia-driver", .stream = "580-dkms", .switch_from_other = true};
    const auto skipped = dnf->simulate(
        sys, {.installs = {{"kmod-nvidia-latest-dkms", "3:580.95.05-1.el9"}}, .modules = {dkms}});
    EXPECT_NE(skipped.error.find("Problem"), std::string::npos) << skipped.error;

    FakeSystem other;
    other.on_command_prefix({"dnf", "--assumeno", "shell"}, [](const Command&) {
        return CommandResult{.out = read_fixture("cmd/dnf/shell-enable-other-stream.txt"),
                             .err = read_fixture("cmd/dnf/error-stream-switch.txt")};
    });
    const auto refused =
        dnf->simulate(other, {.installs = {{"nvidia-open", "3:580.95.05-1.el9"}},
                              .modules = {{.module = "nvidia-driver", .stream = "580-open"}}});
    EXPECT_NE(refused.error.find("not possible to switch enabled streams"), std::string::npos)
        << refused.error;
}

TEST_F(DnfTest, SimulationIsDnfsOwnResolutionWithOldVersionsFromRpm) {
    sys.on_command({"dnf", "--assumeno", "install", "nvidia-open-3:580.95.05-1.el9"},
                   CommandResult{.exit_code = 1,
                                 .out = read_fixture("cmd/dnf/install-upgrade.txt"),
                                 .err = "Operation aborted.\n"});
    const auto t = dnf->simulate(sys, {.installs = {{"nvidia-open", "3:580.95.05-1.el9"}}});
    EXPECT_TRUE(t.error.empty()) << t.error;
    ASSERT_EQ(t.actions.size(), 4u);
    EXPECT_EQ(t.actions[3],
              act(Kind::upgrade, "nvidia-open", "3:570.195.03-1.el9", "3:580.95.05-1.el9"));
    EXPECT_TRUE(sys.commands_ran.empty()); // a query, never a change
}

TEST_F(DnfTest, SimulationRefusalCarriesDnfsError) {
    sys.on_command({"dnf", "--assumeno", "install", "no-such-package-1.0-1"},
                   CommandResult{.exit_code = 1,
                                 .out = "Last metadata expiration check: 0:00:12 ago.\n",
                                 .err = read_fixture("cmd/dnf/error-no-match.txt")});
    const auto t = dnf->simulate(sys, {.installs = {{"no-such-package", "1.0-1"}}});
    EXPECT_NE(t.error.find("Unable to find a match"), std::string::npos) << t.error;
    EXPECT_TRUE(t.actions.empty());
}

TEST_F(DnfTest, SimulationWithRemovalsFeedsTheShellScript) {
    std::optional<std::string> fed;
    sys.on_command_prefix({"dnf", "--assumeno", "shell"}, [&](const Command& c) {
        fed = c.stdin_data;
        return CommandResult{.out = read_fixture("cmd/dnf/shell-install-upgrade-remove.txt"),
                             .err = "Error: Operation aborted.\n"};
    });
    const auto t = dnf->simulate(sys, {.installs = {{"nvidia-open", "3:580.95.05-1.el9"}},
                                       .removals = {"cuda-toolkit-12-8"}});
    EXPECT_TRUE(t.error.empty()) << t.error;
    EXPECT_EQ(fed, "install nvidia-open-3:580.95.05-1.el9\nremove cuda-toolkit-12-8\nrun\n");
    EXPECT_EQ(t.actions.back(), act(Kind::remove, "cuda-toolkit-12-8", "12.8.1-1", ""));
}

TEST_F(DnfTest, SimulationStopsWhenThePrivateCacheCannotBeFilled) {
    sys.on_command_prefix({"dnf", "-y"}, [](const Command&) {
        return CommandResult{.exit_code = 1,
                             .err = "Error: Failed to download metadata for repo 'gpuprov-cuda': "
                                    "Cannot download repomd.xml\n"};
    });
    const auto t =
        dnf->simulate(sys, {.installs = {{"nvidia-open", ""}}, .scratch_dir = "/tmp/sim"});
    EXPECT_NE(t.error.find("could not read the repositories"), std::string::npos) << t.error;
    EXPECT_NE(t.error.find("Cannot download repomd.xml"), std::string::npos) << t.error;
    EXPECT_EQ(sys.queries.size(), 1u); // no resolution against an empty cache
}

TEST_F(DnfTest, SimulationViewReplacesTheSystemsRepoFile) {
    sys.add_file("/etc/yum.repos.d/rocky.repo", "[baseos]\n");
    sys.add_file("/etc/yum.repos.d/gpuprov-cuda.repo", "[gpuprov-cuda]\nold\n");
    sys.on_command_prefix({"dnf", "--assumeno"}, [](const Command&) {
        return CommandResult{.out = "Dependencies resolved.\nNothing to do.\n"};
    });
    sys.on_command_prefix({"dnf", "-y"}, [](const Command&) {
        return CommandResult{.out = "Metadata cache created.\n"};
    });
    const auto t = dnf->simulate(
        sys, {.installs = {{"nvidia-open", ""}},
              .scratch_dir = "/tmp/sim",
              .repos = {SimulatedRepo{.replaces_source = "/etc/yum.repos.d/gpuprov-cuda.repo",
                                      .source_text = "[gpuprov-cuda]\nnew\n"}}});
    EXPECT_TRUE(t.error.empty()) << t.error;
    // The private cache is filled first with -y (a repo_gpgcheck key is accepted there, never
    // in rpm's database), then --assumeno resolves against it.
    ASSERT_GE(sys.queries.size(), 2u);
    EXPECT_EQ(sys.queries[0],
              (std::vector<std::string>{"dnf", "-y", "--setopt=reposdir=/tmp/sim/yum.repos.d",
                                        "--setopt=cachedir=/tmp/sim/cache", "makecache"}));
    EXPECT_EQ(sys.queries[1], (std::vector<std::string>{
                                  "dnf", "--assumeno", "--setopt=reposdir=/tmp/sim/yum.repos.d",
                                  "--setopt=cachedir=/tmp/sim/cache", "install", "nvidia-open"}));
    EXPECT_EQ(sys.read_link("/tmp/sim/yum.repos.d/rocky.repo"),
              std::filesystem::path("/etc/yum.repos.d/rocky.repo"));
    EXPECT_FALSE(sys.exists("/tmp/sim/yum.repos.d/gpuprov-cuda.repo"));
    EXPECT_EQ(sys.file("/tmp/sim/yum.repos.d/gpuprov-sim-0.repo"), "[gpuprov-cuda]\nnew\n");
}

TEST_F(DnfTest, DatabaseQueriesReadRpm) {
    EXPECT_EQ(dnf->installed(sys, "nvidia-driver"), "3:570.195.03-1.el9");
    EXPECT_FALSE(dnf->installed(sys, "cuda-drivers"));
    auto names = dnf->installed_names(sys);
    EXPECT_EQ(names.size(), 8u);
    // The closure a driver hold covers: nvidia-open → nvidia-driver + kmod → common + dkms.
    EXPECT_EQ(dnf->installed_depends(sys, "nvidia-open"),
              (std::vector<std::string>{"kmod-nvidia-open-dkms", "nvidia-driver"}));
    EXPECT_FALSE(dnf->interrupted(sys));
}

TEST_F(DnfTest, HoldsAreDnfVersionlock) {
    EXPECT_EQ(
        dnf->hold({"nvidia-open", "nvidia-driver"}).argv,
        (std::vector<std::string>{"dnf", "versionlock", "add", "nvidia-open", "nvidia-driver"}));
    EXPECT_EQ(dnf->unhold({"nvidia-open"}).argv,
              (std::vector<std::string>{"dnf", "versionlock", "delete", "nvidia-open"}));
    EXPECT_FALSE(dnf->held(sys, "nvidia-open"));
    // The list real `dnf versionlock add` wrote for these packages.
    sys.add_file("/etc/dnf/plugins/versionlock.list",
                 read_fixture("cmd/dnf/versionlock-570-open.list"));
    // Without the plugin that reads it (a stock Rocky image), the list locks nothing.
    EXPECT_FALSE(dnf->held(sys, "nvidia-open"));
    sys.on_command_prefix({"rpm", "-qa", "--qf"}, [](const Command&) {
        return CommandResult{.out = read_fixture("cmd/rpm/qa-el9-570-open.txt") +
                                    "@@\tpython3-dnf-plugin-versionlock\t(none)\t4.3.0\t11.el9\t"
                                    "noarch\nP\tpython3-dnf-plugin-versionlock\nP\t" +
                                    std::string(kVersionlockCommand) + "\n"};
    });
    sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db2"); // the rpm database changed
    EXPECT_TRUE(dnf->held(sys, "nvidia-open"));
    EXPECT_TRUE(dnf->held(sys, "nvidia-driver-cuda-libs"));
    EXPECT_FALSE(dnf->held(sys, "dkms"));
    EXPECT_FALSE(dnf->held(sys, "cuda-toolkit-12-8"));
}

TEST(Versionlock, EntriesAreGlobsOverNevra) {
    const InstalledPackage p{
        .name = "nvidia-open", .arch = "noarch", .version = "3:580.95.05-1.el9", .installed = true};
    EXPECT_TRUE(versionlocked("*nvidia*580*\n", p)); // NVIDIA's RHEL 10 form
    EXPECT_FALSE(versionlocked("*nvidia*570*\n", p));
    EXPECT_FALSE(versionlocked("!nvidia-open-3:580.95.05-1.el9.*\n", p)); // an exclude
    EXPECT_FALSE(versionlocked("# nvidia-open-3:580.95.05-1.el9.*\n", p));
    const InstalledPackage dkms{
        .name = "dkms", .arch = "noarch", .version = "3.2.1-1.el9", .installed = true};
    EXPECT_TRUE(versionlocked("dkms-0:3.2.1-1.el9.*\n", dkms)); // no epoch means 0
}

TEST_F(DnfTest, RefreshesOnlyItsOwnRepoAndWaitsOnRpmsLocks) {
    EXPECT_EQ(dnf->refresh_source("/etc/yum.repos.d/gpuprov-cuda.repo").argv,
              (std::vector<std::string>{"dnf", "-y", "makecache", "--refresh", "--repo",
                                        "gpuprov-cuda"}));
    EXPECT_EQ(dnf->lock_files(),
              (std::vector<std::string>{"/var/lib/rpm/.rpm.lock", "/var/lib/dnf/rpmdb_lock.pid"}));
    sys.set_lock_holder("/var/lib/rpm/.rpm.lock", 4242, 3);
    EXPECT_TRUE(wait_for_package_lock(sys, *dnf, std::chrono::seconds(60)));
    EXPECT_GE(sys.slept.count(), 6000);
}

TEST(DnfInterrupted, DuplicatesButNotKernels) {
    const auto db = parse_rpm_query("@@\tnvidia-driver\t3\t570.1\t1.el9\tx86_64\n"
                                    "@@\tnvidia-driver\t3\t580.1\t1.el9\tx86_64\n"
                                    "@@\tkernel-devel\t(none)\t5.14.0\t1.el9\tx86_64\n"
                                    "@@\tkernel-devel\t(none)\t5.14.0\t2.el9\tx86_64\n"
                                    "@@\tglibc\t(none)\t2.34\t1.el9\ti686\n"
                                    "@@\tglibc\t(none)\t2.34\t1.el9\tx86_64\n");
    EXPECT_EQ(duplicate_packages(db), (std::vector<std::string>{"nvidia-driver"}));
    EXPECT_EQ(make_dnf()->repair().argv,
              (std::vector<std::string>{"dnf", "remove", "-y", "--duplicates"}));
}

// ---- unprivileged: dnf's Python API (issue 26 item 17) ----

TEST(DnfApiOutput, RecordsFromARealRun) {
    // Taken as uid 1000 on the e2e EL root (Rocky 9 shaped, Debian's dnf 4.14.0), cv-train on a
    // fresh host: tests/fixtures/cmd/dnf/api/README.md says how.
    const auto out = parse_dnf_api_output(read_fixture("cmd/dnf/api/el9-fresh-cv-train.out"));
    EXPECT_TRUE(out.done);
    EXPECT_TRUE(out.error.empty()) << out.error;
    EXPECT_EQ(out.dnf_version, "4.14.0");
    EXPECT_EQ(out.module_changes, (std::vector<std::string>{"enable nvidia-driver 580-open"}));
    ASSERT_FALSE(out.actions.empty());
    EXPECT_EQ(out.actions.front().kind, Kind::install);
    const auto open = std::find_if(out.actions.begin(), out.actions.end(),
                                   [](const auto& a) { return a.name == "nvidia-open"; });
    ASSERT_NE(open, out.actions.end());
    EXPECT_EQ(*open, act(Kind::install, "nvidia-open", "", "3:580.178.04-1.el9"));
}

TEST(DnfApiOutput, EscapesErrorsAndTruncation) {
    const auto err = parse_dnf_api_output(
        "resolver\tdnf 4.14.0\nerror\tProblem: conflicting requests\\n  - nothing provides "
        "a\\tb \\\\ c\n");
    EXPECT_EQ(err.error, "Problem: conflicting requests\n  - nothing provides a\tb \\ c");
    EXPECT_FALSE(err.done);
    // A lost record: the closing count disagrees.
    const auto cut = parse_dnf_api_output("package\tinstall\ta\tx86_64\t1-1\trepo\ndone\t2\n");
    EXPECT_FALSE(cut.done);
    EXPECT_EQ(cut.actions.size(), 1u);
    const auto rm = parse_dnf_api_output("package\tremove\tdkms\tnoarch\t3.0.13-1.el9\t@System\n"
                                         "package\tdowngrade\tb\tx86_64\t1-1\trepo\ndone\t2\n");
    EXPECT_TRUE(rm.done);
    ASSERT_EQ(rm.actions.size(), 2u);
    EXPECT_EQ(rm.actions[0], act(Kind::remove, "dkms", "3.0.13-1.el9", ""));
    EXPECT_EQ(rm.actions[1], act(Kind::downgrade, "b", "", "1-1"));
    EXPECT_FALSE(parse_dnf_api_output("package\tobsolete\ta\tx86_64\t1-1\tr\n").error.empty());
}

class DnfUnprivilegedTest : public DnfTest {
protected:
    void SetUp() override {
        DnfTest::SetUp();
        sys.set_uid(1000);
        sys.add_file("/usr/bin/dnf", "#!/usr/bin/python3\nimport dnf.cli.main\n");
        sys.add_file("/etc/yum.repos.d/rocky.repo", "[baseos]\n");
    }
    const SimulationRequest req{
        .installs = {{"nvidia-open", "3:580.178.04-1.el9"}, {"cuda-toolkit-13-0", "13.0.1-1"}},
        .modules = {{.module = "nvidia-driver", .stream = "580-open"}},
        .scratch_dir = "/home/u/.cache/gpuprov/repos/apt-view"};
};

TEST_F(DnfUnprivilegedTest, ResolvesWithDnfsPythonApiNeverItsRootOnlyCli) {
    std::optional<Command> seen;
    sys.on_command_prefix({"/usr/bin/python3"}, [&](const Command& c) {
        seen = c;
        return CommandResult{.out = read_fixture("cmd/dnf/api/el9-fresh-cv-train.out"),
                             .err = "Last metadata expiration check: 0:00:01 ago.\n"};
    });
    const auto t = dnf->simulate(sys, req);
    EXPECT_TRUE(t.error.empty()) << t.error;
    ASSERT_TRUE(seen);
    const std::string v = "/home/u/.cache/gpuprov/repos/apt-view";
    // Specs travel as argv elements; the program is gpuprov's own text, on stdin.
    EXPECT_EQ(seen->argv,
              (std::vector<std::string>{
                  "/usr/bin/python3", "-I", "-", "--reposdir", v + "/yum.repos.d", "--cachedir",
                  v + "/cache", "--persistdir", v + "/persist", "--logdir", v + "/log", "--enable",
                  "nvidia-driver:580-open", "--install", "nvidia-open-3:580.178.04-1.el9",
                  "--install", "cuda-toolkit-13-0-13.0.1-1"}));
    EXPECT_EQ(seen->stdin_data, std::string(dnf_detail::resolver_program()));
    EXPECT_NE(seen->stdin_data->find("dnf.Base("), std::string::npos);
    EXPECT_EQ(seen->stdin_data->find("nvidia-open"), std::string::npos);
    EXPECT_EQ(seen->cwd, std::filesystem::path("/"));
    EXPECT_GT(seen->timeout.count(), 0);
    EXPECT_GT(seen->idle_timeout.count(), 0);
    for (const auto& q : sys.queries) {
        EXPECT_NE(q.front(), "dnf") << "dnf's CLI refuses install/shell without root";
    }
    EXPECT_TRUE(sys.commands_ran.empty()); // a query, never a change
    // The view is the root path's: the system's .repo files linked into the private reposdir.
    EXPECT_EQ(sys.read_link(v + "/yum.repos.d/rocky.repo"),
              std::filesystem::path("/etc/yum.repos.d/rocky.repo"));
    EXPECT_EQ(t.module_changes, (std::vector<std::string>{"enable nvidia-driver 580-open"}));
    EXPECT_EQ(t.actions,
              parse_dnf_api_output(read_fixture("cmd/dnf/api/el9-fresh-cv-train.out")).actions);
    EXPECT_EQ(t.resolver, "dnf-python-api");
    EXPECT_NE(t.resolved_by.find("dnf 4.14.0's own solver through its Python API, as uid 1000"),
              std::string::npos)
        << t.resolved_by;
}

TEST_F(DnfUnprivilegedTest, UpgradesTakeTheOldVersionFromRpmLikeTheRootPath) {
    sys.on_command_prefix({"/usr/bin/python3"}, [](const Command&) {
        return CommandResult{.out = "resolver\tdnf 4.14.0\nmodule\tswitch\tnvidia-driver\t"
                                    "570-open -> 580-open\npackage\tupgrade\tnvidia-open\tnoarch\t"
                                    "3:580.178.04-1.el9\tgpuprov-cuda\ndone\t1\n"};
    });
    auto r = req;
    r.modules[0].switch_from_other = true;
    r.removals = {"cuda-toolkit-12-8"};
    const auto t = dnf->simulate(sys, r);
    EXPECT_TRUE(t.error.empty()) << t.error;
    ASSERT_EQ(t.actions.size(), 1u);
    EXPECT_EQ(t.actions[0],
              act(Kind::upgrade, "nvidia-open", "3:570.195.03-1.el9", "3:580.178.04-1.el9"));
    EXPECT_EQ(t.module_changes,
              (std::vector<std::string>{"switch nvidia-driver 570-open -> 580-open"}));
    const auto api = std::find_if(sys.queries.begin(), sys.queries.end(),
                                  [](const auto& q) { return q.front() == "/usr/bin/python3"; });
    ASSERT_NE(api, sys.queries.end());
    const auto& argv = *api;
    EXPECT_NE(std::find(argv.begin(), argv.end(), "--switch-to"), argv.end());
    EXPECT_EQ(argv.back(), "cuda-toolkit-12-8");
    EXPECT_EQ(argv[argv.size() - 2], "--remove");
}

TEST_F(DnfUnprivilegedTest, RefusalsCarryDnfsWordsAndACutAnswerIsNoAnswer) {
    sys.on_command_prefix({"/usr/bin/python3"}, [](const Command&) {
        return CommandResult{.exit_code = 1,
                             .out = "resolver\tdnf 4.14.0\nerror\tUnable to find a match: "
                                    "nvidia-open-3:580.178.04-1.el9\n"};
    });
    auto t = dnf->simulate(sys, req);
    EXPECT_NE(t.error.find("Unable to find a match: nvidia-open-3:580.178.04-1.el9"),
              std::string::npos)
        << t.error;
    EXPECT_TRUE(t.actions.empty());

    sys.on_command_prefix({"/usr/bin/python3"}, [](const Command&) {
        return CommandResult{.exit_code = 0,
                             .out = "resolver\tdnf 4.14.0\npackage\tinstall\ta\tx86_64\t1-1\tr\n"};
    });
    t = dnf->simulate(sys, req);
    EXPECT_NE(t.error.find("no complete answer"), std::string::npos) << t.error;
    EXPECT_TRUE(t.actions.empty());

    sys.on_command_prefix({"/usr/bin/python3"}, [](const Command&) {
        return CommandResult{.exit_code = 127, .not_found = true};
    });
    t = dnf->simulate(sys, req);
    EXPECT_NE(t.error.find("/usr/bin/python3 (dnf's interpreter) is not installed"),
              std::string::npos)
        << t.error;
}

TEST_F(DnfUnprivilegedTest, SpecsAreRefusedBeforeAnythingRuns) {
    auto r = req;
    r.installs.push_back({"a", "1\nimport os"});
    EXPECT_THROW((void)dnf->simulate(sys, r), Error);
    EXPECT_TRUE(sys.queries.empty());
}

TEST_F(DnfUnprivilegedTest, TheInterpreterIsDnfsOwn) {
    // RHEL 8: dnf runs on platform-python; /usr/bin/python3 may be another Python or absent.
    sys.add_file("/usr/bin/dnf", "#!/usr/libexec/platform-python -s\nimport dnf\n");
    EXPECT_EQ(dnf_detail::dnf_python(sys), "/usr/libexec/platform-python");
    sys.add_file("/usr/bin/dnf", "not a script");
    EXPECT_EQ(dnf_detail::dnf_python(sys), "/usr/bin/python3");
}

TEST_F(DnfUnprivilegedTest, WithoutAPrivateDirectoryNothingRuns) {
    auto r = req;
    r.scratch_dir.clear();
    const auto t = dnf->simulate(sys, r);
    EXPECT_NE(t.error.find("private cache"), std::string::npos) << t.error;
    EXPECT_TRUE(sys.queries.empty());
}

TEST_F(DnfTest, RootKeepsDnfsCliAndSaysSo) {
    sys.on_command({"dnf", "--assumeno", "install", "nvidia-open-3:580.95.05-1.el9"},
                   CommandResult{.exit_code = 1,
                                 .out = read_fixture("cmd/dnf/install-upgrade.txt"),
                                 .err = "Operation aborted.\n"});
    const auto t = dnf->simulate(sys, {.installs = {{"nvidia-open", "3:580.95.05-1.el9"}}});
    EXPECT_EQ(t.resolver, "dnf");
    EXPECT_EQ(t.resolved_by, "dnf itself, as root");
}

TEST(PackageManagerChoice, FromTheFacts) {
    HostFacts f;
    f.os.family = "rhel";
    f.os.repo_slug = "rhel9";
    EXPECT_EQ(make_package_manager(f)->name(), "dnf");
    f.os.repo_slug.clear(); // Amazon Linux, EL 10: not provisioned
    EXPECT_EQ(make_package_manager(f), nullptr);
    f.os.family = "debian";
    EXPECT_EQ(make_package_manager(f)->name(), "apt");
}

} // namespace
} // namespace gpuprov
