#pragma once
// The container engine a profile asks gpuprov to install (container.engine) and the merge guard
// around `nvidia-ctk runtime configure`, which edits the engine's own config in place.
#include <gpuprov/package_manager.hpp>
#include <gpuprov/step.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov::steps {

/// Plans container.engine into `r`: the distro's packages that are missing (docker.io and
/// containerd on Debian/Ubuntu), Docker's repository and docker-ce, docker-ce-cli,
/// containerd.io for docker-ce, nothing for `none` or an engine already installed, or `r`
/// blocked with the fix where gpuprov cannot install it (EL has podman, not docker.io).
void plan_container_engine(const StepContext& ctx, const System& sys, const PackageManager& pm,
                           CheckResult& r);

/// Why the container-toolkit step cannot work on this host, with the fix: container.engine is
/// `none` (gpuprov installs no engine) and container.runtime's daemon is not installed, so
/// apply would install the toolkit and configure a runtime for an engine that is not there,
/// then fail verify. Empty when the engine is installed or the profile has gpuprov install it.
[[nodiscard]] std::string missing_engine(const StepContext& ctx, const System& sys);

/// `systemctl restart RUNTIME`: the engine reads its config only at start.
[[nodiscard]] Command engine_restart_command(const std::string& runtime);

/// The restart apply runs after `nvidia-ctk runtime configure` (engine_restart_command), as the
/// plan shows it: when the engine is active now, with what it does to running containers
/// (dockerd stops every one unless daemon.json has "live-restore": true; containerd's and
/// CRI-O's outlive their daemon), and when this step installs the engine, whose package may
/// start it (no container runs in it yet). nullopt when apply will not restart it.
[[nodiscard]] std::optional<Change> engine_restart_change(const StepContext& ctx, const System& sys,
                                                          const PackageManager& pm);

/// Puts Docker's repository in place (key, source, index) when the profile's engine is
/// docker-ce and its packages are not all installed; nothing otherwise.
void apply_container_engine_repo(const StepContext& ctx, System& sys, const PackageManager& pm);

/// The file `nvidia-ctk runtime configure --runtime=RUNTIME` merges the nvidia runtime into.
[[nodiscard]] std::string runtime_config_path(const std::string& runtime);

/// Why nvidia-ctk cannot merge into `text` (daemon.json that is not a JSON object, with its
/// line and column), or empty.
[[nodiscard]] std::string unmergeable_config(const std::string& runtime, std::string_view text);

/// What `before` set that `after` lost: daemon.json's top-level keys and `runtimes` entries
/// (removed or changed; `default-runtime` may become nvidia), a TOML file's tables.
[[nodiscard]] std::vector<std::string>
lost_settings(const std::string& runtime, std::string_view before, std::string_view after);

/// `nvidia-ctk runtime configure --runtime=RUNTIME` followed by `extra` (Kubernetes node mode's
/// `--set-as-default`, kubernetes_node.hpp).
[[nodiscard]] Command runtime_configure_command(const std::string& runtime,
                                                const std::vector<std::string>& extra = {});

/// Runs `nvidia-ctk runtime configure --runtime=RUNTIME` and checks that it merged: when the
/// config existed and lost a setting, the original is written back and HostError names what
/// was lost.
void configure_runtime(System& sys, const std::string& runtime,
                       const std::vector<std::string>& extra = {});

} // namespace gpuprov::steps
