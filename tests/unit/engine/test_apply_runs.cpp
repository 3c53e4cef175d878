// apply's honesty about each run: a step's own checks after it applies, one journal entry per
// step of a failed batch, the configure half of other steps while the driver waits for a reboot,
// the reboot budget (one reboot per step, by boot id), the resume unit's command, never an abort,
// and a stop signal between steps.
#include "host_builder.hpp"

#include <algorithm>
#include <csignal>
#include <gpuprov/error.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/journal.hpp>
#include <map>
#include <nlohmann/json.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kBootA = "6c1f7a52-8f0e-4b59-9d3b-1a2b3c4d5e6f";
const std::string kBootB = "0d9e8c7b-6a5f-4e3d-8c2b-a1b2c3d4e5f6";
const Strings kEnableTimer = {"systemctl", "enable", "--now", "gpuprov-metrics.timer"};

struct Runs : ApplyTest {
    static std::string status_of(const TestHost& host, const std::string& id) {
        const auto j = journal(host);
        return j.step(id) != nullptr ? j.step(id)->status : "(none)";
    }
    static std::string exec_start(const TestHost& host) {
        const auto unit = host.sys.file(kResumeUnit).value_or("");
        const auto at = unit.find("ExecStart=");
        return at == std::string::npos ? "" : unit.substr(at, unit.find('\n', at) - at);
    }
};

// ---- A: a step's own verify, failed batches, configure beside a pending reboot ----

TEST_F(Runs, StepFailsWhenItsOwnChecksFailAfterApplying) {
    TestHost host;
    // systemctl says yes but enables nothing: the metrics timer is not linked.
    host.sys.on_command(kEnableTimer, CommandResult{});
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed) << r.message;
    EXPECT_TRUE(contains(r.message, "monitoring.timer")) << r.message;
    EXPECT_TRUE(contains(r.message, "expected enabled")) << r.message;
    EXPECT_TRUE(contains(r.message, "gpuprov apply")) << r.message; // the check's fix
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_EQ(j.step("monitoring")->status, "failed");
    EXPECT_TRUE(contains(j.step("monitoring")->message, "monitoring.timer"));
    // The steps before it passed their own checks.
    EXPECT_EQ(j.step("driver")->status, "done");
    EXPECT_EQ(j.step("cudnn")->status, "done");
}

TEST_F(Runs, EveryStepOfAFailedBatchGetsTheSharedErrorInItsOwnEntry) {
    TestHost host;
    host.sys.on_command_prefix({"apt-get", "install", "--yes"}, [](const Command&) {
        return CommandResult{.exit_code = 100,
                             .err = "E: Sub-process /usr/bin/dpkg returned an error code (1)\n"};
    });
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed);
    const auto j = journal(host);
    for (const auto* id :
         {"driver", "fabric-manager", "cuda-toolkit", "cudnn", "nccl", "container-toolkit"}) {
        ASSERT_NE(j.step(id), nullptr) << id;
        EXPECT_EQ(j.step(id)->status, "failed") << id;
        EXPECT_TRUE(contains(j.step(id)->message, "returned an error code (1)"))
            << id << ": " << j.step(id)->message;
        EXPECT_FALSE(contains(j.step(id)->message, "not run")) << id;
    }
    // Steps of the batch without packages were not run, and say why.
    for (const auto* id : {"nouveau", "cuda-repo", "tuning", "monitoring"}) {
        ASSERT_NE(j.step(id), nullptr) << id;
        EXPECT_EQ(j.step(id)->status, "failed") << id;
        EXPECT_TRUE(contains(j.step(id)->message, "not run: the package transaction"))
            << id << ": " << j.step(id)->message;
    }
    EXPECT_EQ(j.step("verify"), nullptr); // never reached
}

TEST_F(Runs, RebootForTheDriverDoesNotSkipTheOtherStepsConfiguration) {
    TestHost host({.nouveau_loaded = true});
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::reboot_required) << r.message;
    // Configured although the driver waits: container runtime, tuning files, monitoring.
    EXPECT_EQ(host.sys.file(kPersistencedDropinPath), kPersistencedDropin);
    EXPECT_EQ(host.sys.file(kProfileDPath), kProfileD);
    EXPECT_TRUE(host.sys.exists("/etc/docker/daemon.json"));
    EXPECT_TRUE(host.sys.exists(kMetricsTimer));
    EXPECT_EQ(host.ran({"nvidia-ctk", "runtime", "configure"}).size(), 1u);
    EXPECT_EQ(host.ran(kEnableTimer).size(), 1u);
    const auto j = journal(host);
    EXPECT_EQ(j.result, "reboot-required");
    EXPECT_EQ(j.step("driver")->status, "reboot-required");
    EXPECT_EQ(j.step("monitoring")->status, "done");
    // What needs the module is not judged now, and is not a failure.
    for (const auto& s : j.steps) {
        EXPECT_NE(s.status, "failed") << s.id << ": " << s.message;
    }
    ASSERT_NE(j.step("verify"), nullptr);
    EXPECT_EQ(j.step("verify")->status, "pending");
    EXPECT_TRUE(contains(j.step("verify")->message, "after the reboot"));
}

