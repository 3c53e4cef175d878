// container.engine: the distro's Docker or containerd, or docker-ce from Docker's repository with
// the key Docker's install docs pin (version matrix, distros[].docker);
// and `nvidia-ctk runtime configure`, held to merging (NVIDIA container toolkit install guide,
// "Configuring Docker": the command "modifies the /etc/docker/daemon.json file on the host").
#include "container_engine.hpp"

#include "apt_repo.hpp"
#include "common.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/container_config.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov::steps {

namespace {

constexpr const char* kDockerInstall = "https://docs.docker.com/engine/install/";

/// What gpuprov cannot install on this host, with the fix; empty when it can.
std::string why_not_installable(const std::string& engine, const HostFacts& facts) {
    if (facts.os.family != "rhel" || engine == "docker-ce") {
        return {};
    }
    if (engine == "docker.io") {
        return fmt::format(
            "container.engine docker.io: {} ships podman, not Docker, and has no docker.io "
            "package. Set container.engine: docker-ce (gpuprov adds Docker's repository, {}rhel/, "
            "with Docker's pinned key), or run podman with CDI: container.engine: none, "
            "container.cdi: true (podman run --device nvidia.com/gpu=all)",
            facts.os.pretty_name.empty() ? std::string("this RHEL-family host")
                                         : facts.os.pretty_name,
            kDockerInstall);
    }
    return fmt::format(
        "container.engine containerd: {} does not package containerd (Docker's repository "
        "has it as containerd.io, see {}rhel/). Set container.engine: docker-ce (docker-ce, "
        "docker-ce-cli and containerd.io from Docker's repository), or use podman with CDI "
        "(container.engine: none, container.cdi: true)",
        facts.os.pretty_name.empty() ? std::string("this RHEL-family host") : facts.os.pretty_name,
        kDockerInstall);
}

/// daemon.json turns live-restore on: dockerd restarts without stopping containers (Docker docs,
/// "Live restore"). A file that does not parse has nothing on.
bool live_restore(std::string_view daemon_json) {
    const auto doc = nlohmann::json::parse(daemon_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return false;
    }
    const auto it = doc.find("live-restore");
    return it != doc.end() && it->is_boolean() && it->get<bool>();
}

std::vector<std::string> engine_packages(const std::string& engine) {
    if (engine == "docker.io") {
        return {"docker.io"}; // Debian/Ubuntu: depends on containerd and runc
    }
    if (engine == "containerd") {
        return {"containerd"};
    }
    if (engine == "docker-ce") {
        return {"docker-ce", "docker-ce-cli", "containerd.io"};
    }
    return {};
}

// A table header with its quoting and spacing normalized: [plugins."io.containerd.grpc.v1.cri"]
// and [ plugins.'io.containerd.grpc.v1.cri' ] are the same table.
std::string table_name(std::string_view line) {
    std::string out;
    for (const char c : line) {
        if (c != ' ' && c != '\t' && c != '"' && c != '\'') {
            out += c;
        }
    }
    return out;
}

std::vector<std::string> toml_tables(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& raw : lines(text)) {
        const auto line = trim(raw);
        if (line.size() > 2 && line.front() == '[' && line.back() == ']') {
            out.push_back(table_name(line));
        }
    }
    return out;
}

std::vector<std::string> lost_json(std::string_view before, std::string_view after) {
    const auto old_doc = nlohmann::json::parse(before, nullptr, false);
    if (old_doc.is_discarded() || !old_doc.is_object()) {
        return {}; // nothing nvidia-ctk could have merged into (plan blocks on it)
    }
    const auto new_doc = nlohmann::json::parse(after, nullptr, false);
    if (new_doc.is_discarded() || !new_doc.is_object()) {
        return {"the whole file (no longer a JSON object)"};
    }
    std::vector<std::string> lost;
    for (const auto& [key, value] : old_doc.items()) {
        if (!new_doc.contains(key)) {
            lost.push_back(key);
        } else if (key == "runtimes" && value.is_object() && new_doc[key].is_object()) {
            for (const auto& [name, runtime] : value.items()) {
                if (!new_doc[key].contains(name) || new_doc[key][name] != runtime) {
                    lost.push_back("runtimes." + name);
                }
            }
        } else if (key == "default-runtime" && new_doc[key] == "nvidia") {
            continue; // --set-as-default
        } else if (new_doc[key] != value) {
            lost.push_back(key + " (changed)");
        }
    }
    return lost;
}

