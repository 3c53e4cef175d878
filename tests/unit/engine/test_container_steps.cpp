// container-toolkit's engine, CDI and runtime-config merge (docs/containers.md): the engine
// from the distro or blocked with the fix, a daemon.json nvidia-ctk cannot merge into blocks,
// and a `runtime configure` that replaced settings instead of merging is undone.
#include "container_engine.hpp"
#include "host_builder.hpp"

#include <gpuprov/error.hpp>
#include <nlohmann/json.hpp>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using Strings = std::vector<std::string>;

namespace {

const std::string kDaemonJson = "/etc/docker/daemon.json";
// An admin's daemon.json with settings of its own (and a runtime of its own).
const std::string kAdminDaemon = R"({
    "data-root": "/srv/docker",
    "log-driver": "journald",
    "runtimes": {
        "runsc": {
            "path": "/usr/local/bin/runsc"
        }
    }
})";

struct ContainerSteps : ::testing::Test {
    Profile profile = load_test_profile();
};

bool has_install(const CheckResult& r, const std::string& spec) {
    const auto all = specs(r.installs);
    return std::find(all.begin(), all.end(), spec) != all.end();
}

} // namespace

TEST_F(ContainerSteps, DockerIoComesFromTheDistroUnpinned) {
    profile.container->engine = "docker.io";
    TestHost host;
    {
        StepRunner run(host, profile);
        const auto r = run.check("container-toolkit");
        EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
        EXPECT_TRUE(has_install(r, "docker.io")) << ::testing::PrintToString(specs(r.installs));
    }
    host.set_package("docker.io", "20.10.24+dfsg1-1+deb12u1");
    StepRunner run(host, profile);
    EXPECT_FALSE(has_install(run.check("container-toolkit"), "docker.io"));
}

TEST_F(ContainerSteps, NoEngineInstallsNone) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    for (const auto& p : r.installs) {
        EXPECT_TRUE(p.name.find("container") != std::string::npos) << p.name;
        EXPECT_NE(p.name, "containerd");
    }
}

// container: {toolkit: true, runtime: docker} without Docker and without container.engine: apply
// would install the toolkit, configure a runtime for nothing and fail verify. The plan knows.
TEST_F(ContainerSteps, NoDockerAndNoEngineToInstallBlocksAtPlanWithTheFix) {
    ASSERT_EQ(profile.container->engine, "none");
    TestHost host({.docker = false});
    host.sys.remove_file("/usr/bin/containerd");
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked) << r.reason;
    EXPECT_TRUE(contains(r.reason, "docker is not installed on this host")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "Install Docker first")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "container.engine: docker.io (the distro's) or docker-ce"))
        << r.reason;
    EXPECT_FALSE(contains(r.reason, "container.runtime: containerd")) << r.reason;
    EXPECT_TRUE(r.installs.empty());

    // containerd is here: that runtime is offered too.
    host.sys.add_file("/usr/bin/containerd", "ELF");
    StepRunner again(host, profile);
    EXPECT_TRUE(contains(again.check("container-toolkit").reason,
                         "or set container.runtime: containerd (containerd is installed here)"));
}

TEST_F(ContainerSteps, NoDockerIsFineWhenTheProfileInstallsTheEngine) {
    profile.container->engine = "docker.io";
    TestHost host({.docker = false});
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending) << r.reason;
    EXPECT_TRUE(has_install(r, "docker.io"));
}

TEST_F(ContainerSteps, AnyRuntimesMissingDaemonBlocksAndApplyChangesNothing) {
    profile.container->runtime = "crio";
    TestHost host;
    const auto plan_reason = [&] {
        StepRunner run(host, profile);
        return run.check("container-toolkit").reason;
    }();
    EXPECT_TRUE(contains(plan_reason, "crio is not installed")) << plan_reason;
    EXPECT_TRUE(contains(plan_reason, "https://cri-o.io")) << plan_reason;

    // Through apply: blocked before anything changes, no toolkit installed.
    profile.container->runtime = "docker";
    TestHost bare({.docker = false});
    bare.sys.remove_file("/usr/bin/containerd");
    RecordingReporter reporter;
    const auto r = apply_profile(bare.sys, profile, matrix(),
                                 ApplyOptions{.profile_arg = kProfileArg}, reporter);
    ASSERT_EQ(r.status, StepStatus::failed) << r.message;
    EXPECT_TRUE(contains(r.message, "step 'container-toolkit' is blocked")) << r.message;
    EXPECT_TRUE(bare.ran({"apt-get", "install"}).empty());
    EXPECT_TRUE(bare.ran({"nvidia-ctk"}).empty());
}

