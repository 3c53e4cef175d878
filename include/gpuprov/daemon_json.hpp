#pragma once
// Docker's /etc/docker/daemon.json as dockerd reads it: one JSON object. Shared by the
// container-toolkit step (nvidia-ctk merges into it), verify and doctor.
#include <string>
#include <string_view>

namespace gpuprov {

inline constexpr const char* kDaemonJsonPath = "/etc/docker/daemon.json";

/// Why `text` is not a daemon.json dockerd starts with, as "LINE:COL: not valid JSON (…)" or
/// "the top level is an array, not an object"; empty when it is one (or blank: no settings).
[[nodiscard]] std::string daemon_json_error(std::string_view text);

} // namespace gpuprov
