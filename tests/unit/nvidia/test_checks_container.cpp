// verify's container checks: the engine, CDI and a container that really sees the GPUs.
#include "nvidia_test_util.hpp"

#include <gpuprov/strings.hpp>

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

// Debian 12's docker.io 20.10.24+dfsg1 and `nvidia-smi -L` as NVIDIA's driver prints it.
constexpr const char* kDockerd = "Docker version 20.10.24+dfsg1, build 297e128\n";
constexpr const char* kSmiL =
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-3a2c2f4e-2f1b-7c55-9d2e-2b1d3c4e5f60)\n"
    "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-8b1e0d9c-4a5f-2e11-8c7d-6f5e4d3c2b1a)\n";
const std::vector<std::string> kImageLs = {"docker",
                                           "image",
                                           "ls",
                                           "--filter",
                                           "reference=nvidia/cuda",
                                           "--format",
                                           "{{.Repository}}:{{.Tag}}"};
const std::string kImage = "nvidia/cuda:12.4.1-base-ubuntu22.04";

struct Host {
    FakeSystem sys;
    HostFacts facts = debian_facts();
    Profile profile = driver_profile("550", "12.4");
    Host() {
        profile.container = ContainerSpec{.toolkit = true, .runtime = "docker"};
        facts.gpus.resize(2);
        sys.on_command({"nvidia-ctk", "--version"},
                       answer_ok("NVIDIA Container Toolkit CLI version 1.17.3\n"));
        sys.add_file("/etc/docker/daemon.json", read_fixture("cmd/files/docker-daemon.json"));
        sys.on_command({"dockerd", "--version"}, answer_ok(kDockerd));
        sys.on_command(kImageLs, answer_ok("")); // the daemon answers, no image
    }
    std::vector<CheckOutcome> run() const {
        return check_container_toolkit({profile, facts, Matrix::builtin()}, sys);
    }
    CheckOutcome one(std::string_view id) const {
        const auto all = run();
        const auto* c = find_check(all, id);
        return c == nullptr ? CheckOutcome{.id = "<missing>"} : *c;
    }
};

} // namespace

TEST(CheckContainerEngine, MissingDockerFailsWithTheFix) {
    Host h;
    h.sys.on_command({"dockerd", "--version"}, answer_missing());
    const auto all = h.run();
    // The engine comes before the runtime config: it is the first thing to fix.
    EXPECT_EQ(ids_of(all), (std::vector<std::string>{"container.nvidia-ctk", "container.engine",
                                                     "container.runtime", "container.gpu-run"}));
    const auto* c = find_check(all, "container.engine");
    EXPECT_FALSE(c->passed);
    EXPECT_FALSE(all_passed(all));
    EXPECT_EQ(c->found, "no dockerd: docker is not installed, so containers cannot run");
    EXPECT_TRUE(contains(c->fix, "container.engine: docker.io"));
    EXPECT_TRUE(contains(c->fix, "podman"));
    // No engine: nothing to run a container with, and no second failure for the same cause.
    EXPECT_EQ(find_check(all, "container.gpu-run")->found,
              "skipped: no engine to run it (container.engine failed)");

    h.profile.container->engine = "docker.io";
    EXPECT_TRUE(
        contains(h.one("container.engine").fix, "--only container-toolkit (installs docker.io)"));
}

TEST(CheckContainerEngine, ContainerdAndDockerAnswer) {
    Host h;
    h.sys.on_command({"dockerd", "--version"}, answer_ok(kDockerd));
    const auto docker = h.one("container.engine");
    EXPECT_TRUE(docker.passed);
    EXPECT_EQ(docker.found, "Docker version 20.10.24+dfsg1, build 297e128");

    h.profile.container->runtime = "containerd";
    h.sys.on_command({"containerd", "--version"}, answer_missing());
    const auto containerd = h.one("container.engine");
    EXPECT_FALSE(containerd.passed);
    EXPECT_EQ(containerd.command, "containerd --version");
}

TEST(CheckContainerCdi, SpecFileAndListedDevices) {
    Host h;
    h.profile.container->cdi = true;
    EXPECT_EQ(h.one("container.cdi").found, "no /etc/cdi/nvidia.yaml");
    h.sys.add_file("/etc/cdi/nvidia.yaml", "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n");
    h.sys.on_command({"nvidia-ctk", "cdi", "list"},
                     answer_ok("nvidia.com/gpu=0\nnvidia.com/gpu=all\n"));
    EXPECT_TRUE(h.one("container.cdi").passed);
    h.sys.on_command({"nvidia-ctk", "cdi", "list"}, answer_ok(""));
    EXPECT_FALSE(h.one("container.cdi").passed);
    h.profile.container->cdi = false;
    EXPECT_EQ(h.one("container.cdi").id, "<missing>");
}

