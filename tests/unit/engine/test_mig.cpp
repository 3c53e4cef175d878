// The mig step on a fake host whose nvidia-smi keeps MIG state the way the real one does: the
// mode change waits for a GPU reset when the GPU asks for one, GPU instances are listed in the
// real `nvidia-smi mig -lgi` layout, compute instances appear in `nvidia-smi -L`.
#include "host_builder.hpp"

#include <fmt/format.h>
#include <gpuprov/smi_mig.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

struct FakeMig {
    struct Gpu {
        bool current = false;
        bool pending = false;
        std::vector<std::string> gis; ///< profile names
        int cis = 0;
    };
    std::vector<Gpu> gpus;
    bool reset_needed = false; ///< -mig 1 stays pending (A100 with processes, or without reset)
    bool loaded = true;

    // Profile id → name for the A100 80GB boards the test host has (the matrix's ids).
    static std::string name_of(const std::string& id) {
        for (const auto& p : matrix().mig_profiles(0x20b2)) {
            if (std::to_string(p.id) == id || p.name == id) {
                return p.name;
            }
        }
        return {};
    }

    CommandResult handle(const Command& c) {
        CommandResult r;
        const auto& a = c.argv;
        if (!loaded) {
            r.exit_code = 9;
            r.out = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                    "driver.\n";
            return r;
        }
        if (a.size() == 3 && a[1] == "--query-gpu=index,mig.mode.current,mig.mode.pending") {
            for (std::size_t i = 0; i < gpus.size(); ++i) {
                r.out += fmt::format("{}, {}, {}\n", i, gpus[i].current ? "Enabled" : "Disabled",
                                     gpus[i].pending ? "Enabled" : "Disabled");
            }
            return r;
        }
        if (a.size() == 2 && a[1] == "-L") {
            for (std::size_t i = 0; i < gpus.size(); ++i) {
                r.out += fmt::format("GPU {}: NVIDIA A100-SXM4-80GB (UUID: GPU-{})\n", i, i);
                for (int d = 0; d < gpus[i].cis; ++d) {
                    r.out += fmt::format("  MIG {:<12}Device {:>2}: (UUID: MIG-{}-{})\n",
                                         gpus[i].gis[static_cast<std::size_t>(d)], d, i, d);
                }
            }
            return r;
        }
        if (a.size() == 5 && a[1] == "-i" && a[3] == "-mig") {
            auto& g = gpus[std::stoul(a[2])];
            g.pending = a[4] == "1";
            if (!reset_needed) {
                g.current = g.pending;
            }
            return r;
        }
        if (a.size() >= 5 && a[1] == "mig" && a[2] == "-i") {
            auto& g = gpus[std::stoul(a[3])];
            if (a[4] == "-lgi") {
                if (g.gis.empty()) {
                    r.exit_code = 6;
                    r.out = "No GPU instances found: Not Found\n";
                    return r;
                }
                r.out = "+----+\n| GPU instances: |\n|====|\n";
                for (std::size_t i = 0; i < g.gis.size(); ++i) {
                    r.out += fmt::format("|   {}  MIG {:<12} 19 {:>8}          {}:1     |\n", a[3],
                                         g.gis[i], i + 1, i);
                }
                return r;
            }
            if (a[4] == "-dci") {
                g.cis = 0;
                return r;
            }
            if (a[4] == "-dgi") {
                g.gis.clear();
                return r;
            }
            if (a[4] == "-cgi" && g.current) {
                for (const auto& id : split(a[5], ',')) {
                    g.gis.push_back(name_of(id));
                }
                g.cis = static_cast<int>(g.gis.size());
                return r;
            }
        }
        r.exit_code = 2;
        r.err = "unexpected " + display_argv(a);
        return r;
    }
};

Profile mig_profile(const std::string& mig) {
    return load_profile_text("name: mig-node\ndriver: {branch: \"580\"}\nmig: " + mig + "\n",
                             "mig.yaml", matrix());
}

struct MigStep : ::testing::Test {
    TestHost host{{.gpus = 2}};
    FakeMig smi;
    void SetUp() override {
        smi.gpus.resize(2);
        host.sys.on_command_prefix({"nvidia-smi"},
                                   [this](const Command& c) { return smi.handle(c); });
    }
    Strings commands(const CheckResult& r) { return targets(r, Change::Kind::command); }
};

const std::string kSeven = "{mode: enabled, layout: {all: [1g.10gb x7]}}";

TEST_F(MigStep, SkippedWithoutMig) {
    const auto p = load_profile_text("name: x\n", "x.yaml", matrix());
    StepRunner run(host, p);
    EXPECT_EQ(run.check("mig").status, StepStatus::skipped);
}

TEST_F(MigStep, PlansModeLayoutAndBootUnitWithProfileIds) {
    const auto p = mig_profile(kSeven);
    StepRunner run(host, p);
    const auto r = run.check("mig");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(
        commands(r),
        (Strings{"nvidia-smi -i 0 -mig 1", "nvidia-smi mig -i 0 -cgi 19,19,19,19,19,19,19 -C",
                 "nvidia-smi -i 1 -mig 1", "nvidia-smi mig -i 1 -cgi 19,19,19,19,19,19,19 -C"}));
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{"/etc/systemd/system/gpuprov-mig.service"});
}

