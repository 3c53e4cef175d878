// doctor's container findings: no engine for the profile, a daemon.json dockerd refuses, Docker
// without the toolkit's hook, a CDI spec for another driver.
#include "doctor_test_util.hpp"

using namespace gpuprov;
using namespace gpuprov::testing;

namespace {

struct ContainerDoctor : DoctorHost {
    Profile profile = driver_profile("535", "12.2");
    ContainerDoctor() {
        profile.container = ContainerSpec{.toolkit = true, .runtime = "docker"};
        facts.gpus.resize(8);
        facts.driver = LoadedDriver{.version = "535.129.03"};
        sys.add_file("/usr/bin/nvidia-container-runtime-hook", "ELF");
        sys.add_file("/usr/sbin/dockerd", "ELF");
    }
    std::vector<Finding> run_with_profile() {
        options.profile = &profile;
        return run();
    }
};

} // namespace

TEST(DoctorContainer, AHealthyHostHasNoContainerFinding) {
    ContainerDoctor h;
    h.sys.add_file("/etc/docker/daemon.json", read_fixture("cmd/files/docker-daemon.json"));
    h.sys.add_file("/etc/cdi/nvidia.yaml",
                   "- containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.129.03\n");
    for (const auto& f : h.run_with_profile()) {
        EXPECT_TRUE(f.id.find("container") == std::string::npos && f.id.find("cdi") != 0 &&
                    f.id.find("docker") != 0)
            << f.id << ": " << f.summary;
    }
}

TEST(DoctorContainer, TheProfilesEngineIsMissing) {
    ContainerDoctor h;
    h.sys.remove_file("/usr/sbin/dockerd");
    EXPECT_EQ(find_finding(h.run(), "container-engine-missing"), nullptr); // no profile, no want
    const auto all = h.run_with_profile();
    const auto* f = find_finding(all, "container-engine-missing");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, "error");
    EXPECT_TRUE(contains(f->fix, "set container.engine")) << f->fix;
}

TEST(DoctorContainer, ADaemonJsonDockerdRefusesIsShownAtItsPosition) {
    ContainerDoctor h;
    h.sys.add_file("/etc/docker/daemon.json", "{\n  \"runtimes\": {\n    \"nvidia\": {}\n  }\n");
    const auto all = h.run();
    const auto* f = find_finding(all, "docker-daemon-json-invalid");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(contains(f->evidence.at(0).excerpt, "/etc/docker/daemon.json:5:1: not valid JSON"))
        << f->evidence.at(0).excerpt;
}

TEST(DoctorContainer, DockerWithoutTheToolkitHook) {
    ContainerDoctor h;
    h.sys.remove_file("/usr/bin/nvidia-container-runtime-hook");
    const auto plain = h.run();
    const auto* warn = find_finding(plain, "container-toolkit-missing");
    ASSERT_NE(warn, nullptr);
    EXPECT_EQ(warn->severity, "warning"); // nothing asked for GPU containers
    EXPECT_TRUE(contains(warn->summary, "could not select device driver")) << warn->summary;
    const auto wanted = h.run_with_profile();
    ASSERT_NE(find_finding(wanted, "container-toolkit-missing"), nullptr);
    EXPECT_EQ(find_finding(wanted, "container-toolkit-missing")->severity, "error");
    h.facts.gpus.clear();
    EXPECT_EQ(find_finding(h.run(), "container-toolkit-missing"), nullptr);
}

TEST(DoctorContainer, ACdiSpecForAnotherDriver) {
    ContainerDoctor h;
    h.sys.add_file("/etc/cdi/nvidia.yaml",
                   "  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07\n");
    const auto all = h.run();
    const auto* f = find_finding(all, "cdi-spec-stale");
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(contains(f->summary, "generated for driver 550.90.07, but 535.129.03 is loaded"))
        << f->summary;
    EXPECT_EQ(f->fix, "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml");
}