TEST_F(Runs, VerifyAfterTheRebootRunsEvenWhenEveryStepIsSatisfied) {
    TestHost host;
    ASSERT_EQ(apply(host).status, StepStatus::done);
    // The last run left verify waiting for a reboot; this run has nothing else to do.
    auto j = journal(host);
    j.upsert("verify").status = "pending";
    save_journal(host.sys, j);
    host.clear_records();
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(status_of(host, "verify"), "done");
    EXPECT_FALSE(host.sys.queries.empty()); // the checks ran
    // And once it passed, the next run is a no-op again.
    host.clear_records();
    ASSERT_EQ(apply(host).status, StepStatus::done);
    EXPECT_TRUE(host.sys.queries.empty());
    EXPECT_EQ(status_of(host, "verify"), "satisfied");
}

// ---- A: `gpuprov verify` runs every step's checks and honours the filter ----

TEST_F(Runs, VerifyStepsCoversEveryStepOnceAndHonoursOnlyAndSkip) {
    TestHost host;
    ASSERT_EQ(apply(host).status, StepStatus::done);
    StepRunner run(host, profile);
    const auto steps = make_steps();
    host.clear_records();
    const auto all = verify_steps(run.ctx(), host.sys, steps, {});
    // Each probe runs once (issue 20 item 5): the final step's checks repeat the driver's,
    // CUDA's and cuDNN's, and several steps ask nvidia-smi alike.
    std::map<std::vector<std::string>, int> asked;
    for (const auto& q : host.sys.queries) {
        ++asked[q];
    }
    EXPECT_GT(asked.size(), 5u);
    for (const auto& [argv, n] : asked) {
        EXPECT_EQ(n, 1) << display_argv(argv);
    }
    std::set<std::string> ids;
    std::set<std::string> owners;
    for (const auto& c : all) {
        EXPECT_TRUE(ids.insert(c.id).second) << "twice: " << c.id;
        owners.insert(c.step);
        // Nothing failed; container.gpu-run is skipped here (no image to run), and so is
        // fabric-manager.fabric-state (A100s report no fabric state).
        EXPECT_FALSE(failed(c)) << c.id << ": " << c.found;
        EXPECT_TRUE(c.passed || c.id == "container.gpu-run" ||
                    c.id == "fabric-manager.fabric-state")
            << c.id << ": " << c.found;
    }
    for (const auto* id :
         {"cuda-repo.source", "nouveau.blacklisted", "monitoring.timer", "preflight.host"}) {
        EXPECT_EQ(ids.count(id), 1u) << id;
    }
    for (const auto* step : {"driver", "cuda-toolkit", "cudnn", "nccl", "container-toolkit"}) {
        EXPECT_EQ(owners.count(step), 1u) << step;
    }

    const auto skipped = verify_steps(run.ctx(), host.sys, steps, {.skip = {"cudnn", "nouveau"}});
    for (const auto& c : skipped) {
        EXPECT_NE(c.step, "cudnn") << c.id;
        EXPECT_NE(c.step, "nouveau") << c.id;
    }
    EXPECT_LT(skipped.size(), all.size());
    const auto only = verify_steps(run.ctx(), host.sys, steps, {.only = {"cudnn"}});
    ASSERT_FALSE(only.empty());
    for (const auto& c : only) {
        EXPECT_EQ(c.step, "cudnn") << c.id;
    }
}

TEST_F(Runs, VerifyStepsLeavesOutWhatTheProfileSkips) {
    profile.skip_steps = {"monitoring"};
    TestHost host;
    ASSERT_EQ(apply(host).status, StepStatus::done);
    StepRunner run(host, profile);
    for (const auto& c : verify_steps(run.ctx(), host.sys, make_steps(), {})) {
        EXPECT_NE(c.step, "monitoring") << c.id;
    }
}

TEST_F(Runs, SkipCudnnPassesTheFinalVerifyWithoutCudnnInstalled) {
    TestHost host;
    options.filter.skip = {"cudnn"};
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_FALSE(host.sys.exists("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h"));
    EXPECT_EQ(status_of(host, "verify"), "done");
    EXPECT_EQ(status_of(host, "cudnn"), "skipped");
}

// ---- B: the reboot budget ----

TEST_F(Runs, RebootRequestRecordsTheBootIdAndTheEvidence) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file(kBootIdPath, kBootA + "\n");
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::reboot_required) << r.message;
    EXPECT_TRUE(contains(r.message, "nouveau is loaded")) << r.message; // driver's evidence
    const auto j = journal(host);
    EXPECT_EQ(j.boot_id, kBootA);
    EXPECT_EQ(j.step("driver")->reboot_boot_id, kBootA);
    EXPECT_FALSE(j.step("driver")->reboot_requested_at.empty());
    EXPECT_TRUE(contains(j.step("driver")->message, "nouveau is loaded"));
    EXPECT_EQ(j.message, r.message);
}

