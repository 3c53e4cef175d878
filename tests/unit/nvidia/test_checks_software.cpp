#include "nvidia_test_util.hpp"

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

const std::vector<std::string> kLdconfig = {"/sbin/ldconfig", "-p"};
const std::vector<std::string> kNvcc = {"/usr/local/cuda-12.2/bin/nvcc", "--version"};

struct SoftwareHost {
    FakeSystem sys;
    HostFacts facts = debian_facts();
    Profile profile = driver_profile("535", "12.2");
    std::vector<CheckOutcome> run(decltype(&check_cuda_toolkit) fn) const {
        return fn({profile, facts, Matrix::builtin()}, sys);
    }
};

} // namespace

TEST(CheckCuda, NvccAndVersionJsonAgree) {
    SoftwareHost h;
    h.sys.on_command(kNvcc, answer_ok(read_fixture("cmd/nvcc/cuda-12.2.txt")));
    h.sys.add_file("/usr/local/cuda-12.2/version.json",
                   read_fixture("cmd/files/cuda-12.2-version.json"));
    const auto checks = h.run(check_cuda_toolkit);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    EXPECT_EQ(checks[0].found, "release 12.2, V12.2.140");
    EXPECT_TRUE(checks[1].passed) << checks[1].found;
    EXPECT_EQ(checks[1].found, "12.2.2");
}

TEST(CheckCuda, WrongReleaseAndMissingToolkit) {
    SoftwareHost h;
    h.sys.on_command(kNvcc, answer_ok(read_fixture("cmd/nvcc/cuda-12.4.txt")));
    auto checks = h.run(check_cuda_toolkit);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[1].found, "missing");
    EXPECT_FALSE(checks[1].passed);

    h.sys.on_command(kNvcc, answer_missing());
    checks = h.run(check_cuda_toolkit);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[0].found, "not installed (command not found)");
    EXPECT_NE(checks[0].fix.find("--only cuda-toolkit"), std::string::npos);
}

TEST(CheckCudnn, Cudnn8HeaderAndLibrary) {
    SoftwareHost h;
    h.profile.cudnn = CudnnSpec{.version = "8.9"};
    h.sys.add_file("/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",
                   read_fixture("cmd/files/cudnn_version-8.9.4.h"));
    h.sys.on_command(kLdconfig, answer_ok(read_fixture("cmd/ldconfig/cudnn8-nccl-full.txt")));
    const auto checks = h.run(check_cudnn);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    EXPECT_EQ(checks[0].found, "8.9.4");
    EXPECT_TRUE(checks[1].passed) << checks[1].found;
    EXPECT_EQ(checks[1].found, "/lib/x86_64-linux-gnu/libcudnn.so.8");
}

TEST(CheckCudnn, Cudnn9HeaderButNoMainLibraryInCache) {
    SoftwareHost h;
    h.profile.cudnn = CudnnSpec{.version = "9"};
    h.sys.add_file("/usr/include/cudnn_version.h", read_fixture("cmd/files/cudnn_version-9.2.0.h"));
    h.sys.on_command(kLdconfig, answer_ok(read_fixture("cmd/ldconfig/cudnn9-grep.txt")));
    const auto checks = h.run(check_cudnn);
    EXPECT_TRUE(checks[0].passed);
    EXPECT_FALSE(checks[1].passed);
    EXPECT_EQ(checks[1].found, "absent");
}

TEST(CheckCudnn, WrongMinor) {
    SoftwareHost h;
    h.profile.cudnn = CudnnSpec{.version = "8.6"};
    h.sys.add_file("/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",
                   read_fixture("cmd/files/cudnn_version-8.9.4.h"));
    h.sys.on_command(kLdconfig, answer_ok(read_fixture("cmd/ldconfig/cudnn8-nccl-full.txt")));
    EXPECT_FALSE(h.run(check_cudnn)[0].passed);
}

TEST(CheckNccl, PackageBuiltForProfileCudaMajor) {
    SoftwareHost h;
    h.profile.nccl = true;
    h.sys.on_command(kLdconfig, answer_ok(read_fixture("cmd/ldconfig/nccl-grep.txt")));
    h.sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnccl2"},
                     answer_ok(read_fixture("cmd/dpkg/query-libnccl2.txt")));
    auto checks = h.run(check_nccl);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_TRUE(checks[0].passed);
    EXPECT_TRUE(checks[1].passed) << checks[1].found;
    EXPECT_EQ(checks[1].found, "2.22.3-1+cuda12.2");

    h.profile.cuda = CudaSpec{.version = "13.0"};
    checks = h.run(check_nccl);
    EXPECT_FALSE(checks[1].passed);
    EXPECT_EQ(checks[1].expected, "libnccl2 built for +cuda13.x");
}

