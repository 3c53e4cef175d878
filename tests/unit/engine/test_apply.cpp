// apply_profile end to end on the fake host: one package transaction, one refresh per changed
// repository, holds, journal; a converged host is left alone; locks, interrupted dpkg, reboots.
#include "host_builder.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const Strings kAllPins = {
    "cuda-drivers-550=550.127.08-1",      "nvidia-fabricmanager-550=550.127.08-1",
    "libnvidia-nscq-550=550.127.08-1",    "cuda-toolkit-12-4=12.4.1-1",
    "libcudnn9-cuda-12=9.10.2.21-1",      "libcudnn9-dev-cuda-12=9.10.2.21-1",
    "libnccl2=2.21.5-1+cuda12.4",         "libnccl-dev=2.21.5-1+cuda12.4",
    "nvidia-container-toolkit=1.17.0-1",  "nvidia-container-toolkit-base=1.17.0-1",
    "libnvidia-container-tools=1.17.0-1", "libnvidia-container1=1.17.0-1"};

using Apply = ApplyTest;

TEST_F(Apply, FreshHostConvergesWithOneTransactionAndOneRefreshPerRepository) {
    TestHost host;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;

    const auto installs = host.ran({"apt-get", "install"});
    ASSERT_EQ(installs.size(), 1u);
    auto want = kInstallPrefix;
    want.insert(want.end(), kAllPins.begin(), kAllPins.end());
    EXPECT_EQ(installs[0], want);
    EXPECT_EQ(r.apt_transactions, 1);

    EXPECT_EQ(host.ran({"apt-get", "update"}),
              (std::vector<Strings>{refresh_argv(kCudaSourcePath), refresh_argv(kCtkSourcePath)}));
    EXPECT_EQ(r.index_refreshes, 2);
    // The driver's closure, then fabric manager and NSCQ, which must stay at its version.
    EXPECT_EQ(host.ran({"apt-mark"}),
              (std::vector<Strings>{
                  {"apt-mark", "hold", "cuda-drivers-550"},
                  {"apt-mark", "hold", "nvidia-fabricmanager-550", "libnvidia-nscq-550"}}));
    EXPECT_EQ(host.package_field("cuda-drivers-550", "Status"), "hold ok installed");

    // Repositories are in place before the transaction that needs them; holds come after it.
    const auto& ran = host.sys.commands_ran;
    const auto pos = [&](const Strings& argv) {
        return std::find(ran.begin(), ran.end(), argv) - ran.begin();
    };
    EXPECT_LT(pos(refresh_argv(kCtkSourcePath)), pos(want));
    EXPECT_LT(pos({"update-initramfs", "-u", "-k", "all"}), pos(want));
    EXPECT_LT(pos(want), pos({"apt-mark", "hold", "cuda-drivers-550"}));

    // What the configure parts wrote is exactly what the checks want.
    EXPECT_EQ(host.sys.file(kBlacklistPath), kBlacklist);
    EXPECT_EQ(host.sys.file(kCudaSourcePath), kCudaSource);
    EXPECT_EQ(host.sys.file(kCtkSourcePath), kCtkSource);
    EXPECT_EQ(host.sys.file(kProfileDPath), kProfileD);
    EXPECT_EQ(host.sys.file(kPersistencedDropinPath), kPersistencedDropin);

    const auto j = journal(host);
    EXPECT_EQ(j.result, "done");
    EXPECT_FALSE(j.reboot_pending);
    EXPECT_EQ(j.runs, 1);
    EXPECT_EQ(j.profile, kProfileArg);
    ASSERT_NE(j.step("driver"), nullptr);
    EXPECT_EQ(j.step("driver")->status, "done");
    EXPECT_EQ(j.step("driver")->versions.at("cuda-drivers-550"), "550.127.08-1");
    ASSERT_NE(j.step("verify"), nullptr);
    EXPECT_EQ(j.step("verify")->status, "done");
    EXPECT_EQ(j.step("preflight")->status, "satisfied");
    EXPECT_FALSE(host.sys.exists(kResumeUnit));
}