TEST_F(Runs, SameBootStaysRebootRequiredWithoutALoop) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file(kBootIdPath, kBootA + "\n");
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    const auto first_at = journal(host).step("driver")->reboot_requested_at;
    host.sys.add_file(kBootIdPath, kBootA + "\n"); // re-run without a reboot
    options.reboot = RebootPolicy::if_needed;
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::reboot_required) << r.message;
    EXPECT_EQ(journal(host).step("driver")->reboot_boot_id, kBootA);
    EXPECT_EQ(journal(host).step("driver")->reboot_requested_at, first_at);
    EXPECT_EQ(host.ran({"systemctl", "reboot"}).size(), 1u); // its first and only reboot
}

TEST_F(Runs, AskingAgainAfterARebootFailsWithTheEvidenceAndNeverRebootsAgain) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file(kBootIdPath, kBootA + "\n");
    options.reboot = RebootPolicy::if_needed;
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    ASSERT_EQ(host.ran({"systemctl", "reboot"}).size(), 1u);

    // The reboot happened (new boot id) and did not help: nouveau still holds the GPUs.
    host.sys.add_file(kBootIdPath, kBootB + "\n");
    host.clear_records();
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed) << r.message;
    EXPECT_TRUE(contains(r.message, "did not help")) << r.message;
    EXPECT_TRUE(contains(r.message, "nouveau is loaded")) << r.message;
    EXPECT_TRUE(contains(r.message, kBootA)) << r.message;
    EXPECT_TRUE(host.ran({"systemctl", "reboot"}).empty());
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_FALSE(j.reboot_pending);
    EXPECT_EQ(j.step("driver")->status, "failed");
    EXPECT_EQ(j.step("driver")->reboot_boot_id, kBootA); // the budget stays spent

    // Every later boot: still failed, still no reboot.
    host.sys.add_file(kBootIdPath, "11111111-2222-4333-8444-555555555555\n");
    host.clear_records();
    EXPECT_EQ(apply(host).status, StepStatus::failed);
    EXPECT_TRUE(host.ran({"systemctl", "reboot"}).empty());
}

TEST_F(Runs, AFailedResumedRunRemovesTheResumeUnitAndSaysHowToResumeByHand) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file(kBootIdPath, kBootA + "\n");
    options.reboot = RebootPolicy::if_needed;
    options.allow_remove = true;
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    const auto command = exec_start(host).substr(std::string_view("ExecStart=").size());
    ASSERT_FALSE(command.empty());
    ASSERT_TRUE(
        host.sys.exists("/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service"));

    // The resumed run after the reboot fails: the unit must not run it again at every boot.
    host.sys.add_file(kBootIdPath, kBootB + "\n");
    host.clear_records();
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed) << r.message;
    EXPECT_FALSE(host.sys.exists(kResumeUnit));
    EXPECT_FALSE(host.ran({"systemctl", "disable", "gpuprov-resume.service"}).empty());
    EXPECT_FALSE(
        host.sys.exists("/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service"));
    EXPECT_TRUE(contains(r.message, "gpuprov-resume.service was removed")) << r.message;
    EXPECT_TRUE(contains(r.message, "resume by hand: sudo " + command)) << r.message;
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_EQ(j.message, r.message);
    EXPECT_TRUE(contains(command, "--allow-remove")) << command; // what would have repeated
}

TEST_F(Runs, ABlockedRunRemovesTheResumeUnitToo) {
    TestHost host({.nouveau_loaded = true});
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    ASSERT_TRUE(host.sys.exists(kResumeUnit));
    // The resumed run's plan blocks (here: a profile edited before the reboot): nothing runs,
    // and nothing repeats at the next boot.
    profile.driver->flavor = "server"; // Ubuntu's archive only; this host is Debian 12
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed) << r.message;
    EXPECT_TRUE(contains(r.message, "blocked")) << r.message;
    EXPECT_FALSE(host.sys.exists(kResumeUnit));
    EXPECT_TRUE(contains(journal(host).message, "resume by hand")) << journal(host).message;
}

TEST_F(Runs, ABootThatFixedItClearsTheBudget) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file(kBootIdPath, kBootA + "\n");
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    // Next boot: nouveau is gone, the module loads.
    host.sys.remove_file("/sys/module/nouveau/refcnt");
    host.sys.add_file("/proc/modules", "ext4 1036288 1 - Live 0x0000000000000000\n");
    for (const auto& d : host.sys.list_dir("/sys/bus/pci/devices")) {
        host.sys.remove_file("/sys/bus/pci/devices/" + d + "/driver");
    }
    host.sys.add_file("/proc/driver/nvidia/version",
                      read_fixture("engine/cmd/proc-driver-version-550.txt"));
    host.sys.add_file(kBootIdPath, kBootB + "\n");
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    const auto j = journal(host);
    EXPECT_TRUE(j.step("driver")->reboot_boot_id.empty());
    EXPECT_EQ(j.step("verify")->status, "done");
}

