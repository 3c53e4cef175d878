// gpuprov upgrade's order on a fake host (docs/upgrade.md): drain, wait for the GPUs, apply,
// reboot and continue, verify, put the node back; and every way it stops with the node drained.
#include "fake_system.hpp"
#include "resume.hpp"

#include <gpuprov/engine.hpp>
#include <gpuprov/node_drain.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;
using gpuprov::testing::read_fixture;
using Strings = std::vector<std::string>;

namespace {

CommandResult ok(std::string out = {}) {
    CommandResult r;
    r.out = std::move(out);
    return r;
}

CommandResult missing() {
    CommandResult r;
    r.exit_code = 127;
    r.not_found = true;
    return r;
}

/// A node known to Slurm (whose state the fake keeps as scontrol updates it) and Kubernetes.
struct Cluster {
    FakeSystem sys;
    std::string slurm_state = "MIXED";
    int jobs_left_polls = 0; ///< polls during which Slurm still runs jobs after the drain
    int gpu_busy_polls = 0;  ///< polls during which nvidia-smi lists a compute process
    bool slurm = true;
    bool kubectl = true;
    std::vector<std::string> events; ///< argv lines and hook calls, in order

    Cluster() {
        sys.add_file("/proc/sys/kernel/hostname", "gpu07.cluster.example\n");
        sys.add_file("/proc/sys/kernel/random/boot_id", "boot-1\n");
        sys.add_file("/etc/kubernetes/admin.conf", "apiVersion: v1\n");
        sys.on_command_prefix({"scontrol"}, [this](const Command& c) { return scontrol(c); });
        sys.on_command_prefix({"kubectl"}, [this](const Command& c) {
            if (!kubectl) {
                return missing();
            }
            if (c.argv[1] != "version") {
                events.push_back(display_argv(c.argv));
            }
            return ok("Client Version: v1.31.0\n");
        });
        sys.on_command_prefix({"nvidia-smi"}, [this](const Command&) {
            if (gpu_busy_polls > 0) {
                --gpu_busy_polls;
                return ok("4242, /usr/bin/python3\n");
            }
            return ok();
        });
    }

    CommandResult scontrol(const Command& c) {
        if (!slurm) {
            return missing();
        }
        const auto& a = c.argv;
        if (a[1] == "show") {
            auto out = read_fixture("slurm/scontrol-show-node-drained.txt");
            auto state = slurm_state;
            if (state.find("DRAIN") != std::string::npos && jobs_left_polls > 0) {
                --jobs_left_polls;
                state = "MIXED+DRAIN";
            }
            out.replace(out.find("IDLE+DRAIN"), 10, state);
            return ok(out);
        }
        events.push_back(display_argv(a));
        if (a[3] == "State=DRAIN") {
            slurm_state = "IDLE+DRAIN";
        } else if (a[3] == "State=RESUME") {
            slurm_state = "IDLE";
        }
        return ok();
    }

    StepStatus apply_result = StepStatus::done;
    bool verify_passes = true;
    bool want_smoke = true;
    UpgradeHooks hooks() {
        UpgradeHooks h;
        h.apply = [this](std::string& message) {
            events.push_back("apply");
            message =
                apply_result == StepStatus::reboot_required ? "driver: reboot to load it" : "";
            return apply_result;
        };
        h.verify = [this](bool smoke, std::string& message) {
            EXPECT_EQ(smoke, want_smoke);
            events.push_back("verify");
            if (!verify_passes) {
                message = "driver.loaded: expected 580.95.05, found no module";
            }
            return verify_passes;
        };
        return h;
    }