TEST_F(MigStep, ApplyThenSatisfiedAndVerified) {
    const auto p = mig_profile(kSeven);
    StepRunner run(host, p);
    auto& step = run.step("mig");
    const auto planned = step.check(run.ctx(), host.sys);
    EXPECT_EQ(step.apply(run.ctx(), host.sys, planned, ApplyPhase::configure), StepStatus::done);
    EXPECT_EQ(smi.gpus[1].gis.size(), 7U);
    EXPECT_EQ(smi.gpus[1].cis, 7);
    const auto unit = host.sys.read_file("/etc/systemd/system/gpuprov-mig.service");
    ASSERT_TRUE(unit);
    EXPECT_TRUE(contains(*unit, "Before=kubelet.service slurmd.service containerd.service "
                                "docker.service\n"))
        << *unit;
    EXPECT_TRUE(contains(*unit, "ExecStart=/usr/bin/nvidia-smi -i 1 -mig 1\n"
                                "ExecStart=-/usr/bin/nvidia-smi mig -i 1 -dci\n"
                                "ExecStart=-/usr/bin/nvidia-smi mig -i 1 -dgi\n"
                                "ExecStart=/usr/bin/nvidia-smi mig -i 1 -cgi "
                                "19,19,19,19,19,19,19 -C\n"))
        << *unit;
    const auto again = step.check(run.ctx(), host.sys);
    EXPECT_TRUE(commands(again).empty());
    const auto checks = step.verify(run.ctx(), host.sys);
    ASSERT_EQ(checks.size(), 2U);
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    EXPECT_EQ(checks[0].found, "MIG enabled with 1g.10gb + 1g.10gb + 1g.10gb + 1g.10gb + 1g.10gb + "
                               "1g.10gb + 1g.10gb (7 MIG devices)");
}

TEST_F(MigStep, ChangedLayoutIsPlannedAsDestroyThenCreate) {
    for (auto& g : smi.gpus) {
        g.current = g.pending = true;
        g.gis = {"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"};
        g.cis = 4;
    }
    const auto p = mig_profile(kSeven);
    StepRunner run(host, p);
    const auto r = run.check("mig");
    EXPECT_EQ(r.status, StepStatus::pending);
    const auto cmds = commands(r);
    ASSERT_EQ(cmds.size(), 6U);
    EXPECT_EQ(Strings(cmds.begin(), cmds.begin() + 3),
              (Strings{"nvidia-smi mig -i 0 -dci", "nvidia-smi mig -i 0 -dgi",
                       "nvidia-smi mig -i 0 -cgi 19,19,19,19,19,19,19 -C"}));
    EXPECT_TRUE(contains(r.changes[2].detail, "has 3g.40gb + 2g.20gb + 1g.10gb + 1g.10gb (4 MIG "
                                              "devices), the profile wants 1g.10gb"))
        << r.changes[2].detail;
    // The live layout fails verify until applied.
    const auto checks = run.step("mig").verify(run.ctx(), host.sys);
    EXPECT_FALSE(checks[0].passed);
}

TEST_F(MigStep, GpuInstancesWithoutComputeInstancesAreNotTheLayout) {
    for (auto& g : smi.gpus) {
        g.current = g.pending = true;
        g.gis = Strings(7, "1g.10gb");
        g.cis = 0; // -cgi without -C
    }
    const auto p = mig_profile(kSeven);
    StepRunner run(host, p);
    const auto r = run.check("mig");
    EXPECT_EQ(r.status, StepStatus::pending);
    const auto cmds = commands(r);
    ASSERT_EQ(cmds.size(), 6U);
    EXPECT_EQ(cmds[0], "nvidia-smi mig -i 0 -dci");
    EXPECT_EQ(cmds[2], "nvidia-smi mig -i 0 -cgi 19,19,19,19,19,19,19 -C");
}

TEST_F(MigStep, PendingModeNeedsAResetAndTheBootUnitFinishesIt) {
    smi.reset_needed = true;
    const auto p = mig_profile(kSeven);
    StepRunner run(host, p);
    auto& step = run.step("mig");
    const auto planned = step.check(run.ctx(), host.sys);
    EXPECT_EQ(step.apply(run.ctx(), host.sys, planned, ApplyPhase::configure),
              StepStatus::reboot_required);
    EXPECT_TRUE(smi.gpus[0].gis.empty()); // no -cgi while the mode is only pending
    const auto r = step.check(run.ctx(), host.sys);
    ASSERT_FALSE(r.changes.empty());
    bool told = false;
    for (const auto& c : r.changes) {
        told = told || contains(c.detail, "GPU 0: MIG mode is pending enabled until the GPU is "
                                          "reset or the host reboots");
    }
    EXPECT_TRUE(told);
    EXPECT_TRUE(commands(r).empty()); // nothing to run until the reset
    const auto checks = step.verify(run.ctx(), host.sys);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_TRUE(contains(checks[0].found, "pending a GPU reset")) << checks[0].found;
}

TEST_F(MigStep, DriverNotLoadedLeavesTheLayoutToTheBootUnit) {
    smi.loaded = false;
    const auto p = mig_profile(kSeven);
    StepRunner run(host, p);
    const auto r = run.check("mig");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_TRUE(commands(r).empty());
    EXPECT_EQ(targets(r, Change::Kind::file), Strings{"/etc/systemd/system/gpuprov-mig.service"});
}

TEST_F(MigStep, ModeDisabledTurnsMigOff) {
    smi.gpus[1].current = smi.gpus[1].pending = true;
    const auto p = mig_profile("{mode: disabled}");
    StepRunner run(host, p);
    const auto r = run.check("mig");
    EXPECT_EQ(commands(r), Strings{"nvidia-smi -i 1 -mig 0"});
    EXPECT_TRUE(targets(r, Change::Kind::file).empty());
}

TEST_F(MigStep, OnlyTheNamedGpuIsManaged) {
    const auto p = mig_profile("{layout: {\"1\": [3g.40gb x2]}}");
    StepRunner run(host, p);
    EXPECT_EQ(commands(run.check("mig")),
              (Strings{"nvidia-smi -i 1 -mig 1", "nvidia-smi mig -i 1 -cgi 9,9 -C"}));
}

} // namespace