TEST_F(Apply, SecondApplyOnTheConvergedHostTouchesNothing) {
    TestHost host;
    ASSERT_EQ(apply(host).status, StepStatus::done);
    host.clear_records();

    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_TRUE(host.sys.commands_ran.empty()) << display_argv(host.sys.commands_ran.front());
    EXPECT_TRUE(host.sys.urls_fetched.empty());
    EXPECT_TRUE(host.sys.queries.empty()); // not even gpgv or nvidia-smi
    EXPECT_EQ(r.apt_transactions, 0);
    EXPECT_EQ(r.index_refreshes, 0);
    // Only the journal is written.
    for (const auto& f : host.sys.files_written) {
        EXPECT_EQ(f, kJournalPath);
    }
    for (const auto& [id, status] : r.steps) {
        // cv-train asks for no TensorRT, DCGM or readiness gate and has no infiniband or mig
        // section: the steps it leaves out; Secure Boot is off on this host.
        EXPECT_EQ(status, (id == "infiniband" || id == "tensorrt" || id == "secure-boot" ||
                           id == "mig" || id == "dcgm" || id == "readiness")
                              ? StepStatus::skipped
                              : StepStatus::satisfied)
            << id;
    }
    const auto j = journal(host);
    EXPECT_EQ(j.result, "done");
    EXPECT_EQ(j.runs, 2);
}

// A run killed during its final verify leaves every step satisfied and the journal "running":
// the next run must still prove the host, not call it done without a check.
TEST_F(Apply, ARunKilledBeforeItsFinalVerifyIsVerifiedByTheNext) {
    TestHost host;
    ASSERT_EQ(apply(host).status, StepStatus::done);
    auto j = journal(host);
    j.result = "running"; // what a SIGKILL during the verify step leaves
    j.steps.erase(std::remove_if(j.steps.begin(), j.steps.end(),
                                 [](const JournalStep& s) { return s.id == "verify"; }),
                  j.steps.end());
    save_journal(host.sys, j);
    host.clear_records();

    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_FALSE(host.sys.queries.empty()); // the checks ran (nvidia-smi, nvcc, ...)
    EXPECT_TRUE(host.sys.commands_ran.empty());
    const auto verify = std::find_if(r.steps.begin(), r.steps.end(),
                                     [](const auto& s) { return s.first == "verify"; });
    ASSERT_NE(verify, r.steps.end());
    EXPECT_EQ(verify->second, StepStatus::done);
    EXPECT_EQ(journal(host).step("verify")->status, "done");

    host.clear_records();
    EXPECT_EQ(apply(host).status, StepStatus::done);
    EXPECT_TRUE(host.sys.queries.empty()); // proven now: the next no-op touches nothing
}

TEST_F(Apply, RequiresRoot) {
    TestHost host;
    host.sys.set_uid(1000);
    EXPECT_THROW(apply(host), HostError);
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_TRUE(host.sys.files_written.empty());
}

TEST_F(Apply, RefusesToRunBesideAnotherRun) {
    TestHost host;
    host.sys.hold_lock(kRunLockPath);
    try {
        apply(host);
        FAIL() << "no error";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "/run/gpuprov.lock")) << e.what();
    }
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_TRUE(host.sys.files_written.empty());
}

TEST_F(Apply, WaitsForADpkgLockHolderThenInstalls) {
    TestHost host;
    host.sys.set_lock_holder("/var/lib/dpkg/lock-frontend", 4242, 3);
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(host.sys.slept, std::chrono::milliseconds(6000)); // three 2 s polls
    EXPECT_EQ(host.ran({"apt-get", "install"}).size(), 1u);
}

// The contract says a dpkg lock past the deadline is an error naming the lock; apply records it
// as the failure of the step whose packages could not be installed (exit 1) rather than throwing.
TEST_F(Apply, GivesUpOnADpkgLockHeldPastTheDeadline) {
    TestHost host;
    host.sys.set_lock_holder("/var/lib/dpkg/lock-frontend", 4242, 1000000);
    options.lock_wait = std::chrono::seconds(30);
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "dpkg lock after 30 s")) << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install"}).empty());
    EXPECT_GE(host.sys.slept, std::chrono::milliseconds(30000));
    EXPECT_LE(host.sys.slept, std::chrono::milliseconds(32000));
    EXPECT_EQ(journal(host).result, "failed");
}

TEST_F(Apply, InterruptedDpkgIsFinishedFirst) {
    TestHost host;
    host.sys.add_file("/var/lib/dpkg/updates/0003", "Package: libnccl2\nStatus: install ok "
                                                    "unpacked\n");
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    ASSERT_FALSE(host.sys.commands_ran.empty());
    EXPECT_EQ(host.sys.commands_ran.front(), (Strings{"dpkg", "--configure", "-a"}));
    EXPECT_EQ(host.ran({"dpkg", "--configure"}).size(), 1u);
}

TEST_F(Apply, HalfConfiguredPackageIsFinishedFirst) {
    TestHost host;
    host.set_package("libnccl2", "2.21.5-1+cuda12.4", "install ok half-configured");
    host.package_files("libnccl2", "2.21.5-1+cuda12.4"); // unpacked: its files are there
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    ASSERT_FALSE(host.sys.commands_ran.empty());
    EXPECT_EQ(host.sys.commands_ran.front(), (Strings{"dpkg", "--configure", "-a"}));
}

