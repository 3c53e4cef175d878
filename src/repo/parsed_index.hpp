#pragma once
// The parsed form of a verified Packages file, kept next to it in gpuprov's repository cache so
// a later plan on an unchanged host skips reading, hashing and parsing the index (most of a
// plan's time on a real NVIDIA index of thousands of records). Private to gpuprov_repo.
#include <filesystem>
#include <gpuprov/repo.hpp>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov::repo_detail {

/// Where the parsed copy of `packages` lives (the same directory, so the same writers).
[[nodiscard]] std::filesystem::path parsed_index_path(const std::filesystem::path& packages);

/// The records saved by save_parsed_index, only when they were parsed from a Packages whose
/// SHA-256 is `signed_sha256` (read from the InRelease just verified) and `packages` on disk is
/// still that very file (same size, inode and mtime). Anything else, a damaged or foreign file
/// included, gives nullopt and the caller parses the index itself.
[[nodiscard]] std::optional<std::vector<PackageRecord>>
load_parsed_index(const System& sys, const std::filesystem::path& packages,
                  const std::string& signed_sha256);

/// Saves `records`, parsed from the `packages` file just checked against `signed_sha256`. A
/// failure to write only costs the next plan a parse, so it is not an error.
void save_parsed_index(System& sys, const std::filesystem::path& packages,
                       const std::string& signed_sha256, const std::vector<PackageRecord>& records);

} // namespace gpuprov::repo_detail