TEST(CheckContainer, DockerDaemonJsonFromNvidiaCtk) {
    SoftwareHost h;
    h.profile.container = ContainerSpec{.toolkit = true, .runtime = "docker"};
    h.sys.on_command({"nvidia-ctk", "--version"},
                     answer_ok("NVIDIA Container Toolkit CLI version 1.19.1\n"));
    h.sys.add_file("/etc/docker/daemon.json", read_fixture("cmd/files/docker-daemon.json"));
    h.sys.on_command({"dockerd", "--version"},
                     answer_ok("Docker version 20.10.24+dfsg1, build 297e128\n"));
    auto checks = h.run(check_container_toolkit);
    ASSERT_NE(find_check(checks, "container.runtime"), nullptr);
    EXPECT_TRUE(find_check(checks, "container.nvidia-ctk")->passed);
    EXPECT_TRUE(find_check(checks, "container.runtime")->passed)
        << find_check(checks, "container.runtime")->found;

    h.sys.add_file("/etc/docker/daemon.json", "{\"log-driver\": \"journald\"}\n");
    checks = h.run(check_container_toolkit);
    const auto* runtime = find_check(checks, "container.runtime");
    EXPECT_FALSE(runtime->passed);
    EXPECT_NE(runtime->fix.find("nvidia-ctk runtime configure --runtime=docker"),
              std::string::npos);
}

TEST(CheckContainer, ContainerdDropInAndMissingCtk) {
    SoftwareHost h;
    h.profile.container = ContainerSpec{.toolkit = true, .runtime = "containerd"};
    h.sys.on_command({"nvidia-ctk", "--version"}, answer_missing());
    h.sys.add_file("/etc/containerd/conf.d/99-nvidia.toml", "[plugins]\n");
    h.sys.on_command({"containerd", "--version"},
                     answer_ok("containerd github.com/containerd/containerd 1.6.20~ds1 "
                               "1.6.20~ds1-1+b1\n"));
    const auto checks = h.run(check_container_toolkit);
    EXPECT_FALSE(find_check(checks, "container.nvidia-ctk")->passed);
    EXPECT_TRUE(find_check(checks, "container.runtime")->passed);
}

TEST(CheckFabricManager, OnlyWithNvswitchesAndMustBeActive) {
    SoftwareHost h;
    h.sys.on_command({"nvidia-smi", "-q"},
                     answer_ok(read_fixture("cmd/nvidia-smi/q/q-565-8xh100-sxm-completed.txt")));
    EXPECT_TRUE(h.run(check_fabric_manager).empty()); // auto, no NVSwitch bridges
    h.facts.nvswitch_count = 4;
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"},
                     answer_failed(3, "", "inactive\n"));
    auto checks = h.run(check_fabric_manager);
    ASSERT_EQ(checks.size(), 2u); // active, and the GPUs' fabric state
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[0].found, "inactive");
    EXPECT_EQ(checks[1].id, "fabric-manager.fabric-state");
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"}, answer_ok("active\n"));
    EXPECT_TRUE(h.run(check_fabric_manager)[0].passed);
    h.profile.fabric_manager = FabricManagerMode::disabled;
    EXPECT_TRUE(h.run(check_fabric_manager).empty());
}

