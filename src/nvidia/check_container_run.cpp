#include "check_container_run.hpp"

#include "probe.hpp"

#include <fmt/format.h>
#include <gpuprov/container_config.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

constexpr const char* kContainerRunStep = "container-toolkit";

// A container's first start can unpack layers and load the toolkit's hooks: longer than a probe.
constexpr std::chrono::seconds kRunTimeout{180};

std::string engine_fix(const Profile& p) {
    const auto& c = *p.container;
    if (c.engine != "none") {
        return fmt::format("gpuprov apply {} --only container-toolkit (installs {})", p.name,
                           c.engine);
    }
    if (c.runtime == "docker") {
        return "install Docker: set container.engine: docker.io (Debian/Ubuntu) and run gpuprov "
               "apply, or install Docker CE (https://docs.docker.com/engine/install/, the only "
               "Docker for RHEL, which ships podman)";
    }
    if (c.runtime == "containerd") {
        return "install containerd: set container.engine: containerd (Debian/Ubuntu) and run "
               "gpuprov apply, or install containerd.io from Docker's repository";
    }
    return "install CRI-O from its project's repository (https://cri-o.io), or change "
           "container.runtime";
}

bool lists_gpu(std::string_view out) {
    for (const auto& line : lines(out)) {
        if (starts_with(trim(line), "GPU ")) {
            return true;
        }
    }
    return false;
}

std::size_t gpu_lines(std::string_view out) {
    std::size_t n = 0;
    for (const auto& line : lines(out)) {
        n += starts_with(trim(line), "GPU ") ? 1 : 0;
    }
    return n;
}

} // namespace

CheckOutcome container_engine_check(const VerifyInput& in, const System& sys) {
    const auto& runtime = in.profile.container->runtime;
    const std::vector<std::string> argv = {engine_daemon(runtime), "--version"};
    auto c = make_outcome("container.engine", kContainerRunStep, display_argv(argv));
    c.expected = "the " + runtime + " engine installed (" + argv.front() + " answers)";
    c.fix = engine_fix(in.profile);
    const auto r = probe(sys, argv);
    c.found = r.ok() ? head_lines(r.out, 1)
                     : (r.not_found ? "no " + argv.front() + ": " + runtime +
                                          " is not installed, so containers cannot run"
                                    : failure_text(r));
    c.excerpt = head_lines(output_of(r), 2);
    settle(c, r.ok());
    return c;
}

CheckOutcome container_cdi_check(const System& sys) {
    const std::vector<std::string> argv = {"nvidia-ctk", "cdi", "list"};
    auto c = make_outcome("container.cdi", kContainerRunStep, display_argv(argv));
    c.expected = "/etc/cdi/nvidia.yaml present and nvidia.com/gpu devices listed";
    c.fix = "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml (after the driver is loaded)";
    if (!sys.exists(kCdiSpecPath)) {
        c.command = kCdiSpecPath;
        c.found = "no /etc/cdi/nvidia.yaml";
        settle(c, false);
        return c;
    }
    const auto r = probe(sys, argv);
    const bool listed = r.ok() && r.out.find("nvidia.com/gpu=") != std::string::npos;
    c.found = listed ? "nvidia.com/gpu devices listed"
                     : (r.ok() ? "no nvidia.com/gpu device in the CDI specs" : failure_text(r));
    c.excerpt = head_lines(output_of(r), 3);
    settle(c, listed);
    return c;
}

CheckOutcome container_gpu_run_check(const VerifyInput& in, const System& sys,
                                     const CheckOutcome& engine) {
    const auto& spec = *in.profile.container;
    auto c = make_outcome("container.gpu-run", kContainerRunStep,
                          "docker run --rm --gpus all IMAGE nvidia-smi -L");
    c.expected = "a container sees the GPUs (nvidia-smi -L lists them)";
    if (spec.runtime != "docker") {
        skip(c, "the GPU run test uses docker; container.runtime is " + spec.runtime);
        return c;
    }
    if (!engine.passed) {
        skip(c, "no engine to run it (" + engine.id + " failed)");
        return c;
    }
    if (in.facts.gpus.empty()) {
        skip(c, "no NVIDIA GPU on this host's PCI bus, so there is nothing to run on");
        return c;
    }
    std::string image;
    if (spec.test_image) {
        image = *spec.test_image;
        const std::vector<std::string> inspect = {"docker",   "image",   "inspect",
                                                  "--format", "{{.Id}}", image};
        const auto r = probe(sys, inspect);
        if (!r.ok()) {
            c.command = display_argv(inspect);
            c.found = "container.test_image " + image + " is not present locally (" +
                      failure_text(r) + ")";
            c.excerpt = head_lines(output_of(r), 2);
            c.fix = "docker pull " + image + " (verify never pulls)";
            settle(c, false);
            return c;
        }
    } else {
        const std::vector<std::string> list = {"docker",
                                               "image",
                                               "ls",
                                               "--filter",
                                               "reference=nvidia/cuda",
                                               "--format",
                                               "{{.Repository}}:{{.Tag}}"};
        const auto r = probe(sys, list);
        if (!r.ok()) {
            c.command = display_argv(list);
            c.found = r.not_found ? "no docker command (the CLI: docker.io, or docker-ce-cli)"
                                  : "the docker daemon does not answer (" + failure_text(r) + ")";
            c.excerpt = head_lines(output_of(r), 2);
            c.fix = "systemctl start docker (and see journalctl -u docker)";
            settle(c, false);
            return c;
        }
        for (const auto& line : lines(r.out)) {
            const auto ref = std::string(trim(line));
            if (!ref.empty() && ref.find("<none>") == std::string::npos) {
                image = ref;
                break;
            }
        }
        if (image.empty()) {
            skip(c, "no container.test_image in the profile and no nvidia/cuda image present "
                    "locally (verify never pulls one)");
            return c;
        }
    }
    const std::vector<std::string> argv = {"docker", "run", "--rm",       "--gpus",
                                           "all",    image, "nvidia-smi", "-L"};
    c.command = display_argv(argv);
    const auto r = sys.query({.argv = argv, .timeout = kRunTimeout});
    const auto seen = gpu_lines(r.out);
    const bool ok = r.ok() && lists_gpu(r.out);
    c.found = ok ? fmt::format("{} of the host's {} GPU(s) visible in {}", seen,
                               in.facts.gpus.size(), image)
                 : (r.ok() ? "nvidia-smi -L listed no GPU in the container"
                           : "docker run failed (" + failure_text(r) + ")");
    c.excerpt = head_lines(output_of(r), 4);
    c.fix = "nvidia-ctk runtime configure --runtime=docker && systemctl restart docker; see "
            "gpuprov doctor";
    settle(c, ok);
    return c;
}

} // namespace gpuprov::nvidia_detail
