#pragma once
#include <chrono>
// Helpers shared by the steps: managed files with backups and diffs, package pins from a
// repository index, systemd unit enabling.
#include <functional>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/step.hpp>
#include <gpuprov/units.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov::steps {

struct ManagedFile {
    std::string path;
    std::string content;
    unsigned mode = 0644;
};

[[nodiscard]] bool file_matches(const System& sys, const ManagedFile& f);
/// A `file` change with the unified diff from what is there now.
[[nodiscard]] Change file_change(const System& sys, const ManagedFile& f);
/// The most a file gpuprov puts back may allow: what it manages is configuration (keys,
/// sources, modprobe and unit files, daemon.json), never executable, setuid, or writable by
/// anyone but its owner.
inline constexpr unsigned kMaxRestoredMode = 0644;
/// The mode to put `path` back with: that of the file it resolves to (a link's own mode is
/// 0777 and means nothing), within kMaxRestoredMode; `fallback` (also clamped) when missing.
[[nodiscard]] unsigned restorable_mode(const System& sys, const std::string& path,
                                       unsigned fallback = kMaxRestoredMode);
/// Keeps the previous version under /var/lib/gpuprov/backup/, then writes atomically. A link
/// is replaced by the file (rename(2)); the backup holds what the link led to, with its mode.
void write_managed(System& sys, const ManagedFile& f);
/// Restores the backup taken by write_managed, or removes the file if there was none. The
/// mode is the recorded one within kMaxRestoredMode: a restore never widens permissions.
void restore_managed(System& sys, const std::string& path);

[[nodiscard]] Change command_change(const Command& cmd, std::string why = {});
[[nodiscard]] Change note(std::string text);
/// "2026-12" (UTC) for comparing with the matrix's end-of-life months.
[[nodiscard]] std::string year_month(std::chrono::system_clock::time_point when);

/// What writing a repository in place plans, the same for apt and dnf: blocked without a
/// fingerprint-checked key; otherwise the key file, the source file `config` makes from the
/// verified state (with its diff), and the refresh of that one source.
void plan_repository_write(const StepContext& ctx, const System& sys, const std::string& repo_name,
                           const std::string& key_path,
                           const std::function<ManagedFile(const RepoState&)>& config,
                           const std::string& refresh_why, CheckResult& r);

/// Key and source are right but the package manager's own index of the repository is missing
/// or stale (a run killed before its refresh, `dnf clean all`): plans the refresh of that one
/// source alone, `why` naming the file.
void plan_source_refresh(const StepContext& ctx, const std::string& source_file,
                         const std::string& why, CheckResult& r);

/// The package manager for this host, or nullptr; sets `r` blocked with the reason when none.
[[nodiscard]] std::unique_ptr<PackageManager> package_manager_or_block(const StepContext& ctx,
                                                                       CheckResult& r);

/// The repository's index, or nullptr with `r` blocked and the reason (URL, status).
[[nodiscard]] const PackageIndex* index_or_block(const StepContext& ctx, const std::string& repo,
                                                 CheckResult& r);

enum class VersionMatch {
    prefix, ///< the newest version starting with the given text ("550.", "9.1.")
    exact,  ///< exactly the given version (packages that must move in lockstep)
};

/// Whether every package is installed with a version matching `version` (by default, starting
/// with it; an empty prefix accepts any version).
[[nodiscard]] bool all_installed(const System& sys, const PackageManager& pm,
                                 const std::vector<std::string>& packages,
                                 std::string_view version = {},
                                 VersionMatch match = VersionMatch::prefix);

/// Adds package changes and pins for `pins` to `r` and marks it pending.
void plan_installs(CheckResult& r, const System& sys, const PackageManager& pm,
                   const std::vector<PackagePin>& pins);

/// The package names of this host's family (the matrix's `packages`), or nullptr with `r`
/// blocked.
[[nodiscard]] const PackageNames* package_names_or_block(const StepContext& ctx, CheckResult& r);

} // namespace gpuprov::steps