TEST(CheckFabricManager, FabricStateOnRealCaptures) {
    SoftwareHost h;
    h.facts.nvswitch_count = 6;
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"}, answer_ok("active\n"));
    const std::vector<std::string> q = {"nvidia-smi", "-q"};
    // 8x H100 SXM registered (565.57.01).
    h.sys.on_command(q, answer_ok(read_fixture("cmd/nvidia-smi/q/q-565-8xh100-sxm-completed.txt")));
    auto c = *find_check(h.run(check_fabric_manager), "fabric-manager.fabric-state");
    EXPECT_TRUE(c.passed) << c.found;
    EXPECT_EQ(c.found, "Completed, Success on 8 GPUs");
    // Fabric manager never ran: the GPU is named with its state.
    h.sys.on_command(
        q, answer_ok(read_fixture("cmd/nvidia-smi/q/q-570-h100-in-progress-excerpt.txt")));
    c = *find_check(h.run(check_fabric_manager), "fabric-manager.fabric-state");
    EXPECT_FALSE(c.passed);
    EXPECT_FALSE(c.skipped);
    EXPECT_EQ(c.found, "GPU #0: State In Progress, Status N/A");
    EXPECT_FALSE(c.fix.empty());
    // A GPU with its heading: named by bus id and product.
    auto in_progress = read_fixture("cmd/nvidia-smi/q/q-565-8xh100-sxm-completed.txt");
    const std::string done = "State                             : Completed";
    in_progress.replace(in_progress.find(done), done.size(),
                        "State                             : In Progress");
    h.sys.on_command(q, answer_ok(in_progress));
    c = *find_check(h.run(check_fabric_manager), "fabric-manager.fabric-state");
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.found,
              "GPU 00000000:18:00.0 (NVIDIA H100 80GB HBM3): State In Progress, Status Success");
    // Pre-Hopper: no state to read, not a failure...
    h.sys.on_command(q, answer_ok(read_fixture("cmd/nvidia-smi/q/q-555-4xa100-sxm-na.txt")));
    c = *find_check(h.run(check_fabric_manager), "fabric-manager.fabric-state");
    EXPECT_TRUE(c.skipped);
    EXPECT_FALSE(c.passed);
    // ...except on an NVLink 5 host, where every GPU reports one.
    h.facts.nvswitch_count = 0;
    h.facts.nvlink5_switch_count = 4;
    c = *find_check(h.run(check_fabric_manager), "fabric-manager.fabric-state");
    EXPECT_FALSE(c.skipped);
    EXPECT_FALSE(c.passed);
    // nvidia-smi failing is a failure, not a pass.
    h.sys.on_command(q, answer_failed(9, "", "NVIDIA-SMI has failed\n"));
    c = *find_check(h.run(check_fabric_manager), "fabric-manager.fabric-state");
    EXPECT_FALSE(c.passed);
    EXPECT_FALSE(c.skipped);
}

TEST(CheckFabricManager, Nvlink5HostsNeedIbUmad) {
    SoftwareHost h;
    h.sys.on_command({"nvidia-smi", "-q"},
                     answer_ok(read_fixture("cmd/nvidia-smi/q/q-565-8xh100-sxm-completed.txt")));
    h.facts.nvlink5_switch_count = 4; // fabric_manager: auto wants it with no PCI NVSwitch
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"}, answer_ok("active\n"));
    auto c = *find_check(h.run(check_fabric_manager), "fabric-manager.ib-umad");
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.found, "not loaded");
    h.sys.add_dir("/sys/module/ib_umad");
    c = *find_check(h.run(check_fabric_manager), "fabric-manager.ib-umad");
    EXPECT_TRUE(c.passed);
    h.facts.nvlink5_switch_count = 0; // an NVLink 4 host has no such check
    h.facts.nvswitch_count = 4;
    EXPECT_FALSE(find_check(h.run(check_fabric_manager), "fabric-manager.ib-umad").has_value());
}

TEST(CheckPersistence, DisabledGpuFails) {
    SoftwareHost h;
    h.profile.tuning.persistence_mode = true;
    script_query(h.sys, "query-550-h200.csv");
    auto checks = h.run(check_persistence);
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[0].found, "Disabled on 1 of 1");
    script_query(h.sys, "query-580-a100.csv");
    EXPECT_TRUE(h.run(check_persistence)[0].passed);
}

namespace {

const std::string kTrtexec = "/usr/src/tensorrt/bin/trtexec";

SoftwareHost tensorrt_host() {
    SoftwareHost h;
    h.profile = driver_profile("550", "12.4");
    h.profile.tensorrt = TensorrtSpec{.version = "10"};
    h.sys.on_command(
        kLdconfig,
        answer_ok("3 libs found in cache `/etc/ld.so.cache'\n"
                  "\tlibnvinfer.so.10 (libc6,x86-64) => "
                  "/lib/x86_64-linux-gnu/libnvinfer.so.10\n"
                  "\tlibnccl.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnccl.so.2\n"));
    h.sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnvinfer10"},
                     answer_ok("10.13.3.9-1+cuda12.9"));
    return h;
}

} // namespace

