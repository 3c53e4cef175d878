// Container findings: why `docker run --gpus all` would fail on this host (docs/containers.md).
#include "doctor_parts.hpp"

#include <cctype>
#include <fmt/format.h>
#include <gpuprov/container_config.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

// Where the toolkit's packages put the hook Docker's --gpus flag runs (nvidia-container-toolkit).
constexpr const char* kHook = "/usr/bin/nvidia-container-runtime-hook";

bool profile_wants_containers(const DoctorOptions& o) {
    return o.profile != nullptr && o.profile->container && o.profile->container->toolkit;
}

void engine_missing(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!profile_wants_containers(ctx.options)) {
        return;
    }
    const auto& c = *ctx.options.profile->container;
    const auto daemon = engine_daemon(c.runtime);
    if (!installed_engine_daemon(ctx.sys, c.runtime).empty()) {
        return;
    }
    Finding f{.id = "container-engine-missing", .severity = "error"};
    f.summary = fmt::format("the profile runs containers through {}, but {} is not installed: "
                            "the NVIDIA runtime is configured for an engine that is not there",
                            c.runtime, daemon);
    f.evidence.push_back({"/usr/bin/" + daemon + ", /usr/sbin/" + daemon, "missing"});
    f.fix = c.engine != "none"
                ? apply_hint(ctx.options, "container-toolkit")
                : "set container.engine (docker.io or containerd on Debian/Ubuntu; RHEL ships "
                  "podman: docker-ce from Docker's repository) and " +
                      apply_hint(ctx.options, "container-toolkit");
    out.push_back(std::move(f));
}

void daemon_json_invalid(const DoctorContext& ctx, std::vector<Finding>& out) {
    const auto text = ctx.sys.read_file(kDaemonJsonPath);
    if (!text) {
        return;
    }
    const auto why = daemon_json_error(*text);
    if (why.empty()) {
        return;
    }
    Finding f{.id = "docker-daemon-json-invalid", .severity = "error"};
    f.summary = "dockerd will not start: /etc/docker/daemon.json is not a JSON object";
    f.evidence.push_back({kDaemonJsonPath, std::string(kDaemonJsonPath) + ":" + why});
    f.fix = "fix the file at that position (dockerd says \"unable to configure the Docker daemon "
            "with file /etc/docker/daemon.json\"), then systemctl restart docker; nvidia-ctk "
            "cannot merge into it either";
    out.push_back(std::move(f));
}

void hook_missing(const DoctorContext& ctx, std::vector<Finding>& out) {
    const bool wanted = profile_wants_containers(ctx.options);
    if (ctx.facts.gpus.empty() || ctx.sys.exists(kHook)) {
        return;
    }
    if (wanted && ctx.options.profile->container->runtime != "docker") {
        return;
    }
    const auto dockerd = installed_engine_daemon(ctx.sys, "docker");
    if (dockerd.empty()) {
        return;
    }
    Finding f{.id = "container-toolkit-missing", .severity = wanted ? "error" : "warning"};
    f.summary = "Docker is installed but not the NVIDIA container toolkit: `docker run --gpus all` "
                "fails with 'could not select device driver \"\" with capabilities: [[gpu]]'";
    f.evidence.push_back({dockerd, "present"});
    f.evidence.push_back({kHook, "missing"});
    f.fix = "install the toolkit and wire the runtime: container: {toolkit: true} in the "
            "profile and " +
            apply_hint(ctx.options, "container-toolkit");
    out.push_back(std::move(f));
}

// The driver version a CDI spec was generated for, from the libcuda.so.<version> it mounts.
std::string spec_driver(std::string_view spec) {
    constexpr std::string_view lib = "libcuda.so.";
    const auto at = spec.find(lib);
    if (at == std::string_view::npos) {
        return {};
    }
    std::string v;
    for (auto i = at + lib.size(); i < spec.size(); ++i) {
        const auto ch = spec[i];
        if (std::isdigit(static_cast<unsigned char>(ch)) == 0 && ch != '.') {
            break;
        }
        v += ch;
    }
    while (!v.empty() && v.back() == '.') {
        v.pop_back();
    }
    return v;
}

void cdi_stale(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (!ctx.facts.driver) {
        return;
    }
    const auto spec = ctx.sys.read_file(kCdiSpecPath);
    if (!spec) {
        return;
    }
    const auto made_for = spec_driver(*spec);
    if (made_for.empty() || made_for == ctx.facts.driver->version) {
        return;
    }
    Finding f{.id = "cdi-spec-stale", .severity = "error"};
    f.summary = fmt::format("{} was generated for driver {}, but {} is loaded: containers started "
                            "through CDI mount libraries that are gone",
                            kCdiSpecPath, made_for, ctx.facts.driver->version);
    f.evidence.push_back({kCdiSpecPath, "libcuda.so." + made_for});
    f.evidence.push_back({"/proc/driver/nvidia/version", ctx.facts.driver->version});
    f.fix = std::string("nvidia-ctk cdi generate --output=") + kCdiSpecPath;
    out.push_back(std::move(f));
}

} // namespace

void diagnose_container(const DoctorContext& ctx, std::vector<Finding>& out) {
    engine_missing(ctx, out);
    daemon_json_invalid(ctx, out);
    hook_missing(ctx, out);
    cdi_stale(ctx, out);
}

} // namespace gpuprov::nvidia_detail