TEST_F(Runs, WithoutABootIdTheBudgetCannotBeJudgedAndStaysRebootRequired) {
    TestHost host({.nouveau_loaded = true});
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(apply(host).status, StepStatus::reboot_required);
}

// ---- C: the resume unit runs the same apply from stable places ----

TEST_F(Runs, ResumeUnitKeepsTheFiltersThePolicyAndAllowRemove) {
    TestHost host({.nouveau_loaded = true});
    options.filter.skip = {"monitoring", "cudnn"};
    options.reboot = RebootPolicy::if_needed;
    options.allow_remove = true;
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(exec_start(host), "ExecStart=/usr/local/bin/gpuprov apply " + kProfileArg +
                                    " --yes --reboot if-needed --skip cudnn,monitoring "
                                    "--allow-remove");
}

TEST_F(Runs, ResumeUnitEndsBeforeCloudInitsFinalStage) {
    // cloud-init's per-boot script reports `gpuprov status`; it must run after the resumed run.
    TestHost host({.nouveau_loaded = true});
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    const auto unit = host.sys.file(kResumeUnit).value_or("");
    EXPECT_TRUE(contains(unit, "\nBefore=cloud-final.service\n")) << unit;
    EXPECT_TRUE(contains(unit, "\nAfter=network-online.target\n")) << unit;
}

TEST_F(Runs, ResumeUnitKeepsOnly) {
    TestHost host({.nouveau_loaded = true});
    options.filter.only = {"nouveau", "driver", "verify"};
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(exec_start(host), "ExecStart=/usr/local/bin/gpuprov apply " + kProfileArg +
                                    " --yes --reboot never --only driver,nouveau,verify");
}

const std::string kResumeCopy = "/etc/gpuprov/resume/engine-test.yaml";

TEST_F(Runs, ResumeUnitRunsTheProfileInstalledUnderEtcGpuprovResume) {
    TestHost host({.nouveau_loaded = true});
    options.profile_arg = "/tmp/p.yaml";
    options.profile_text = "name: engine-test\nextends: cv-train\n# the file's own text\n";
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    const auto copy = host.sys.file(kResumeCopy).value_or("");
    EXPECT_TRUE(copy.starts_with("# gpuprov's copy of the profile")) << copy;
    EXPECT_TRUE(copy.ends_with("\n" + options.profile_text)) << copy;
    EXPECT_EQ(host.sys.mode_of(kResumeCopy), 0644u);
    EXPECT_EQ(exec_start(host),
              "ExecStart=/usr/local/bin/gpuprov apply " + kResumeCopy + " --yes --reboot never");
    EXPECT_FALSE(contains(host.sys.file(kResumeUnit).value_or(""), "/tmp/p.yaml"));

    // The resumed run reads the copy and needs another reboot: the copy stays as it is.
    options.profile_arg = kResumeCopy;
    options.profile_text = copy;
    host.clear_records();
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(host.sys.file(kResumeCopy), copy);
    EXPECT_TRUE(std::find(host.sys.files_written.begin(), host.sys.files_written.end(),
                          kResumeCopy) == host.sys.files_written.end());
}

TEST_F(Runs, ResumeCopyNeverOverwritesTheOperatorsProfileItExtends) {
    // /etc/gpuprov/engine-test.yaml is the operator's; /root/gpu.yaml extends it and inherits
    // its name, engine-test. The copy once went to /etc/gpuprov/<name>.yaml: over it.
    TestHost host({.nouveau_loaded = true});
    const std::string own = "name: engine-test\n# the operator's base profile, with comments\n";
    host.sys.add_file("/etc/gpuprov/engine-test.yaml", own);
    options.profile_arg = "/root/gpu.yaml";
    options.profile_text = "# resolved chain\nname: engine-test\nsteps: {skip: [cudnn]}\n";
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(host.sys.file("/etc/gpuprov/engine-test.yaml"), own);
    EXPECT_TRUE(host.sys.file(kResumeCopy).value_or("").ends_with(options.profile_text));
    EXPECT_EQ(exec_start(host),
              "ExecStart=/usr/local/bin/gpuprov apply " + kResumeCopy + " --yes --reboot never");
}

TEST_F(Runs, AFileGpuprovDidNotWriteWhereTheCopyGoesIsKeptAndTheRunSaysSo) {
    TestHost host({.nouveau_loaded = true});
    const std::string theirs = "name: engine-test\n# someone's file, no gpuprov header\n";
    host.sys.add_file(kResumeCopy, theirs);
    options.profile_arg = "/root/gpu.yaml";
    options.profile_text = "name: engine-test\n";
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed) << r.message;
    EXPECT_TRUE(contains(r.message, kResumeCopy + " is in the way")) << r.message;
    EXPECT_EQ(host.sys.file(kResumeCopy), theirs);
    EXPECT_FALSE(host.sys.exists(kResumeUnit));
    EXPECT_EQ(journal(host).result, "failed");
}

