#include "check_container_run.hpp"
#include "probe.hpp"

#include <gpuprov/checks.hpp>
#include <gpuprov/container_config.hpp>
#include <gpuprov/strings.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

using namespace nvidia_detail;

namespace {

constexpr const char* kContainerStep = "container-toolkit";

CheckOutcome docker_runtime(const System& sys) {
    constexpr const char* path = kDaemonJsonPath;
    auto c = make_outcome("container.runtime", kContainerStep, path);
    c.expected = "runtimes.nvidia in daemon.json";
    c.fix = "nvidia-ctk runtime configure --runtime=docker && systemctl restart docker";
    const auto text = sys.read_file(path);
    if (!text) {
        c.found = "missing";
        settle(c, false);
        return c;
    }
    const auto doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
        c.found = daemon_json_error(*text);
        c.excerpt = head_lines(*text);
        settle(c, false);
        return c;
    }
    const bool has = doc.is_object() && doc.contains("runtimes") && doc["runtimes"].is_object() &&
                     doc["runtimes"].contains("nvidia");
    c.found = has ? "runtimes.nvidia present" : "no nvidia runtime";
    if (has) {
        c.excerpt = "\"nvidia\": " + doc["runtimes"]["nvidia"].dump();
    }
    settle(c, has);
    return c;
}

// containerd and CRI-O: `nvidia-ctk runtime configure` writes a conf.d drop-in; older versions
// edited the main file instead.
CheckOutcome toml_runtime(const System& sys, const std::string& runtime, const std::string& dropin,
                          const std::string& main_file) {
    auto c = make_outcome("container.runtime", kContainerStep, dropin);
    c.expected = "nvidia runtime configured for " + runtime;
    c.fix =
        "nvidia-ctk runtime configure --runtime=" + runtime + " && systemctl restart " + runtime;
    if (sys.exists(dropin)) {
        c.found = dropin + " present";
        settle(c, true);
        return c;
    }
    const auto text = sys.read_file(main_file);
    const bool mentions = text && text->find("nvidia") != std::string::npos;
    c.command = main_file;
    c.found = mentions ? main_file + " mentions nvidia" : "no nvidia runtime in " + main_file;
    settle(c, mentions);
    return c;
}

} // namespace

std::vector<CheckOutcome> check_container_toolkit(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.container || !in.profile.container->toolkit) {
        return out;
    }
    const std::vector<std::string> argv = {"nvidia-ctk", "--version"};
    auto ctk = make_outcome("container.nvidia-ctk", kContainerStep, display_argv(argv));
    ctk.expected = "nvidia-ctk answers";
    ctk.fix = "install the toolkit: gpuprov apply " + in.profile.name + " --only container-toolkit";
    const auto r = probe(sys, argv);
    ctk.found = r.ok() ? head_lines(r.out, 1) : failure_text(r);
    ctk.excerpt = head_lines(output_of(r), 2);
    settle(ctk, r.ok());
    out.push_back(ctk);
    const auto engine = container_engine_check(in, sys);
    out.push_back(engine);

    const auto& runtime = in.profile.container->runtime;
    if (runtime == "containerd") {
        out.push_back(toml_runtime(sys, runtime, "/etc/containerd/conf.d/99-nvidia.toml",
                                   "/etc/containerd/config.toml"));
    } else if (runtime == "crio") {
        out.push_back(
            toml_runtime(sys, runtime, "/etc/crio/conf.d/99-nvidia.toml", "/etc/crio/crio.conf"));
    } else {
        out.push_back(docker_runtime(sys));
    }
    if (in.profile.container->cdi) {
        out.push_back(container_cdi_check(sys));
    }
    out.push_back(container_gpu_run_check(in, sys, engine));
    return out;
}

} // namespace gpuprov