TEST(CheckTensorrt, LibraryPackageAndTrtexecBannerOfAFailingVersionProbe) {
    auto h = tensorrt_host();
    h.sys.add_file(kTrtexec, "");
    // This trtexec does not know --version: it prints its banner and fails. The banner counts.
    h.sys.on_command(
        {kTrtexec, "--version"},
        answer_failed(1, "", read_fixture("cmd/trtexec/version-10.13.3-unknown-flag.txt")));
    const auto checks = h.run(check_tensorrt);
    ASSERT_EQ(checks.size(), 3u);
    EXPECT_EQ(checks[0].id, "tensorrt.library");
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    EXPECT_EQ(checks[0].found, "/lib/x86_64-linux-gnu/libnvinfer.so.10");
    EXPECT_EQ(checks[1].id, "tensorrt.package");
    EXPECT_TRUE(checks[1].passed) << checks[1].found;
    EXPECT_EQ(checks[2].id, "tensorrt.trtexec");
    EXPECT_TRUE(checks[2].passed) << checks[2].found;
    EXPECT_EQ(checks[2].found, "TensorRT 10.13.3");

    // Asked for 10.4: the 10.13 package and trtexec are wrong.
    h.profile.tensorrt->version = "10.4";
    const auto wrong = h.run(check_tensorrt);
    EXPECT_FALSE(wrong[1].passed);
    EXPECT_FALSE(wrong[2].passed);
    EXPECT_EQ(wrong[2].expected, "TensorRT 10.4.x");
}

TEST(CheckTensorrt, WrongCudaMajorBuildAndMissingLibraryFail) {
    auto h = tensorrt_host();
    h.sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnvinfer10"},
                     answer_ok("10.13.3.9-1+cuda13.0"));
    h.sys.on_command(kLdconfig, answer_ok(read_fixture("cmd/ldconfig/nccl-grep.txt")));
    const auto checks = h.run(check_tensorrt);
    ASSERT_EQ(checks.size(), 2u); // no trtexec installed: not run, not passed
    EXPECT_FALSE(checks[0].passed);
    EXPECT_EQ(checks[0].found, "absent");
    EXPECT_FALSE(checks[1].passed);
    EXPECT_EQ(checks[1].expected, "libnvinfer10 10.x built for cuda12.x");
    EXPECT_NE(checks[1].fix.find("--only tensorrt"), std::string::npos);
}

TEST(CheckTensorrt, Tensorrt11ChecksLibnvinfer11AndItsSoname) {
    SoftwareHost h;
    h.profile = driver_profile("615", "13.4");
    h.profile.tensorrt = TensorrtSpec{.version = "11"};
    h.sys.on_command(kLdconfig, answer_ok("2 libs found in cache `/etc/ld.so.cache'\n"
                                          "\tlibnvinfer.so.11 (libc6,x86-64) => "
                                          "/lib/x86_64-linux-gnu/libnvinfer.so.11\n"
                                          "\tlibnvinfer.so.10 (libc6,x86-64) => "
                                          "/lib/x86_64-linux-gnu/libnvinfer.so.10\n"));
    // A version NVIDIA's CUDA repos carry (nvidia-repos-2026.md [C32]).
    h.sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnvinfer11"},
                     answer_ok("11.3.0.99-1+cuda13.4"));
    auto checks = h.run(check_tensorrt);
    ASSERT_EQ(checks.size(), 2u); // no trtexec installed: not run
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    EXPECT_EQ(checks[0].found, "/lib/x86_64-linux-gnu/libnvinfer.so.11");
    EXPECT_TRUE(checks[1].passed) << checks[1].found;
    EXPECT_EQ(checks[1].expected, "libnvinfer11 11.x built for cuda13.x");
    // The CUDA 12.9 build of TensorRT 11 on a CUDA 13.4 profile is the wrong major.
    h.sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnvinfer11"},
                     answer_ok("11.0.0.114-1+cuda12.9"));
    checks = h.run(check_tensorrt);
    EXPECT_FALSE(checks[1].passed) << checks[1].found;
}

TEST(CheckTensorrt, TrtexecWithoutABannerFailsAndOldBannersDecode) {
    auto h = tensorrt_host();
    h.sys.add_file(kTrtexec, "");
    h.sys.on_command({kTrtexec, "--version"}, answer_failed(127, "error while loading shared "
                                                                 "libraries: libnvinfer.so.10"));
    auto checks = h.run(check_tensorrt);
    ASSERT_EQ(checks.size(), 3u);
    EXPECT_FALSE(checks[2].passed);
    EXPECT_EQ(checks[2].found, "no version banner: exit status 127");

    // TensorRT 8 encodes major*1000+minor*100+patch: v8602 is 8.6.2.
    h.profile.tensorrt->version = "8";
    h.sys.on_command({"dpkg-query", "-W", "-f=${Version}", "libnvinfer8"},
                     answer_ok("8.6.1.6-1+cuda12.0"));
    h.sys.on_command({kTrtexec, "--version"},
                     answer_ok("&&&& RUNNING TensorRT.trtexec [TensorRT v8602] # trtexec\n"));
    checks = h.run(check_tensorrt);
    EXPECT_EQ(checks[2].found, "TensorRT 8.6.2");
    EXPECT_TRUE(checks[2].passed);
    EXPECT_TRUE(checks[1].passed) << checks[1].found;
}

