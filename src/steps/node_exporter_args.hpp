#pragma once
// Debian's prometheus-node-exporter reads its flags from ARGS in
// /etc/default/prometheus-node-exporter (the unit's EnvironmentFile; `ExecStart=... $ARGS`).
// The monitoring step points the textfile collector at the profile's directory by editing
// that one flag in place: the rest of the file, and of ARGS, stays as the admin left it.
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov::steps {

inline constexpr const char* kNodeExporterDefaults = "/etc/default/prometheus-node-exporter";
/// Debian's build compiles this in as --collector.textfile.directory's default (`--help` of
/// prometheus-node-exporter 1.5.0-1+b6, Debian 12).
inline constexpr std::string_view kNodeExporterDefaultTextfileDir =
    "/var/lib/prometheus/node-exporter";

struct NodeExporterArgs {
    std::string content;  ///< the file with ARGS naming the directory
    bool changed = false; ///< content differs from the input
    std::string problem;  ///< set when ARGS cannot be edited safely: why, and the manual fix
};

/// The textfile directory node_exporter reads with this defaults file: the flag's value in the
/// last ARGS assignment, else the package default. nullopt when ARGS cannot be parsed.
[[nodiscard]] std::optional<std::string> node_exporter_textfile_dir(std::string_view file);

/// `file` with ARGS making node_exporter read `dir`: the flag's value replaced, or the flag
/// appended to ARGS (or an ARGS line appended to the file). Unchanged when it already does,
/// including through the package default.
[[nodiscard]] NodeExporterArgs merge_node_exporter_args(std::string_view file,
                                                        std::string_view dir);

} // namespace gpuprov::steps
