// A runfile-installed driver blocks the driver step with the fix; a packaged one does not. With
// driver.replace_runfile the step removes it with the runfile's own uninstaller, before the
// package transaction, and proves it gone.
#include "host_builder.hpp"

#include <gpuprov/journal.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kRunVersion = "535.183.01";
const std::string kRunLib = kLibDir + "libnvidia-ml.so." + kRunVersion;
const Strings kUninstallArgv = {"/usr/bin/nvidia-installer", "--uninstall", "--silent"};

/// What NVIDIA's .run installer leaves: itself and its nvidia-uninstall entry point (unless
/// `installer` is false: only leftovers), its libraries no package owns, its log.
void add_runfile(TestHost& host, bool installer = true, const std::string& version = kRunVersion) {
    if (installer) {
        host.sys.add_file("/usr/bin/nvidia-installer", "\x7f"
                                                       "ELF");
        host.sys.add_file("/usr/bin/nvidia-uninstall", "\x7f"
                                                       "ELF");
    }
    host.sys.add_file(kLibDir + "libnvidia-ml.so." + version, "");
    host.sys.add_file(kLibDir + "libnvidia-cuda.so." + version, "");
    host.sys.add_file("/var/log/nvidia-installer.log",
                      "nvidia-installer log file '/var/log/nvidia-installer.log'\n"
                      "installer version: " +
                          version + "\n");
}

/// `nvidia-installer --uninstall --silent` as the real one does it: removes what it installed
/// (its libraries, itself and nvidia-uninstall), writes its own log; the installer's log stays.
void script_uninstaller(TestHost& host, const std::string& version = kRunVersion) {
    host.sys.on_command_prefix(kUninstallArgv, [&host, version](const Command&) {
        host.sys.remove_file(kLibDir + "libnvidia-ml.so." + version);
        host.sys.remove_file(kLibDir + "libnvidia-cuda.so." + version);
        host.sys.remove_file("/usr/bin/nvidia-uninstall");
        host.sys.remove_file("/usr/bin/nvidia-installer");
        host.sys.add_file("/var/log/nvidia-uninstall.log",
                          "nvidia-installer log file '/var/log/nvidia-uninstall.log'\n"
                          "Uninstallation of existing driver: NVIDIA Accelerated Graphics "
                          "Driver for Linux-x86_64 (" +
                              version + ") is complete.\n");
        return CommandResult{};
    });
}

std::ptrdiff_t position(const TestHost& host, const Strings& prefix) {
    const auto& ran = host.sys.commands_ran;
    const auto it = std::find_if(ran.begin(), ran.end(), [&](const Strings& argv) {
        return argv.size() >= prefix.size() &&
               std::equal(prefix.begin(), prefix.end(), argv.begin());
    });
    return it == ran.end() ? -1 : it - ran.begin();
}

TEST(RunfileDriverStep, BlocksTheDriverStepWithTheUninstallFix) {
    TestHost host;
    host.sys.add_file("/usr/bin/nvidia-uninstall", "");
    host.sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07", "");
    const auto profile = load_test_profile();
    ASSERT_FALSE(profile.driver->replace_runfile) << "off unless the profile says so";
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_TRUE(r.changes.empty());
    EXPECT_TRUE(contains(r.reason, "a driver 550.90.07 installed with NVIDIA's .run installer"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "/usr/bin/nvidia-uninstall (the runfile's installer) exists"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "Remove it first: sudo nvidia-installer --uninstall, reboot"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "or set driver.replace_runfile: true")) << r.reason;
}

TEST(RunfileDriverStep, WithoutTheInstallerTheRunFileItselfUninstalls) {
    TestHost host;
    host.sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01", "");
    const auto profile = load_test_profile();
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "sudo sh NVIDIA-Linux-x86_64-535.183.01.run --uninstall"))
        << r.reason;
    // Nothing to run for it, so replace_runfile is not offered.
    EXPECT_FALSE(contains(r.reason, "replace_runfile")) << r.reason;
}

TEST(RunfileDriverStep, APackagedDriverIsNotARunfileOne) {
    TestHost host;
    host.sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so." + kDriverVersion, "");
    host.set_package("libnvidia-compute-550", kDriverVersion + "-1");
    const auto profile = load_test_profile();
    StepRunner run(host, profile);
    EXPECT_NE(run.check("driver").status, StepStatus::blocked);
}

