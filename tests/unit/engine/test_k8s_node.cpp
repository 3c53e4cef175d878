// Kubernetes node mode (profile `kubernetes:`): the container-toolkit step makes nvidia the
// default runtime of containerd / CRI-O, or only adds it for a RuntimeClass, and verify proves
// the default from the drop-in nvidia-ctk writes.
#include "host_builder.hpp"
#include "kubernetes_node.hpp"

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kContainerdDropin = "/etc/containerd/conf.d/99-nvidia.toml";

// What `nvidia-ctk runtime configure --runtime=containerd [--set-as-default]` writes there
// (containerd config version 2; the default line only with --set-as-default).
std::string containerd_dropin(bool as_default, const std::string& prefix = "") {
    return "version = 2\n\n[plugins]\n\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n\n"
           "    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n" +
           (as_default ? "      " + prefix + "default_runtime_name = \"nvidia\"\n" : "") +
           "\n      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
           "        runtime_type = \"io.containerd.runc.v2\"\n\n"
           "        [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n"
           "          BinaryName = \"/usr/bin/nvidia-container-runtime\"\n";
}

struct K8sNode : ::testing::Test {
    Profile profile = node_profile("default");

    static Profile node_profile(const std::string& runtime_class) {
        auto p = load_test_profile();
        p.container = ContainerSpec{.toolkit = true, .runtime = "containerd"};
        p.kubernetes = KubernetesSpec{.node = true, .runtime_class = runtime_class};
        return p;
    }
    static void converge(TestHost& host) {
        host.converge();
        converge_config(host);
    }
};

TEST_F(K8sNode, PlanMakesNvidiaContainerdsDefaultRuntime) {
    TestHost host;
    converge(host);
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{"nvidia-ctk runtime configure --runtime=containerd --set-as-default"});
    ASSERT_EQ(r.changes.size(), 1U);
    EXPECT_TRUE(contains(r.changes[0].detail, "make nvidia the default runtime of containerd"))
        << r.changes[0].detail;
}

TEST_F(K8sNode, ARuntimeAddedWithoutDefaultIsStillPending) {
    TestHost host;
    converge(host);
    host.sys.add_file(kContainerdDropin, containerd_dropin(false));
    StepRunner run(host, profile);
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::pending);
    // A commented-out default is no default either.
    host.sys.add_file(kContainerdDropin, containerd_dropin(true, "# "));
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::pending);
    host.sys.add_file(kContainerdDropin, containerd_dropin(true));
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::satisfied);
}

TEST_F(K8sNode, RuntimeClassModeOnlyAddsTheRuntime) {
    profile = node_profile("nvidia");
    TestHost host;
    converge(host);
    StepRunner run(host, profile);
    auto r = run.check("container-toolkit");
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{"nvidia-ctk runtime configure --runtime=containerd"});
    host.sys.add_file(kContainerdDropin, containerd_dropin(false));
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::satisfied);
    EXPECT_TRUE(steps::check_kubernetes_node(profile, host.sys).empty());
}

TEST_F(K8sNode, VerifyProvesTheDefaultFromTheDropin) {
    TestHost host;
    converge(host);
    host.sys.add_file(kContainerdDropin, containerd_dropin(false));
    auto checks = steps::check_kubernetes_node(profile, host.sys);
    ASSERT_EQ(checks.size(), 1U);
    EXPECT_EQ(checks[0].id, "kubernetes.default-runtime");
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[0].command, kContainerdDropin);
    EXPECT_TRUE(contains(checks[0].fix, "nvidia-ctk runtime configure --runtime=containerd "
                                        "--set-as-default && sudo systemctl restart containerd"))
        << checks[0].fix;
    host.sys.add_file(kContainerdDropin, containerd_dropin(true));
    checks = steps::check_kubernetes_node(profile, host.sys);
    ASSERT_EQ(checks.size(), 1U);
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    // The step's own verify carries it.
    StepRunner run(host, profile);
    const auto all = run.step("container-toolkit").verify(run.ctx(), host.sys);
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const CheckOutcome& c) {
        return c.id == "kubernetes.default-runtime" && c.passed;
    }));
}

TEST_F(K8sNode, CrioDefaultIsReadFromItsOwnDropin) {
    EXPECT_FALSE(steps::nvidia_is_default_runtime(TestHost().sys, "crio"));
    TestHost host;
    // containerd's key in CRI-O's file is not CRI-O's default.
    host.sys.add_file("/etc/crio/conf.d/99-nvidia.toml",
                      "[crio.runtime]\ndefault_runtime_name = \"nvidia\"\n");
    EXPECT_FALSE(steps::nvidia_is_default_runtime(host.sys, "crio"));
    host.sys.add_file("/etc/crio/conf.d/99-nvidia.toml",
                      "[crio]\n  [crio.runtime]\n    default_runtime = \"nvidia\"\n");
    EXPECT_TRUE(steps::nvidia_is_default_runtime(host.sys, "crio"));
    EXPECT_FALSE(steps::nvidia_is_default_runtime(host.sys, "containerd"));
    EXPECT_FALSE(steps::nvidia_is_default_runtime(host.sys, "docker"));
}

TEST_F(K8sNode, ApplyRunsTheConfigureWithSetAsDefault) {
    TestHost host;
    converge(host);
    std::vector<std::string> ran;
    host.sys.on_command_prefix({"nvidia-ctk", "runtime", "configure"}, [&](const Command& c) {
        ran.push_back(display_argv(c.argv));
        host.sys.add_file(kContainerdDropin,
                          containerd_dropin(std::find(c.argv.begin(), c.argv.end(),
                                                      "--set-as-default") != c.argv.end()));
        return CommandResult{};
    });
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(ran, Strings{"nvidia-ctk runtime configure --runtime=containerd --set-as-default"});
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::satisfied);
}

} // namespace