// fabric.imex on a GB200-like compute tray: no NVSwitch here, so no fabric manager check, but
// IMEX's service is judged where gpuprov owns its node list, and the daemon's own answer where
// config.cfg turns its command service on.
TEST(CheckImex, ServiceActiveAndDaemonReady) {
    SoftwareHost h;
    h.profile.fabric.imex = true;
    // No node list in the profile: the job launcher runs the service; skipped, never passed.
    auto checks = h.run(check_fabric_manager);
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].id, "fabric-manager.imex");
    EXPECT_TRUE(checks[0].skipped);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_TRUE(h.sys.commands_ran.empty());

    h.profile.fabric.imex_nodes = {"10.0.0.11", "10.0.0.12"};
    const std::vector<std::string> active = {"systemctl", "is-active", "nvidia-imex"};
    const std::vector<std::string> ctl = {"nvidia-imex-ctl", "-q"};
    h.sys.on_command(active, answer_failed(3, "", "failed\n"));
    checks = h.run(check_fabric_manager);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_FALSE(checks[0].passed);
    EXPECT_FALSE(checks[0].skipped);
    EXPECT_EQ(checks[0].found, "failed");
    EXPECT_TRUE(checks[0].fix.find("journalctl -u nvidia-imex") != std::string::npos);
    EXPECT_EQ(checks[1].id, "fabric-manager.imex-ready");
    EXPECT_TRUE(checks[1].skipped); // nothing to ask while the daemon is down

    h.sys.on_command(active, answer_ok("active\n"));
    // The package's config with the command service off: -q cannot reach the daemon.
    h.sys.add_file("/etc/nvidia-imex/config.cfg", "SERVER_PORT=50000\nIMEX_CMD_ENABLED=0\n");
    checks = h.run(check_fabric_manager);
    EXPECT_TRUE(checks[0].passed) << checks[0].found;
    EXPECT_TRUE(checks[1].skipped);
    EXPECT_TRUE(checks[1].found.find("IMEX_CMD_ENABLED=1") != std::string::npos) << checks[1].found;

    h.sys.add_file("/etc/nvidia-imex/config.cfg",
                   "# IMEX_CMD_ENABLED=0\nIMEX_CMD_ENABLED=1\nIMEX_CMD_PORT=50005\n");
    h.sys.on_command(ctl, answer_ok("WAITING_FOR_PEERS\n"));
    auto ready = *find_check(h.run(check_fabric_manager), "fabric-manager.imex-ready");
    EXPECT_FALSE(ready.passed);
    EXPECT_FALSE(ready.skipped);
    EXPECT_EQ(ready.found, "WAITING_FOR_PEERS");
    h.sys.on_command(ctl, answer_ok("READY\n"));
    ready = *find_check(h.run(check_fabric_manager), "fabric-manager.imex-ready");
    EXPECT_TRUE(ready.passed) << ready.found;

    // Beside fabric manager on an NVSwitch host: fabric manager's checks first.
    h.facts.nvswitch_count = 4;
    h.sys.on_command({"systemctl", "is-active", "nvidia-fabricmanager"}, answer_ok("active\n"));
    h.sys.on_command({"nvidia-smi", "-q"},
                     answer_ok(read_fixture("cmd/nvidia-smi/q/q-565-8xh100-sxm-completed.txt")));
    checks = h.run(check_fabric_manager);
    ASSERT_EQ(checks.size(), 4u);
    EXPECT_EQ(checks[0].id, "fabric-manager.active");
    EXPECT_EQ(checks[2].id, "fabric-manager.imex");
}

TEST(CheckImex, CommandServiceSwitch) {
    EXPECT_FALSE(imex_command_service_on(""));
    EXPECT_FALSE(imex_command_service_on("IMEX_CMD_ENABLED=0\n"));
    EXPECT_TRUE(imex_command_service_on("LOG_LEVEL=4\nIMEX_CMD_ENABLED=1\n"));
    EXPECT_FALSE(imex_command_service_on("#IMEX_CMD_ENABLED=1\n"));
    EXPECT_FALSE(imex_command_service_on("IMEX_CMD_ENABLED=1\nIMEX_CMD_ENABLED=0\n"));
}