TEST(RunfileDriverStep, ReplaceRunfilePlansTheUninstallBeforeThePackages) {
    TestHost host;
    add_runfile(host);
    auto profile = load_test_profile();
    profile.driver->replace_runfile = true;
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    ASSERT_FALSE(r.changes.empty());
    EXPECT_EQ(r.changes.front().kind, Change::Kind::command);
    EXPECT_EQ(r.changes.front().target, "/usr/bin/nvidia-installer --uninstall --silent");
    EXPECT_TRUE(contains(r.changes.front().detail, "driver 535.183.01"))
        << r.changes.front().detail;
    EXPECT_TRUE(contains(r.changes.front().detail, kRunLib + " belongs to no installed package"))
        << r.changes.front().detail;
    EXPECT_EQ(specs(r.installs), (Strings{"cuda-drivers-550=550.127.08-1"}));
    EXPECT_EQ(position(host, {"/usr/bin/nvidia-installer"}), -1) << "check runs nothing";
    EXPECT_TRUE(host.sys.exists(kRunLib));
}

// The .run installer's nvidia-uninstall alone is its uninstall entry point too.
TEST(RunfileDriverStep, ReplaceRunfileWithOnlyNvidiaUninstall) {
    TestHost host;
    add_runfile(host);
    host.sys.remove_file("/usr/bin/nvidia-installer");
    auto profile = load_test_profile();
    profile.driver->replace_runfile = true;
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(r.changes.front().target, "/usr/bin/nvidia-uninstall --silent");
}

TEST(RunfileDriverStep, ReplaceRunfileCannotActOnLeftoversAlone) {
    TestHost host;
    add_runfile(host, false);
    auto profile = load_test_profile();
    profile.driver->replace_runfile = true;
    StepRunner run(host, profile);
    const auto r = run.check("driver");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(r.installs.empty());
    EXPECT_TRUE(r.changes.empty());
    EXPECT_TRUE(contains(r.reason, "driver.replace_runfile is set, but the .run installer's own "
                                   "uninstaller"))
        << r.reason;
    EXPECT_TRUE(contains(r.reason, "cannot remove them safely")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "sudo sh NVIDIA-Linux-x86_64-535.183.01.run --uninstall"))
        << r.reason;
}

using RunfileApply = ApplyTest;

TEST_F(RunfileApply, TheUninstallerRunsBeforeTheTransactionThenTheHostConverges) {
    TestHost host;
    add_runfile(host);
    script_uninstaller(host);
    profile.driver->replace_runfile = true;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    ASSERT_EQ(host.ran(kUninstallArgv).size(), 1U);
    const auto uninstall = position(host, kUninstallArgv);
    const auto install = position(host, kInstallPrefix);
    ASSERT_GE(install, 0);
    EXPECT_LT(uninstall, install);
    EXPECT_FALSE(host.sys.exists(kRunLib));
    EXPECT_FALSE(host.sys.exists("/usr/bin/nvidia-installer"));
    EXPECT_EQ(host.package_field("cuda-drivers-550", "Version"), "550.127.08-1");
    EXPECT_EQ(journal(host).step("driver")->status, "done");
    EXPECT_EQ(journal(host).result, "done");

    // Idempotent: no runfile driver is left to replace, the driver step is satisfied.
    host.clear_records();
    StepRunner again(host, profile);
    const auto check = again.check("driver");
    EXPECT_EQ(check.status, StepStatus::satisfied) << check.reason;
    EXPECT_FALSE(again.facts().runfile_driver);
    ASSERT_EQ(apply(host).status, StepStatus::done);
    EXPECT_TRUE(host.ran(kUninstallArgv).empty());
    EXPECT_TRUE(host.ran({"apt-get", "install"}).empty());
}