TEST(CheckContainerRun, RunsTheNamedImageOnTheGpus) {
    Host h;
    h.profile.container->test_image = kImage;
    h.sys.on_command({"docker", "image", "inspect", "--format", "{{.Id}}", kImage},
                     answer_ok("sha256:4f1b2c\n"));
    h.sys.on_command({"docker", "run", "--rm", "--gpus", "all", kImage, "nvidia-smi", "-L"},
                     answer_ok(kSmiL));
    const auto c = h.one("container.gpu-run");
    EXPECT_TRUE(c.passed) << c.found;
    EXPECT_EQ(c.found, "2 of the host's 2 GPU(s) visible in " + kImage);
    EXPECT_EQ(c.command, "docker run --rm --gpus all " + kImage + " nvidia-smi -L");

    // The runtime is not wired: docker's own error, and a failure.
    h.sys.on_command({"docker", "run", "--rm", "--gpus", "all", kImage, "nvidia-smi", "-L"},
                     answer_failed(125, "docker: Error response from daemon: could not select "
                                        "device driver \"\" with capabilities: [[gpu]].\n"));
    const auto broken = h.one("container.gpu-run");
    EXPECT_FALSE(broken.passed);
    EXPECT_TRUE(contains(broken.excerpt, "could not select device driver"));
}

TEST(CheckContainerRun, NeverPullsAMissingImage) {
    Host h;
    h.profile.container->test_image = kImage;
    h.sys.on_command({"docker", "image", "inspect", "--format", "{{.Id}}", kImage},
                     answer_failed(1, "Error: No such image: " + kImage + "\n"));
    const auto c = h.one("container.gpu-run");
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.fix, "docker pull " + kImage + " (verify never pulls)");
    for (const auto& argv : h.sys.queries) {
        EXPECT_TRUE(std::find(argv.begin(), argv.end(), "pull") == argv.end());
        EXPECT_TRUE(std::find(argv.begin(), argv.end(), "run") == argv.end());
    }
}

TEST(CheckContainerRun, ALocalCudaImageIsUsedWhenNoneIsNamed) {
    Host h;
    h.sys.on_command(kImageLs, answer_ok("<none>:<none>\nnvidia/cuda:12.2.2-base-ubuntu22.04\n"));
    h.sys.on_command({"docker", "run", "--rm", "--gpus", "all",
                      "nvidia/cuda:12.2.2-base-ubuntu22.04", "nvidia-smi", "-L"},
                     answer_ok(kSmiL));
    EXPECT_TRUE(h.one("container.gpu-run").passed);

    h.sys.on_command(kImageLs, answer_ok(""));
    const auto none = h.one("container.gpu-run");
    EXPECT_FALSE(none.passed); // a skipped run is never a pass...
    EXPECT_TRUE(none.skipped);
    EXPECT_FALSE(failed(none)); // ...nor a failure
    EXPECT_TRUE(starts_with(none.found, "skipped: no container.test_image"));

    h.sys.on_command(
        kImageLs, answer_failed(1, "Cannot connect to the Docker daemon at "
                                   "unix:///var/run/docker.sock. Is the docker daemon running?\n"));
    const auto down = h.one("container.gpu-run");
    EXPECT_FALSE(down.passed);
    EXPECT_EQ(down.fix, "systemctl start docker (and see journalctl -u docker)");
}

TEST(CheckContainerRun, SkippedWithoutAGpuOrWithoutDocker) {
    Host h;
    h.profile.container->test_image = kImage;
    h.facts.gpus.clear();
    const auto c = h.one("container.gpu-run");
    EXPECT_TRUE(starts_with(c.found, "skipped: no NVIDIA GPU"));
    EXPECT_TRUE(c.skipped);
    EXPECT_FALSE(c.passed);
    EXPECT_TRUE(h.sys.queries.empty() ||
                std::none_of(h.sys.queries.begin(), h.sys.queries.end(),
                             [](const auto& a) { return a[0] == "docker"; }));
    h.facts.gpus.resize(1);
    h.profile.container->runtime = "containerd";
    h.sys.on_command({"containerd", "--version"}, answer_missing());
    EXPECT_EQ(h.one("container.gpu-run").found,
              "skipped: the GPU run test uses docker; container.runtime is containerd");
}