/// Docker's repository (profile repository "docker", Docker's own for the host's distro
/// unless the profile points it at a mirror) and its packages at the index's newest versions.
void plan_docker_ce(const StepContext& ctx, const System& sys, const PackageManager& pm,
                    const std::vector<std::string>& packages, CheckResult& r) {
    check_apt_repo(ctx, sys, kDockerRepoName, r);
    if (r.status == StepStatus::blocked) {
        return;
    }
    const auto* index = index_or_block(ctx, kDockerRepoName, r);
    if (index == nullptr) {
        return;
    }
    std::vector<PackagePin> missing;
    for (const auto& name : packages) {
        if (pm.installed(sys, name)) {
            continue;
        }
        const auto* newest = index->newest(name);
        if (newest == nullptr) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("Docker's repository ({}) has no {}; container.engine "
                                   "docker-ce needs docker-ce, docker-ce-cli and containerd.io",
                                   ctx.repos.repo(kDockerRepoName).repo.url, name);
            return;
        }
        missing.push_back({name, newest->version});
    }
    r.changes.push_back(note("container engine docker-ce from Docker's repository"));
    plan_installs(r, sys, pm, missing);
}

} // namespace

std::string missing_engine(const StepContext& ctx, const System& sys) {
    const auto& c = *ctx.profile.container;
    if (!engine_packages(c.engine).empty() || !installed_engine_daemon(sys, c.runtime).empty()) {
        return {};
    }
    const bool rhel = ctx.facts.os.family == "rhel";
    const auto missing = fmt::format(
        "container.runtime is {}, but {} is not installed on this host (no {} in /usr/local/sbin, "
        "/usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin) and container.engine is none, so "
        "gpuprov would install the toolkit and configure the NVIDIA runtime for an engine that is "
        "not there",
        c.runtime, c.runtime, engine_daemon(c.runtime));
    // A built-in profile cannot be edited: extending it, or leaving the step out, can.
    constexpr const char* kWithout = "; or leave containers out of this run: --skip "
                                     "container-toolkit";
    if (c.runtime == "docker") {
        const bool containerd = !installed_engine_daemon(sys, "containerd").empty();
        return fmt::format(
            "{}. Install Docker first ({}), or set container.engine: {} so gpuprov installs "
            "it{}{}",
            missing, kDockerInstall,
            rhel ? "docker-ce (Docker's repository; RHEL ships podman, not Docker)"
                 : "docker.io (the distro's) or docker-ce (Docker's repository)",
            containerd ? ", or set container.runtime: containerd (containerd is installed here)"
                       : "",
            kWithout);
    }
    if (c.runtime == "containerd") {
        return fmt::format("{}. Install containerd first, or set container.engine: {} so "
                           "gpuprov installs it{}",
                           missing,
                           rhel ? "docker-ce (containerd.io from Docker's repository)"
                                : "containerd (the distro's) or docker-ce (containerd.io from "
                                  "Docker's repository)",
                           kWithout);
    }
    return fmt::format("{}. Install CRI-O first (https://cri-o.io; gpuprov does not install it), "
                       "or set container.runtime to the engine this host runs{}",
                       missing, kWithout);
}

Command engine_restart_command(const std::string& runtime) {
    return {.argv = {"systemctl", "restart", runtime}, .timeout = 300s};
}

std::optional<Change> engine_restart_change(const StepContext& ctx, const System& sys,
                                            const PackageManager& pm) {
    const auto& c = *ctx.profile.container;
    if (!have_systemctl(sys)) {
        return std::nullopt;
    }
    const auto restart = engine_restart_command(c.runtime);
    const bool active =
        sys.query({.argv = {"systemctl", "is-active", "--quiet", c.runtime}, .timeout = 30s}).ok();
    if (!active) {
        const auto packages = engine_packages(c.engine);
        if (packages.empty() || all_installed(sys, pm, packages)) {
            return std::nullopt; // a stopped engine is left stopped
        }
        return command_change(restart, fmt::format("only if {} runs after its install (Debian's "
                                                   "package starts it): it reads its config only "
                                                   "at start; no container runs in it yet",
                                                   c.runtime));
    }
    if (c.runtime != "docker") {
        // Their containers' shims (containerd-shim, CRI-O's conmon) outlive the daemon.
        return command_change(restart, fmt::format("{} is running and reads its config only at "
                                                   "start; running containers keep running",
                                                   c.runtime));
    }
    if (live_restore(sys.read_file(kDaemonJsonPath).value_or(""))) {
        return command_change(restart, "dockerd is running and reads daemon.json only at start; "
                                       "running containers keep running (\"live-restore\": true "
                                       "in /etc/docker/daemon.json, once dockerd has loaded it)");
    }
    return command_change(restart,
                          "dockerd is running and reads daemon.json only at start: this STOPS "
                          "EVERY RUNNING CONTAINER (live-restore is not on in "
                          "/etc/docker/daemon.json). To keep them running, set \"live-restore\": "
                          "true there and `systemctl reload docker` before apply");
}

