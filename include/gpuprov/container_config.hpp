#pragma once
// The container engine's files and daemon, shared by the container-toolkit step, verify and
// doctor (docs/containers.md): Docker's daemon.json as dockerd reads it (one JSON object), the CDI
// spec gpuprov generates, the daemon each runtime runs.
#include <gpuprov/system.hpp>
#include <string>
#include <string_view>

namespace gpuprov {

inline constexpr const char* kDaemonJsonPath = "/etc/docker/daemon.json";
/// Where `nvidia-ctk cdi generate --output=` writes the spec (NVIDIA install guide, CDI support).
inline constexpr const char* kCdiSpecPath = "/etc/cdi/nvidia.yaml";

/// The daemon of container.runtime: dockerd for docker, containerd, crio.
[[nodiscard]] std::string engine_daemon(const std::string& runtime);

/// Where engine_daemon(runtime) is installed, looked up in the directories of the PATH every
/// command gpuprov runs gets (so where verify's `dockerd --version` finds it); empty when it is
/// in none. Read from the filesystem: plan and doctor run no daemon to ask.
[[nodiscard]] std::string installed_engine_daemon(const System& sys, const std::string& runtime);

/// Why `text` is not a daemon.json dockerd starts with, as "LINE:COL: not valid JSON (…)" or
/// "the top level is an array, not an object"; empty when it is one (or blank: no settings).
[[nodiscard]] std::string daemon_json_error(std::string_view text);

} // namespace gpuprov