TEST_F(Runs, ResumeUnitNamesABuiltinProfileAndWritesNoCopy) {
    TestHost host({.nouveau_loaded = true});
    options.profile_arg = "cv-train";
    options.profile_text.clear();
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(exec_start(host), "ExecStart=/usr/local/bin/gpuprov apply cv-train --yes --reboot "
                                "never");
    EXPECT_TRUE(host.sys.list_dir("/etc/gpuprov").empty());
}

TEST_F(Runs, UnitsRunThePackagedBinaryWhenThereIsOne) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_file("/usr/bin/gpuprov", "packaged gpuprov");
    options.self_path = "/home/dev/gpuprov/build/gpuprov";
    host.sys.add_file(options.self_path, "a developer's build");
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_TRUE(contains(exec_start(host), "ExecStart=/usr/bin/gpuprov apply "));
    EXPECT_TRUE(contains(host.sys.file(kMetricsService).value_or(""),
                         "ExecStart=/usr/bin/gpuprov metrics"));
    EXPECT_FALSE(host.sys.exists("/usr/local/bin/gpuprov"));
}

TEST_F(Runs, ApplyFromElsewhereInstallsItsBinaryWhereUnitsRunIt) {
    TestHost host({.nouveau_loaded = true});
    options.self_path = "/home/dev/gpuprov/build/gpuprov";
    host.sys.add_file(options.self_path, "\x7f"
                                         "ELF this build");
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(host.sys.file("/usr/local/bin/gpuprov"), "\x7f"
                                                       "ELF this build");
    EXPECT_EQ(host.sys.mode_of("/usr/local/bin/gpuprov"), 0755u);
    for (const auto& unit : {kResumeUnit, kMetricsService}) {
        const auto text = host.sys.file(unit).value_or("");
        EXPECT_TRUE(contains(text, "ExecStart=/usr/local/bin/gpuprov ")) << text;
        EXPECT_FALSE(contains(text, "/build/")) << text;
        EXPECT_FALSE(contains(text, "/proc/self/exe")) << text;
    }
    // Before the units that run it.
    const auto& written = host.sys.files_written;
    const auto at = [&](const std::string& p) {
        return std::find(written.begin(), written.end(), p) - written.begin();
    };
    EXPECT_LT(at("/usr/local/bin/gpuprov"), at(kMetricsService));
}

TEST_F(Runs, ConvergedHostPlansAndAppliesAsANoOpWhateverBinaryRuns) {
    TestHost host;
    options.self_path = "/home/dev/gpuprov/build/gpuprov";
    host.sys.add_file(options.self_path, "build 1");
    ASSERT_EQ(apply(host).status, StepStatus::done);
    // A later build, run from the build tree, on the converged host.
    host.sys.add_file(options.self_path, "build 2");
    {
        StepRunner run(host, profile);
        StepContext ctx{profile, run.facts(), matrix(), run.ctx().repos,
                        units_gpuprov_path(host.sys)};
        const auto plan = build_plan(ctx, host.sys, make_steps(), {});
        EXPECT_FALSE(plan.changes_pending());
        EXPECT_FALSE(gpuprov_binary_change(host.sys, options.self_path, plan.changes_pending()));
    }
    host.clear_records();
    ASSERT_EQ(apply(host).status, StepStatus::done);
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_EQ(host.sys.file("/usr/local/bin/gpuprov"), "build 1"); // not replaced on a no-op
}

TEST_F(Runs, BinaryChangeIsPlannedOnlyWhenItIsNeeded) {
    TestHost host;
    const std::string self = "/opt/gpuprov/gpuprov";
    host.sys.add_file(self, "this build");
    // Apply installs it only along with other changes (issue 26 item 19): a plan with nothing
    // pending promises nothing, missing or not.
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, false));
    EXPECT_TRUE(gpuprov_binary_change(host.sys, self, true)); // missing
    host.sys.add_file("/usr/local/bin/gpuprov", "an older build");
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, false));
    const auto change = gpuprov_binary_change(host.sys, self, true);
    ASSERT_TRUE(change);
    EXPECT_EQ(change->target, "/usr/local/bin/gpuprov");
    host.sys.add_file("/usr/local/bin/gpuprov", "this build");
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, true));
    EXPECT_FALSE(gpuprov_binary_change(host.sys, "/usr/local/bin/gpuprov", true));
    EXPECT_FALSE(gpuprov_binary_change(host.sys, "", true));
    EXPECT_EQ(installed_profile_path("my train/../x"), "/etc/gpuprov/resume/my_train_.._x.yaml");
}