// apply restarts a running engine after `nvidia-ctk runtime configure`; the plan shows it, with
// what it does to the containers running in it.
TEST_F(ContainerSteps, TheRestartOfARunningDockerIsInThePlanWithItsConsequence) {
    TestHost host;
    host.sys.on_command({"systemctl", "is-active", "--quiet", "docker"}, CommandResult{});
    host.sys.on_command({"systemctl", "restart", "docker"}, CommandResult{});
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    // After the repository's index refresh: configure, then the restart.
    const auto commands = targets(r, Change::Kind::command);
    ASSERT_GE(commands.size(), 2u) << ::testing::PrintToString(commands);
    EXPECT_EQ(commands[commands.size() - 2], "nvidia-ctk runtime configure --runtime=docker");
    EXPECT_EQ(commands.back(), "systemctl restart docker");
    std::string why;
    for (const auto& c : r.changes) {
        why += c.target == "systemctl restart docker" ? c.detail : "";
    }
    EXPECT_TRUE(contains(why, "STOPS EVERY RUNNING CONTAINER")) << why;
    EXPECT_TRUE(contains(why, "\"live-restore\": true")) << why;

    // What the plan showed is what apply does.
    (void)run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
    EXPECT_EQ(host.ran({"systemctl", "restart", "docker"}).size(), 1u);
}

TEST_F(ContainerSteps, WithLiveRestoreThePlanSaysContainersKeepRunning) {
    TestHost host;
    host.sys.add_file(kDaemonJson, "{\"live-restore\": true}\n");
    host.sys.on_command({"systemctl", "is-active", "--quiet", "docker"}, CommandResult{});
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    std::string why;
    for (const auto& c : r.changes) {
        why += c.target == "systemctl restart docker" ? c.detail : "";
    }
    EXPECT_TRUE(contains(why, "running containers keep running")) << why;
    EXPECT_FALSE(contains(why, "STOPS")) << why;
}

TEST_F(ContainerSteps, AStoppedEngineIsNotRestartedAndThePlanSaysNothingOfIt) {
    TestHost host; // its systemctl says docker is not active
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    const auto commands = targets(r, Change::Kind::command);
    ASSERT_FALSE(commands.empty());
    EXPECT_EQ(commands.back(), "nvidia-ctk runtime configure --runtime=docker");
    for (const auto& c : commands) {
        EXPECT_FALSE(contains(c, "restart")) << c;
    }
    (void)run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
    EXPECT_TRUE(host.ran({"systemctl", "restart"}).empty());
}

TEST_F(ContainerSteps, AnEngineThisStepInstallsMayBeRestartedAndThePlanSaysWhen) {
    profile.container->engine = "docker.io";
    TestHost host({.docker = false});
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    std::string why;
    for (const auto& c : r.changes) {
        why += c.target == "systemctl restart docker" ? c.detail : "";
    }
    EXPECT_TRUE(contains(why, "only if docker runs after its install")) << why;
    EXPECT_TRUE(contains(why, "no container runs in it yet")) << why;
}

TEST_F(ContainerSteps, ADaemonJsonNvidiaCtkCannotMergeIntoBlocksWithItsPosition) {
    TestHost host;
    host.sys.add_file(kDaemonJson, "{\n    \"log-driver\": \"journald\",\n}\n");
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "/etc/docker/daemon.json:3:1: not valid JSON")) << r.reason;
    EXPECT_TRUE(contains(r.reason, "fix the file")) << r.reason;
}

TEST_F(ContainerSteps, CdiSpecPlannedAndGenerated) {
    profile.container->cdi = true;
    TestHost host;
    host.converge();
    converge_config(host);
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_EQ(r.status, StepStatus::pending);
    EXPECT_EQ(targets(r, Change::Kind::command),
              Strings{"nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"});
    host.sys.on_command({"nvidia-ctk", "cdi", "generate", "--output=/etc/cdi/nvidia.yaml"},
                        CommandResult{});
    EXPECT_EQ(run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
              StepStatus::done);
    EXPECT_EQ(host.sys.commands_ran.back(),
              (Strings{"nvidia-ctk", "cdi", "generate", "--output=/etc/cdi/nvidia.yaml"}));

    // Without the driver loaded NVML cannot list the GPUs: the failure says so.
    host.sys.on_command({"nvidia-ctk", "cdi", "generate", "--output=/etc/cdi/nvidia.yaml"},
                        CommandResult{.exit_code = 1,
                                      .err = "ERRO[0000] failed to generate CDI spec: failed to "
                                             "initialize NVML: ERROR_LIBRARY_NOT_FOUND\n"});
    try {
        (void)run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
        ADD_FAILURE() << "no error";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "ERROR_LIBRARY_NOT_FOUND")) << e.what();
        EXPECT_TRUE(contains(e.what(), "loaded driver")) << e.what();
    }
}

// nvidia-ctk as it really behaves: the nvidia runtime added, everything else kept.
TEST_F(ContainerSteps, RuntimeConfigureKeepsTheAdminsSettings) {
    TestHost host;
    host.sys.add_file(kDaemonJson, kAdminDaemon);
    host.sys.on_command_prefix({"nvidia-ctk", "runtime", "configure"}, [&](const Command&) {
        auto doc = nlohmann::json::parse(*host.sys.read_file(kDaemonJson));
        doc["runtimes"]["nvidia"] = {{"args", nlohmann::json::array()},
                                     {"path", "nvidia-container-runtime"}};
        host.sys.add_file(kDaemonJson, doc.dump(4) + "\n");
        return CommandResult{};
    });
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    (void)run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
    const auto doc = nlohmann::json::parse(*host.sys.read_file(kDaemonJson));
    EXPECT_EQ(doc["data-root"], "/srv/docker");
    EXPECT_EQ(doc["log-driver"], "journald");
    EXPECT_EQ(doc["runtimes"]["runsc"]["path"], "/usr/local/bin/runsc");
    EXPECT_EQ(doc["runtimes"]["nvidia"]["path"], "nvidia-container-runtime");
}