    UpgradeResult upgrade() {
        const UpgradeOptions opt{.profile = "/etc/gpuprov/resume/x.yaml", .poll = 10s};
        return run_upgrade(sys, opt, hooks(), [](const std::string&) {});
    }
};

const std::string kKube = "kubectl --kubeconfig /etc/kubernetes/admin.conf";

TEST(SlurmState, ReadsStateFromARealCapture) {
    const auto out = read_fixture("slurm/scontrol-show-node-drained.txt");
    EXPECT_EQ(slurm_state(out), "IDLE+DRAIN");
    EXPECT_TRUE(slurm_drained("IDLE+DRAIN"));
    EXPECT_TRUE(slurm_drained("DOWN*+DRAIN"));
    EXPECT_FALSE(slurm_drained("MIXED+DRAIN")); // draining: jobs still run
    EXPECT_FALSE(slurm_drained("ALLOCATED+DRAIN"));
    EXPECT_FALSE(slurm_drained("IDLE"));
    EXPECT_EQ(slurm_state("Node gpu9 not found\n"), "");
}

TEST(ComputeApps, ParsesPidAndName) {
    const auto apps = parse_compute_apps("4242, /usr/bin/python3\n77, ./train --lr 0.1, x\n\n");
    ASSERT_EQ(apps.size(), 2u);
    EXPECT_EQ(apps[0].pid, "4242");
    EXPECT_EQ(apps[0].name, "/usr/bin/python3");
    EXPECT_EQ(apps[1].name, "./train --lr 0.1, x");
}

TEST(Upgrade, DrainsAppliesVerifiesThenResumesInThatOrder) {
    Cluster c;
    const auto r = c.upgrade();
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(c.events,
              (Strings{"scontrol update NodeName=gpu07 State=DRAIN 'Reason=gpuprov upgrade'",
                       kKube + " cordon gpu07",
                       kKube + " drain gpu07 --ignore-daemonsets --delete-emptydir-data "
                               "--timeout=600s",
                       "apply", "verify", "scontrol update NodeName=gpu07 State=RESUME",
                       kKube + " uncordon gpu07"}));
    const auto state = load_upgrade_state(c.sys);
    ASSERT_TRUE(state);
    EXPECT_EQ(state->phase, "done");
    EXPECT_EQ(state->schedulers.slurm_node, "gpu07");
}

TEST(Upgrade, WaitsForJobsAndGpuProcessesBoundedAndShown) {
    Cluster c;
    c.jobs_left_polls = 2;
    c.gpu_busy_polls = 3;
    std::vector<std::string> said;
    const UpgradeOptions opt{.profile = "p", .wait_limit = 600s, .poll = 10s};
    const auto r =
        run_upgrade(c.sys, opt, c.hooks(), [&](const std::string& l) { said.push_back(l); });
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(c.sys.slept, 30s); // three polls found the GPUs busy
    std::size_t waits = 0;
    for (const auto& l : said) {
        waits += l.find("waiting for the GPUs to be free") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(waits, 3u);
}

TEST(Upgrade, GpusStillBusyAtTheDeadlineStopsDrained) {
    Cluster c;
    c.gpu_busy_polls = 1000;
    const UpgradeOptions opt{.profile = "p", .wait_limit = 60s, .poll = 10s};
    const auto r = run_upgrade(c.sys, opt, c.hooks(), [](const std::string&) {});
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_NE(r.message.find("still in use after 60s: pid 4242 (/usr/bin/python3)"),
              std::string::npos)
        << r.message;
    EXPECT_EQ(std::count(c.events.begin(), c.events.end(), "apply"), 0);
    EXPECT_EQ(c.slurm_state, "IDLE+DRAIN");
    EXPECT_EQ(load_upgrade_state(c.sys)->phase, "failed");
}

TEST(Upgrade, VerifyFailureLeavesTheNodeDrainedAndSaysWhy) {
    Cluster c;
    c.verify_passes = false;
    const auto r = c.upgrade();
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_NE(r.message.find("verify --smoke failed: driver.loaded"), std::string::npos);
    EXPECT_NE(r.message.find("scontrol update NodeName=gpu07 State=RESUME"), std::string::npos)
        << "the message says how to put the node back by hand";
    for (const auto& e : c.events) {
        EXPECT_EQ(e.find("RESUME"), std::string::npos);
        EXPECT_EQ(e.find("uncordon"), std::string::npos);
    }
    const auto state = load_upgrade_state(c.sys);
    EXPECT_EQ(state->phase, "failed");
    EXPECT_EQ(state->events.back().event, "failed");
    EXPECT_NE(state->events.back().message.find("driver.loaded"), std::string::npos);
}

TEST(UpgradeStatus, AFailedUpgradeSaysTheNodeIsDrainedAndHowToPutItBack) {
    Cluster c;
    c.verify_passes = false;
    (void)c.upgrade();
    const auto state = *load_upgrade_state(c.sys);
    const auto lines = upgrade_summary(state);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_TRUE(lines[0].starts_with("failed at " + state.events.back().at)) << lines[0];
    EXPECT_NE(lines[0].find("Slurm node gpu07, Kubernetes node gpu07: drained"), std::string::npos)
        << lines[0];
    EXPECT_TRUE(lines[1].starts_with("failed: verify --smoke failed")) << lines[1];
    EXPECT_NE(lines[1].find("scontrol update NodeName=gpu07 State=RESUME"), std::string::npos);
    // The record is what status --json shows: it reads back the same.
    c.sys.add_file(kUpgradeStatePath, upgrade_state_to_json_text(state));
    EXPECT_EQ(load_upgrade_state(c.sys)->events.size(), state.events.size());

    // status exits as for a failed run until a later apply speaks for the host.
    EXPECT_TRUE(upgrade_failed_since(state, ""));
    EXPECT_TRUE(upgrade_failed_since(state, state.events.front().at));
    EXPECT_FALSE(upgrade_failed_since(state, "9999-01-01T00:00:00Z"));
}

TEST(UpgradeStatus, ADoneUpgradePutTheNodeBack) {
    Cluster c;
    ASSERT_EQ(c.upgrade().status, StepStatus::done);
    const auto state = *load_upgrade_state(c.sys);
    const auto lines = upgrade_summary(state);
    EXPECT_NE(lines[0].find("done at "), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("gpu07: back in service"), std::string::npos) << lines[0];
    EXPECT_FALSE(upgrade_failed_since(state, ""));
}

TEST(Upgrade, NoSmokeIsKeptForTheRunAfterTheReboot) {
    Cluster c;
    c.apply_result = StepStatus::reboot_required;
    c.want_smoke = false;
    const UpgradeOptions no_smoke{.profile = "p", .smoke = false};
    (void)run_upgrade(c.sys, no_smoke, c.hooks(), [](const std::string&) {});
    c.sys.add_file("/proc/sys/kernel/random/boot_id", "boot-2\n");
    c.apply_result = StepStatus::done;
    const auto r = c.upgrade(); // the resume unit's command line has no --no-smoke
    EXPECT_EQ(r.status, StepStatus::done) << r.message;
    EXPECT_EQ(load_upgrade_state(c.sys)->events.at(5).message, "verify (--no-smoke) passed");
}

TEST(Upgrade, ApplyFailureStopsBeforeVerify) {
    Cluster c;
    c.apply_result = StepStatus::failed;
    const auto r = c.upgrade();
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_EQ(c.events.back(), "apply");
}

TEST(Upgrade, RebootThenTheResumedRunContinuesWithoutDrainingAgain) {
    Cluster c;
    c.apply_result = StepStatus::reboot_required;
    const auto first = c.upgrade();
    EXPECT_EQ(first.status, StepStatus::reboot_required);
    EXPECT_EQ(load_upgrade_state(c.sys)->phase, "rebooting");
    EXPECT_EQ(load_upgrade_state(c.sys)->events.back().boot_id, "boot-1");
    c.events.clear();
    c.sys.add_file("/proc/sys/kernel/random/boot_id", "boot-2\n");
    c.apply_result = StepStatus::done;
    const auto second = c.upgrade();
    EXPECT_EQ(second.status, StepStatus::done) << second.message;
    EXPECT_EQ(c.events, (Strings{"apply", "verify", "scontrol update NodeName=gpu07 State=RESUME",
                                 kKube + " uncordon gpu07"}));
    const auto state = load_upgrade_state(c.sys);
    bool resumed = false;
    for (const auto& e : state->events) {
        resumed = resumed || (e.event == "resumed" && e.boot_id == "boot-2" &&
                              e.message.find("boot-1 -> boot-2") != std::string::npos);
    }
    EXPECT_TRUE(resumed);
}

TEST(Upgrade, NoSchedulerNoDrainCommands) {
    Cluster c;
    c.slurm = false;
    c.kubectl = false;
    const auto r = c.upgrade();
    EXPECT_EQ(r.status, StepStatus::done);
    EXPECT_EQ(c.events, (Strings{"apply", "verify"}));
}

TEST(Upgrade, KubectlWithoutKubeconfigIsPassedOver) {
    Cluster c;
    c.slurm = false;
    c.sys.remove_file("/etc/kubernetes/admin.conf");
    std::vector<std::string> said;
    const UpgradeOptions opt{.profile = "p"};
    (void)run_upgrade(c.sys, opt, c.hooks(), [&](const std::string& l) { said.push_back(l); });
    EXPECT_EQ(c.events, (Strings{"apply", "verify"}));
    EXPECT_NE(join(said, "\n").find("no kubeconfig"), std::string::npos);
}

TEST(Upgrade, AFailedDrainStopsWithTheReason) {
    Cluster c;
    c.sys.on_command(
        {"scontrol", "update", "NodeName=gpu07", "State=DRAIN", "Reason=gpuprov upgrade"},
        CommandResult{.exit_code = 1, .err = "Invalid user for SlurmUser\n"});
    const auto r = c.upgrade();
    EXPECT_EQ(r.status, StepStatus::failed);
    EXPECT_NE(r.message.find("Invalid user"), std::string::npos) << r.message;
    EXPECT_EQ(std::count(c.events.begin(), c.events.end(), "apply"), 0);
}

TEST(ResumeUnit, AnUpgradeResumesAsAnUpgrade) {
    detail::ResumeCommand cmd{.gpuprov_path = "/usr/local/bin/gpuprov",
                              .profile = "/etc/gpuprov/resume/x.yaml",
                              .reboot_if_needed = true,
                              .upgrade = true};
    EXPECT_EQ(detail::resume_exec_start(cmd),
              "/usr/local/bin/gpuprov upgrade /etc/gpuprov/resume/x.yaml --yes --reboot if-needed");
}

} // namespace