// Issue 26 item 19: a 140 MB build with debug info made `plan` read all of itself.
TEST_F(Runs, ThePlanNeverReadsTheBinaryWhole) {
    TestHost host;
    const std::string self = "/opt/gpuprov/gpuprov";
    host.sys.add_file(self, "this build");
    const auto reads = [&host, &self] {
        return std::count(host.sys.files_read.begin(), host.sys.files_read.end(), self);
    };
    (void)gpuprov_binary_change(host.sys, self, false); // nothing pending: not even compared
    (void)gpuprov_binary_change(host.sys, self, true);  // none installed: nothing to compare
    EXPECT_TRUE(host.sys.compared.empty());
    host.sys.add_file("/usr/local/bin/gpuprov", "an older build");
    EXPECT_TRUE(gpuprov_binary_change(host.sys, self, true));
    host.sys.add_file("/usr/local/bin/gpuprov", "this build");
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, true));
    EXPECT_EQ(reads(), 0);
    // Compared side by side (System::same_content: sizes first, then pieces), twice.
    EXPECT_EQ(host.sys.compared,
              (Strings{self, "/usr/local/bin/gpuprov", self, "/usr/local/bin/gpuprov"}));
}

// Issue 26 item 5: where no package installed gpuprov (the .deb and .rpm ship the rule), apply
// installs logrotate's rule for /var/log/gpuprov.log beside its own copy of the binary.
TEST_F(Runs, ASelfInstalledGpuprovGetsTheLogrotateRuleThePackagesShip) {
    TestHost host({.nouveau_loaded = true});
    host.sys.add_dir("/etc/logrotate.d");
    options.self_path = "/home/dev/gpuprov/build/gpuprov";
    host.sys.add_file(options.self_path, "this build");
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    EXPECT_EQ(host.sys.file("/etc/logrotate.d/gpuprov"),
              read_fixture("../../dist/logrotate/gpuprov"));
    EXPECT_EQ(host.sys.mode_of("/etc/logrotate.d/gpuprov"), 0644u);
    EXPECT_TRUE(
        contains(host.sys.file("/etc/logrotate.d/gpuprov").value_or(""), "/var/log/gpuprov.log {"));
}

TEST_F(Runs, TheLogrotateRuleIsPlannedWhereverUnitsRunGpuprovsOwnCopy) {
    TestHost host;
    host.sys.add_dir("/etc/logrotate.d");
    // cloud-init's --install-from runs /usr/local/bin/gpuprov itself: no binary to copy.
    const std::string self = "/usr/local/bin/gpuprov";
    host.sys.add_file(self, "this build");
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, false));
    const auto change = gpuprov_binary_change(host.sys, self, true);
    ASSERT_TRUE(change);
    EXPECT_EQ(change->target, "/etc/logrotate.d/gpuprov");
    EXPECT_TRUE(contains(change->detail, "logrotate's rule for /var/log/gpuprov.log"))
        << change->detail;
    install_gpuprov_binary(host.sys, self);
    EXPECT_EQ(host.sys.files_written, Strings{"/etc/logrotate.d/gpuprov"});
    // One already there is the operator's: left alone.
    host.sys.add_file("/etc/logrotate.d/gpuprov", "/var/log/gpuprov.log { daily }\n");
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, true));
    // A package's binary: the package ships the rule.
    host.sys.remove_file("/etc/logrotate.d/gpuprov");
    host.sys.add_file("/usr/bin/gpuprov", "packaged");
    EXPECT_FALSE(gpuprov_binary_change(host.sys, self, true));
    // No logrotate installed: nothing would read it.
    host.sys.remove_file("/usr/bin/gpuprov");
    TestHost bare;
    bare.sys.add_file(self, "this build");
    EXPECT_FALSE(gpuprov_binary_change(bare.sys, self, true));
}

// Issue 26 item 8: the binary the units run is checked even before apply copies it there.
TEST_F(Runs, TheUnitsBinaryDirectoryIsTrustCheckedBeforeTheBinaryExists) {
    TestHost host;
    const std::string self = "/opt/gpuprov/gpuprov";
    host.sys.add_file(self, "this build");
    host.sys.add_dir("/usr/local/bin");
    EXPECT_NO_THROW(require_trusted_units_binary(host.sys, self));
    host.sys.set_mode("/usr/local/bin", 02775); // root:staff, as older Debian made it
    try {
        require_trusted_units_binary(host.sys, self);
        ADD_FAILURE() << "a group-writable /usr/local/bin was accepted";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "(apply installs /usr/local/bin/gpuprov there)"))
            << e.what();
        EXPECT_TRUE(contains(e.what(), "directory /usr/local/bin (owner uid 0, group gid 0, mode "
                                       "2775)"))
            << e.what();
        EXPECT_TRUE(contains(e.what(), "--allow-untrusted")) << e.what();
    }
    // Once it is there, the binary itself (and the same directory chain) is what is checked.
    host.sys.add_file("/usr/local/bin/gpuprov", "this build");
    EXPECT_THROW(require_trusted_units_binary(host.sys, self), HostError);
    host.sys.set_mode("/usr/local/bin", 0755);
    host.sys.set_mode("/usr/local/bin/gpuprov", 0775);
    EXPECT_THROW(require_trusted_units_binary(host.sys, self), HostError);
    host.sys.set_mode("/usr/local/bin/gpuprov", 0755);
    EXPECT_NO_THROW(require_trusted_units_binary(host.sys, self));
    // Running that very binary: it was checked as the running one.
    host.sys.set_mode("/usr/local/bin/gpuprov", 0775);
    EXPECT_NO_THROW(require_trusted_units_binary(host.sys, "/usr/local/bin/gpuprov"));
}