// A toolkit that wrote its own file over the admin's: the original goes back and apply fails.
TEST_F(ContainerSteps, ARuntimeConfigureThatOverwroteIsUndone) {
    TestHost host;
    host.sys.add_file(kDaemonJson, kAdminDaemon);
    // TestHost's nvidia-ctk writes the bare fixture: exactly the overwrite to catch.
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    try {
        (void)run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure);
        ADD_FAILURE() << "no error";
    } catch (const HostError& e) {
        EXPECT_TRUE(contains(e.what(), "data-root, log-driver, runtimes.runsc lost")) << e.what();
        EXPECT_TRUE(contains(e.what(), "wrote the original back")) << e.what();
    }
    EXPECT_EQ(*host.sys.read_file(kDaemonJson), kAdminDaemon);
}

// Issue 26 item 7: daemon.json is a link to the admin's 0600 file (it may hold registry
// credentials). The original goes back with that file's mode, never the link's 0777.
TEST_F(ContainerSteps, AnUndoneOverwriteThroughALinkKeepsTheFilesMode) {
    TestHost host;
    const std::string real = "/etc/docker/conf.d/daemon.json";
    host.sys.add_file(real, kAdminDaemon);
    host.sys.set_mode(real, 0600);
    host.sys.add_link(kDaemonJson, real);
    // nvidia-ctk writes through the link, over the admin's settings.
    host.sys.on_command_prefix({"nvidia-ctk", "runtime", "configure"}, [&](const Command&) {
        host.sys.add_file(real, read_fixture("cmd/files/docker-daemon.json"));
        return CommandResult{};
    });
    StepRunner run(host, profile);
    const auto r = run.check("container-toolkit");
    EXPECT_THROW(
        (void)run.step("container-toolkit").apply(run.ctx(), host.sys, r, ApplyPhase::configure),
        HostError);
    EXPECT_EQ(*host.sys.read_file(kDaemonJson), kAdminDaemon);
    EXPECT_EQ(host.sys.lstat(kDaemonJson)->mode & 07777, 0600u);
}

TEST(LostSettings, JsonKeysRuntimesAndTheDefaultRuntime) {
    const std::string before = R"({"default-runtime": "runc", "runtimes": {"runsc": {}},
                                   "log-opts": {"max-size": "10m"}})";
    EXPECT_TRUE(steps::lost_settings("docker", before, R"({"default-runtime": "nvidia",
        "runtimes": {"runsc": {}, "nvidia": {}}, "log-opts": {"max-size": "10m"}})")
                    .empty());
    EXPECT_EQ(steps::lost_settings("docker", before,
                                   R"({"default-runtime": "runc", "runtimes": {"nvidia": {}},
                                       "log-opts": {"max-size": "1m"}})"),
              (Strings{"log-opts (changed)", "runtimes.runsc"}));
    EXPECT_EQ(steps::lost_settings("docker", before, "garbage"),
              Strings{"the whole file (no longer a JSON object)"});
}

TEST(LostSettings, ContainerdTablesSurviveReformatting) {
    const std::string before = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n"
                               "  sandbox_image = \"registry.k8s.io/pause:3.9\"\n"
                               "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n";
    const std::string merged = "imports = [\"/etc/containerd/conf.d/*.toml\"]\nversion = 2\n\n"
                               "[plugins]\n\n  [plugins.'io.containerd.grpc.v1.cri']\n"
                               "    sandbox_image = \"registry.k8s.io/pause:3.9\"\n"
                               "  [ plugins.\"io.containerd.grpc.v1.cri\".registry ]\n";
    EXPECT_TRUE(steps::lost_settings("containerd", before, merged).empty());
    EXPECT_EQ(steps::lost_settings("containerd", before, "version = 2\n"),
              (Strings{"[plugins.io.containerd.grpc.v1.cri]",
                       "[plugins.io.containerd.grpc.v1.cri.registry]"}));
}

// A container-only profile names no CUDA repository: cuda-repo has nothing to do (it used to
// block the whole plan, so such a profile needed `steps: {skip: [cuda-repo]}`).
TEST_F(ContainerSteps, AProfileWithoutACudaRepositorySkipsCudaRepo) {
    profile.repositories.erase("cuda");
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("cuda-repo");
    EXPECT_EQ(r.status, StepStatus::skipped) << r.reason;
    EXPECT_NE(r.reason.find("repositories.cuda"), std::string::npos) << r.reason;
    EXPECT_TRUE(r.changes.empty());
    EXPECT_EQ(run.check("container-toolkit").status, StepStatus::pending);
}