TEST_F(Apply, FailedTransactionFailsTheRunAndNamesTheCommand) {
    TestHost host;
    host.sys.on_command_prefix({"apt-get", "install"}, [](const Command&) {
        return CommandResult{.exit_code = 100,
                             .err = "E: Unable to correct problems, you have held broken "
                                    "packages.\n"};
    });
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "apt-get install")) << r.message;
    EXPECT_TRUE(host.ran({"apt-mark"}).empty());
    EXPECT_EQ(journal(host).result, "failed");
}

TEST_F(Apply, BlockedStepStopsBeforeAnyChange) {
    TestHost host({.gpus = 2});
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "step 'preflight' is blocked")) << r.message;
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_EQ(journal(host).step("preflight")->status, "blocked");
}

// A step blocked late in the plan (the driver, after nouveau and the repositories) stops the
// run before the steps ahead of it change anything: no half-provisioned host.
TEST_F(Apply, LaterBlockedStepStopsBeforeAnyChange) {
    TestHost host;
    profile.driver->flavor = "server"; // Ubuntu's archive only; this host is Debian 12
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "step 'driver' is blocked")) << r.message;
    EXPECT_TRUE(contains(r.message, "nothing was changed")) << r.message;
    EXPECT_TRUE(host.ran({"update-initramfs"}).empty());
    EXPECT_TRUE(host.ran({"apt-get", "install"}).empty());
    EXPECT_TRUE(host.ran({"apt-get", "update"}).empty());
    EXPECT_FALSE(host.sys.exists(kBlacklistPath));
    EXPECT_FALSE(host.sys.exists(kCudaSourcePath));
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_EQ(j.step("driver")->status, "blocked");
    EXPECT_EQ(j.step("nouveau"), nullptr) << "not run, so not in the journal";

    // The steps that can go alone still can, chosen by name.
    options.filter.only = {"nouveau"};
    EXPECT_EQ(apply(host).status, StepStatus::done);
    EXPECT_EQ(host.sys.file(kBlacklistPath), kBlacklist);
}

TEST_F(Apply, OnlyRunsTheChosenSteps) {
    TestHost host;
    options.filter.only = {"nouveau"};
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(host.sys.commands_ran,
              (std::vector<Strings>{{"update-initramfs", "-u", "-k", "all"}}));
    EXPECT_TRUE(host.sys.urls_fetched.empty());
}

TEST_F(Apply, NouveauLoadedMeansRebootThenResume) {
    TestHost host({.nouveau_loaded = true});
    const auto first = apply(host);
    ASSERT_EQ(first.status, StepStatus::reboot_required) << first.message;
    EXPECT_TRUE(contains(first.message, "driver")) << first.message;
    EXPECT_EQ(host.ran({"apt-get", "install"}).size(), 1u);
    EXPECT_TRUE(host.ran({"modprobe"}).empty()); // nouveau holds the GPUs: not even tried

    const auto unit = host.sys.file(kResumeUnit);
    ASSERT_TRUE(unit);
    EXPECT_TRUE(contains(*unit, "ExecStart=/usr/local/bin/gpuprov apply " + kProfileArg +
                                    " --yes --reboot never\n"))
        << *unit;
    EXPECT_TRUE(contains(*unit, "Type=oneshot\n"));
    EXPECT_TRUE(contains(*unit, "WantedBy=multi-user.target\n"));
    EXPECT_EQ(host.ran({"systemctl", "enable", "gpuprov-resume.service"}).size(), 1u);
    EXPECT_TRUE(host.ran({"systemctl", "reboot"}).empty()); // --reboot never
    auto j = journal(host);
    EXPECT_TRUE(j.reboot_pending);
    EXPECT_EQ(j.result, "reboot-required");
    EXPECT_EQ(j.step("driver")->status, "reboot-required");
}

TEST_F(Apply, AResumedRunInstallsFromTheSameBundle) {
    TestHost host({.nouveau_loaded = true});
    options.bundle_dir = "/var/cache/gpuprov/repos/bundles/9f86d081884c7d65";
    options.bundle_key = "0123456789ABCDEF0123456789ABCDEF01234567";
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    const auto unit = host.sys.file(kResumeUnit);
    ASSERT_TRUE(unit);
    EXPECT_TRUE(contains(*unit, "ExecStart=/usr/local/bin/gpuprov apply " + kProfileArg +
                                    " --yes --reboot never --from-bundle " + options.bundle_dir +
                                    " --bundle-key " + options.bundle_key + "\n"))
        << *unit;
}

