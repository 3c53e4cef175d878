#pragma once
// apt's side of `gpuprov bundle` (docs/air-gapped.md): the closure downloaded by apt itself.
#include <gpuprov/package_manager.hpp>
#include <string>

namespace gpuprov {

/// `apt-get install --download-only` of `req.installs` on the same private view the plan's
/// simulation uses (req.scratch_dir, req.repos), into `download_dir` (Dir::Cache::archives), as
/// if dpkg's database were `status_file` (a fresh host's): apt's own downloader checks every file
/// against the signed index it came from. `error` is set when apt refuses or fails.
[[nodiscard]] PackageTransaction apt_download(System& sys, const SimulationRequest& req,
                                              const std::string& download_dir,
                                              const std::string& status_file);

} // namespace gpuprov