TEST_F(RunfileApply, AFailingUninstallerFailsTheStepAndInstallsNothing) {
    TestHost host;
    add_runfile(host);
    host.sys.on_command_prefix(kUninstallArgv, [&host](const Command&) {
        host.sys.add_file("/var/log/nvidia-uninstall.log",
                          "-> Unloading NVIDIA driver kernel modules...\n"
                          "ERROR: Unable to unload the 'nvidia' kernel module.\n");
        return CommandResult{.exit_code = 1,
                             .err = "ERROR: An NVIDIA kernel module 'nvidia' appears to be in "
                                    "use.\n"};
    });
    profile.driver->replace_runfile = true;
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "`/usr/bin/nvidia-installer --uninstall --silent` exited 1"))
        << r.message;
    EXPECT_TRUE(contains(r.message, "'nvidia' appears to be in use")) << r.message;
    EXPECT_TRUE(contains(r.message, "/var/log/nvidia-uninstall.log ends:\n-> Unloading"))
        << r.message;
    EXPECT_TRUE(contains(r.message, "no driver package was installed")) << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install"}).empty()) << "the simulation only, no install";
    EXPECT_FALSE(host.package_field("cuda-drivers-550", "Version"));
    EXPECT_TRUE(host.sys.exists(kRunLib));
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_EQ(j.step("driver")->status, "failed");
}

TEST_F(RunfileApply, AnUninstallThatLeavesTheDriverFailsNamingWhatIsLeft) {
    TestHost host;
    add_runfile(host);
    host.sys.on_command_prefix(kUninstallArgv, [&host](const Command&) {
        host.sys.remove_file("/usr/bin/nvidia-uninstall");
        host.sys.remove_file("/usr/bin/nvidia-installer");
        return CommandResult{}; // exit 0, but the libraries stay
    });
    profile.driver->replace_runfile = true;
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "ran but left the runfile driver behind: " + kRunLib +
                                        " belongs to no installed package"))
        << r.message;
    EXPECT_TRUE(contains(r.message, "NVIDIA-Linux-x86_64-535.183.01.run --uninstall")) << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install"}).empty());
    EXPECT_EQ(journal(host).step("driver")->status, "failed");
}

// The runfile's module stays loaded after its files are gone (its uninstaller could not unload
// it): the packaged module cannot load beside it. The driver step's own judgement, "the module
// of the installed driver is not the loaded one", asks for the reboot, whether the runfile was
// another branch or an older build of the profile's.
class RunfileModule : public ApplyTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(RunfileModule, StillLoadedMeansReboot) {
    const auto& version = GetParam();
    TestHost host;
    add_runfile(host, true, version);
    script_uninstaller(host, version);
    const auto proc = replace_all(read_fixture("engine/cmd/proc-driver-version-550.txt"),
                                  kDriverVersion, version);
    host.sys.add_file("/proc/driver/nvidia/version", proc);
    host.sys.on_command_prefix({"modprobe", "nvidia"}, [](const Command&) {
        return CommandResult{}; // `nvidia` is loaded already: modprobe has nothing to do
    });
    // Userspace of the packages, the runfile's module: what the real nvidia-smi then says.
    host.sys.on_command_prefix({"nvidia-smi"}, [](const Command&) {
        return CommandResult{.exit_code = 9,
                             .out = read_fixture("cmd/nvidia-smi/error-nvml-mismatch.txt")};
    });
    profile.driver->replace_runfile = true;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::reboot_required) << r.message;
    EXPECT_TRUE(contains(r.message, "step 'driver' needs a reboot")) << r.message;
    EXPECT_TRUE(
        contains(r.message, starts_with(version, "550.")
                                ? "the loaded NVIDIA module is " + version +
                                      ", not the installed " + kDriverVersion
                                : "no NVIDIA module of branch 550 is loaded (" + version + " is)"))
        << r.message;
    EXPECT_EQ(host.ran(kUninstallArgv).size(), 1U);
    EXPECT_EQ(host.package_field("cuda-drivers-550", "Version"), "550.127.08-1");
    const auto j = journal(host);
    EXPECT_EQ(j.step("driver")->status, "reboot-required");
    EXPECT_EQ(j.step("verify")->status, "pending") << "verify runs after the reboot";
    EXPECT_EQ(j.result, "reboot-required");
    EXPECT_EQ(host.sys.file("/proc/driver/nvidia/version"), proc) << "still the runfile's";

    // Run again before the reboot: the plan says the same.
    StepRunner again(host, profile);
    const auto check = again.check("driver");
    EXPECT_EQ(check.status, StepStatus::reboot_required) << check.reason;
    EXPECT_EQ(check.reason, "driver " + version + " is loaded but " + kDriverVersion +
                                " is installed; a reboot loads it");
}

INSTANTIATE_TEST_SUITE_P(RunfileApply, RunfileModule, ::testing::Values("535.183.01", "550.54.15"));

} // namespace