void apply_container_engine_repo(const StepContext& ctx, System& sys, const PackageManager& pm) {
    const auto& engine = ctx.profile.container->engine;
    if (engine == "docker-ce" && !all_installed(sys, pm, engine_packages(engine))) {
        apply_apt_repo(ctx, sys, kDockerRepoName);
    }
}

void plan_container_engine(const StepContext& ctx, const System& sys, const PackageManager& pm,
                           CheckResult& r) {
    const auto& engine = ctx.profile.container->engine;
    const auto packages = engine_packages(engine);
    if (packages.empty() || all_installed(sys, pm, packages)) {
        return;
    }
    if (const auto why = why_not_installable(engine, ctx.facts); !why.empty()) {
        r.status = StepStatus::blocked;
        r.reason = why;
        return;
    }
    if (engine == "docker-ce") {
        plan_docker_ce(ctx, sys, pm, packages, r);
        return;
    }
    std::vector<PackagePin> missing;
    for (const auto& name : packages) {
        if (!pm.installed(sys, name)) {
            missing.push_back({name, ""}); // the distro's own version
        }
    }
    r.changes.push_back(note(fmt::format("container engine {} from the distro's archive", engine)));
    plan_installs(r, sys, pm, missing);
}

std::string runtime_config_path(const std::string& runtime) {
    if (runtime == "containerd") {
        return "/etc/containerd/config.toml";
    }
    if (runtime == "crio") {
        return "/etc/crio/crio.conf";
    }
    return kDaemonJsonPath;
}

std::string unmergeable_config(const std::string& runtime, std::string_view text) {
    if (runtime != "docker") {
        return {};
    }
    const auto why = daemon_json_error(text);
    return why.empty() ? why : runtime_config_path(runtime) + ":" + why;
}

std::vector<std::string> lost_settings(const std::string& runtime, std::string_view before,
                                       std::string_view after) {
    if (runtime == "docker") {
        return lost_json(before, after);
    }
    const auto now = toml_tables(after);
    std::vector<std::string> lost;
    for (const auto& table : toml_tables(before)) {
        if (std::find(now.begin(), now.end(), table) == now.end()) {
            lost.push_back(table);
        }
    }
    return lost;
}

Command runtime_configure_command(const std::string& runtime,
                                  const std::vector<std::string>& extra) {
    Command c{.argv = {"nvidia-ctk", "runtime", "configure", "--runtime=" + runtime},
              .timeout = 120s};
    c.argv.insert(c.argv.end(), extra.begin(), extra.end());
    return c;
}

void configure_runtime(System& sys, const std::string& runtime,
                       const std::vector<std::string>& extra) {
    const auto path = runtime_config_path(runtime);
    const auto before = sys.read_file(path);
    const auto mode = restorable_mode(sys, path);
    run_checked(sys, runtime_configure_command(runtime, extra));
    if (!before) {
        return;
    }
    const auto after = sys.read_file(path);
    const auto lost = lost_settings(runtime, *before, after.value_or(""));
    if (lost.empty()) {
        return;
    }
    sys.write_file_atomic(path, *before, mode);
    throw HostError(fmt::format(
        "nvidia-ctk runtime configure --runtime={} replaced settings of {} instead of merging "
        "into it ({} lost); gpuprov wrote the original back. Add the nvidia runtime by hand "
        "(NVIDIA container toolkit install guide, \"Configuring {}\") or update the toolkit, "
        "then run gpuprov again",
        runtime, path, join(lost, ", "), runtime));
}

} // namespace gpuprov::steps
