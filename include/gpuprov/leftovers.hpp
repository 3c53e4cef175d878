#pragma once
// Temp files a killed run leaves behind. System::write_file_atomic writes
// "<target>.gpuprov-tmp-XXXXXX" (mkstemp) next to its target, then renames it into place; a
// SIGKILL between the two leaves the temp file, which nothing else would ever remove.
#include <gpuprov/system.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// Whether `name` (a file name, not a path) is such a temp file: something, then
/// ".gpuprov-tmp-", then exactly the six characters mkstemp fills in ([A-Za-z0-9]).
[[nodiscard]] bool is_leftover_temp_name(std::string_view name);

/// Removes gpuprov's own temp files from the directories gpuprov writes to: apt's sources and
/// keyrings, modprobe.d, profile.d, systemd's unit directory and its *.d / *.wants directories,
/// /etc/gpuprov, /var/lib/gpuprov (journal, backups), /usr/local/bin, and — where another
/// process may be writing one right now (`gpuprov plan` filling the repository cache, the
/// metrics timer) — only those older than ten minutes: gpuprov's repository cache, the
/// node-exporter textfile directory and `extra_dirs` (a profile's textfile_dir). Never any
/// other name. Call it under the run lock. Returns the removed paths.
std::vector<std::string> clean_leftover_temp_files(System& sys,
                                                   const std::vector<std::string>& extra_dirs = {});

} // namespace gpuprov