TEST_F(Apply, ABundleTheResumeUnitCouldNotNameIsRefusedBeforeAnyChange) {
    TestHost host({.nouveau_loaded = true});
    options.bundle_dir = "/mnt/usb stick/bundle";
    options.bundle_key = "0123456789ABCDEF0123456789ABCDEF01234567";
    try {
        (void)apply(host);
        FAIL() << "applied";
    } catch (const HostError& e) {
        EXPECT_NE(std::string(e.what()).find("/mnt/usb stick/bundle"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_TRUE(host.sys.files_written.empty());
}

TEST_F(Apply, ResumeAfterRebootFinishesAndRemovesTheUnit) {
    // First boot: with nouveau.
    TestHost before({.nouveau_loaded = true});
    ASSERT_EQ(apply(before).status, StepStatus::reboot_required);

    // Next boot: the same disk (files, dpkg database, journal, units), nouveau gone, the module
    // loaded.
    TestHost after;
    for (const auto& path : before.sys.files_written) {
        after.sys.add_file(path, before.sys.file(path).value_or(""));
        after.sys.set_mode(path, before.sys.mode_of(path)); // the kernel hook is executable
    }
    after.sys.add_file(kDpkgStatus, before.sys.file(kDpkgStatus).value_or(""));
    for (const auto& name :
         {"usr/bin/nvidia-smi", "usr/bin/nvidia-ctk", "usr/local/cuda-12.4/bin/nvcc",
          "usr/local/cuda-12.4/version.json", "lib/systemd/system/nvidia-persistenced.service",
          "lib/systemd/system/nvidia-fabricmanager.service",
          "usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
          "usr/lib/x86_64-linux-gnu/libcudnn.so.9", "usr/lib/x86_64-linux-gnu/libnccl.so.2"}) {
        const auto path = std::string("/") + name;
        ASSERT_TRUE(before.sys.file(path)) << path;
        after.sys.add_file(path, *before.sys.file(path));
    }
    // What apt and update-initramfs left on the disk, after the files gpuprov wrote.
    for (const auto* dir : {"/var/lib/apt/lists", "/boot"}) {
        for (const auto& name : before.sys.list_dir(dir)) {
            const auto path = std::string(dir) + "/" + name;
            if (const auto content = before.sys.file(path)) {
                after.sys.add_file(path, *content);
            }
        }
    }
    after.sys.add_link("/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service",
                       kResumeUnit);
    after.sys.add_file("/proc/driver/nvidia/version",
                       read_fixture("engine/cmd/proc-driver-version-550.txt"));
    ASSERT_FALSE(after.sys.exists("/sys/module/nouveau"));
    ASSERT_TRUE(after.sys.exists(kResumeUnit));

    const auto r = apply(after);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_TRUE(after.ran({"apt-get", "install"}).empty()); // packages came before the reboot
    EXPECT_TRUE(after.ran({"apt-get", "update"}).empty());
    EXPECT_EQ(after.ran({"systemctl", "disable", "gpuprov-resume.service"}).size(), 1u);
    EXPECT_FALSE(after.sys.exists(kResumeUnit));
    EXPECT_FALSE(
        after.sys.exists("/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service"));
    const auto j = journal(after);
    EXPECT_FALSE(j.reboot_pending);
    EXPECT_EQ(j.result, "done");
    EXPECT_EQ(j.runs, 2);
    EXPECT_EQ(j.step("driver")->status, "satisfied");
    EXPECT_EQ(j.step("verify")->status, "done");
}

TEST_F(Apply, RebootIfNeededRebootsLast) {
    TestHost host({.nouveau_loaded = true});
    options.reboot = RebootPolicy::if_needed;
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    ASSERT_FALSE(host.sys.commands_ran.empty());
    EXPECT_EQ(host.sys.commands_ran.back(), (Strings{"systemctl", "reboot"}));
    EXPECT_TRUE(journal(host).reboot_pending); // saved before the reboot
}

TEST_F(Apply, ResumeUnitRefusesAProfilePathSystemdWouldSplit) {
    TestHost host({.nouveau_loaded = true});
    options.profile_arg = "/etc/gpuprov/my profile.yaml";
    const auto result = apply(host);
    // Nothing could resume after the reboot, so the run fails, and the journal says so
    // instead of staying "running".
    EXPECT_EQ(result.status, StepStatus::failed);
    EXPECT_NE(result.message.find("my profile.yaml"), std::string::npos) << result.message;
    EXPECT_FALSE(host.sys.exists(kResumeUnit));
    EXPECT_EQ(journal(host).result, "failed");
    EXPECT_FALSE(journal(host).reboot_pending);
}

} // namespace