TEST_F(Runs, AMissingUnitsDirectoryIsJudgedByTheNearestOneThatExists) {
    TestHost host;
    ASSERT_FALSE(host.sys.exists("/usr/local/bin"));
    host.sys.add_dir("/usr");
    EXPECT_NO_THROW(require_trusted_units_binary(host.sys, "/opt/gpuprov/gpuprov"));
    host.sys.set_mode("/usr", 0777);
    EXPECT_THROW(require_trusted_units_binary(host.sys, "/opt/gpuprov/gpuprov"), HostError);
}

// ---- D: never abort; the journal always ends final ----

TEST_F(Runs, InvalidUtf8InAptsErrorGivesACleanFailureAndValidJson) {
    TestHost host;
    host.sys.on_command_prefix({"apt-get", "install", "--yes"}, [](const Command&) {
        return CommandResult{.exit_code = 100, .err = "E: paquet \xff\xfe cass\xe9\n"};
    });
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::failed);
    const auto text = host.sys.file(kJournalPath).value_or("");
    const auto doc = nlohmann::json::parse(text); // valid JSON, UTF-8 throughout
    EXPECT_EQ(doc["result"], "failed");
    EXPECT_TRUE(contains(text, "\xef\xbf\xbd")) << text; // U+FFFD where the bytes were
}

TEST_F(Runs, InvalidUtf8InOsReleaseEndsWithAFinalJournal) {
    TestHost host;
    host.sys.add_file("/etc/os-release", "PRETTY_NAME=\"Deb\xff\xfe\"\nNAME=\"Deb\xff\"\n"
                                         "VERSION_ID=\"12\xff\"\nID=deb\xff\xfe\n");
    ApplyResult r;
    ASSERT_NO_THROW(r = apply(host));
    EXPECT_EQ(r.status, StepStatus::failed);
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_TRUE(nlohmann::json::accept(host.sys.file(kJournalPath).value_or("")));
}

TEST_F(Runs, AnExceptionFromAnywhereEndsTheRunWithAFinalJournal) {
    TestHost host;
    host.sys.on_command_prefix(
        {"apt-get", "install", "--yes"},
        [](const Command&) -> CommandResult { throw std::runtime_error("bad_alloc, say"); });
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "internal error")) << r.message;
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_TRUE(contains(j.message, "bad_alloc, say")) << j.message;
    EXPECT_FALSE(j.run_finished_at.empty());
}

TEST_F(Runs, AnExceptionWhilePlanningEndsTheRunWithAFinalJournal) {
    TestHost host;
    host.sys.on_command_prefix({"gpgv"}, [](const Command&) -> CommandResult { throw 42; });
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_EQ(journal(host).result, "failed");
    EXPECT_FALSE(journal(host).message.empty());
}

TEST_F(Runs, ACorruptJournalIsMovedAsideAndTheRunGoesOn) {
    TestHost host;
    host.sys.add_file(kJournalPath, "{\"schema\": 1, \"steps\": [{\"id\": \"dri");
    const auto r = apply(host);
    ASSERT_EQ(r.status, StepStatus::done) << r.message;
    std::string moved;
    for (const auto& name : host.sys.list_dir("/var/lib/gpuprov")) {
        if (name.rfind("state.json.corrupt-", 0) == 0) {
            moved = "/var/lib/gpuprov/" + name;
        }
    }
    ASSERT_FALSE(moved.empty());
    EXPECT_EQ(host.sys.file(moved), "{\"schema\": 1, \"steps\": [{\"id\": \"dri");
    EXPECT_EQ(journal(host).result, "done");
    EXPECT_EQ(journal(host).runs, 1);
    bool warned = false;
    for (const auto& line : reporter.infos) {
        warned = warned || contains(line, moved);
    }
    EXPECT_TRUE(warned);
}

// ---- F: a stop signal ends the run between steps ----

struct Stops : Runs {
    void SetUp() override {
        install_stop_handlers();
        clear_stop_request();
    }
    void TearDown() override { clear_stop_request(); }
};

TEST_F(Stops, SignalDuringPrepareStopsBeforeThePackageTransaction) {
    TestHost host;
    host.sys.on_command_prefix({"update-initramfs", "-u"}, [](const Command&) {
        std::raise(SIGTERM); // systemctl stop, shutdown
        return CommandResult{};
    });
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(r.interrupted);
    EXPECT_TRUE(contains(r.message, "interrupted by signal SIGTERM")) << r.message;
    EXPECT_TRUE(host.ran({"apt-get", "install", "--yes"}).empty());
    // The repositories came first (apt resolves against them, and the guard with it); the
    // signal arrived in nouveau's prepare, after the guard, and nothing was installed.
    EXPECT_EQ(host.ran({"apt-get", "update"}).size(), 2u);
    const auto j = journal(host);
    EXPECT_EQ(j.result, "failed");
    EXPECT_TRUE(contains(j.message, "interrupted by signal")) << j.message;
    EXPECT_EQ(j.step("nouveau")->status, "failed");
    EXPECT_TRUE(contains(j.step("cuda-repo")->message, "interrupted by signal"));
    EXPECT_EQ(j.step("verify"), nullptr);
}

TEST_F(Stops, SignalBeforeTheRunStartsChangesNothing) {
    TestHost host;
    std::raise(SIGINT);
    const auto r = apply(host);
    EXPECT_TRUE(r.interrupted);
    EXPECT_TRUE(contains(r.message, "SIGINT")) << r.message;
    EXPECT_TRUE(host.sys.commands_ran.empty());
    EXPECT_EQ(journal(host).result, "failed");
}

// Waiting minutes for unattended-upgrades' dpkg lock must not outlast a Ctrl-C: the wait ends
// at the next poll and nothing is installed.
TEST_F(Stops, SignalWhileWaitingForTheDpkgLockEndsTheWait) {
    TestHost host;
    host.sys.set_lock_holder("/var/lib/dpkg/lock-frontend", 4242, 1000000);
    host.sys.on_sleep = [] { std::raise(SIGINT); };
    const auto r = apply(host);
    EXPECT_TRUE(r.interrupted);
    EXPECT_TRUE(contains(r.message, "interrupted by signal SIGINT")) << r.message;
    EXPECT_EQ(host.sys.slept, std::chrono::milliseconds(2000)); // one poll, not 600 s of them
    EXPECT_TRUE(host.ran({"apt-get", "install", "--yes"}).empty());
    EXPECT_EQ(journal(host).result, "failed");
}

// The package transaction is bounded by silence, not total time, and a stop lets dpkg finish.
TEST_F(Stops, PackageTransactionsFinishOnStopAndAreBoundedBySilence) {
    TestHost host;
    std::vector<Command> seen;
    host.sys.on_command_prefix({"apt-get", "install", "--yes"}, [&](const Command& c) {
        seen.push_back(c);
        return CommandResult{};
    });
    apply(host);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_TRUE(seen[0].finish_on_stop);
    EXPECT_EQ(seen[0].idle_timeout, std::chrono::minutes(20));
    EXPECT_GE(seen[0].timeout, std::chrono::hours(1));
}

TEST_F(Stops, ARunStoppedBySignalKeepsTheResumeUnit) {
    // A shutdown stops the resumed run (SIGTERM): that is no failure, and the unit finishes it
    // at the next boot.
    TestHost host({.nouveau_loaded = true});
    ASSERT_EQ(apply(host).status, StepStatus::reboot_required);
    ASSERT_TRUE(host.sys.exists(kResumeUnit));
    std::raise(SIGTERM);
    const auto r = apply(host);
    ASSERT_TRUE(r.interrupted) << r.message;
    EXPECT_TRUE(host.sys.exists(kResumeUnit));
    EXPECT_FALSE(contains(r.message, "resume by hand")) << r.message;
}

TEST_F(Stops, NoRebootAfterAStop) {
    TestHost host({.nouveau_loaded = true});
    options.reboot = RebootPolicy::if_needed;
    host.sys.on_command_prefix({"nvidia-ctk", "runtime", "configure"}, [](const Command&) {
        std::raise(SIGINT);
        return CommandResult{};
    });
    const auto r = apply(host);
    EXPECT_TRUE(r.interrupted);
    EXPECT_TRUE(host.ran({"systemctl", "reboot"}).empty());
    EXPECT_EQ(journal(host).result, "failed");
}

} // namespace

namespace gpuprov::enginetest {
namespace {

// issue 26 item 15: the driver's packages ship no nvidia-persistenced.service, so the tuning
// step's wants-link dangles. It must not say done and be pending again on every run: the engine
// checks each applied step again and fails it with the check's own reason.
TEST_F(ApplyTest, AStepWhoseCheckStillFailsAfterItsApplyFailsWithTheReason) {
    TestHost host({.persistenced_unit = false});
    const auto r = apply(host);
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_TRUE(contains(r.message, "applied, but its check is still pending afterwards"))
        << r.message;
    EXPECT_TRUE(contains(r.message, "nvidia-persistenced.service")) << r.message;
    EXPECT_TRUE(contains(r.message, "while applying step 'tuning'")) << r.message;
    const auto j = journal(host);
    ASSERT_NE(j.step("tuning"), nullptr);
    EXPECT_EQ(j.step("tuning")->status, "failed");
    EXPECT_EQ(j.result, "failed");
}

} // namespace
} // namespace gpuprov::enginetest
