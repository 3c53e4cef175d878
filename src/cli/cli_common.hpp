#pragma once
// Shared by the subcommand files. Only src/cli includes CLI11.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <gpuprov/system.hpp>
#include <memory>
#include <optional>
#include <string>

namespace gpuprov::cli {

/// Global flags, filled by CLI11 before any subcommand callback runs.
struct GlobalOptions {
    std::string log_level = "warn";
    std::string log_file; ///< default /var/log/gpuprov.log when root
    bool no_color = false;
    std::string root = "/"; ///< --root: read host files under this directory
    [[nodiscard]] bool color() const;
};

/// --root names a directory other than the host's / (commands would still run on this host).
[[nodiscard]] bool foreign_root(const GlobalOptions& opts);

/// The System every command uses (LocalSystem rooted at --root).
System& host_system(const GlobalOptions& opts);

/// Exit codes (docs/exit-codes.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitChangesPending = 2;
inline constexpr int kExitRebootRequired = 3;
/// status: the last run has not finished yet (a gpuprov run holds the run lock now).
inline constexpr int kExitInProgress = 4;
/// A command line that cannot work: unknown command, flag or step id, a bad or missing value.
/// EX_USAGE (sysexits.h), not 2: a cron job reading `plan --detailed-exitcode` must never take
/// a typo in `--only` for pending changes.
inline constexpr int kExitUsage = 64;

/// Each subcommand registers itself; the callback sets `exit_code`.
void add_profiles_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_facts_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_plan_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_apply_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_verify_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_status_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_doctor_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_metrics_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_cloud_init_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_k8s_manifests_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);

} // namespace gpuprov::cli

namespace gpuprov {
struct StepFilter;
}

namespace gpuprov::cli {
/// A directory made like mkdtemp(3) (mode 0700, an unguessable name) as `prefix`-XXXXXX under
/// $TMPDIR (when absolute) or /tmp, removed with its contents when this object goes. `path` is
/// empty, and `error` says why, when it could not be made.
class PrivateTempDir {
public:
    PrivateTempDir(const GlobalOptions& opts, const System& sys, std::string_view prefix);
    ~PrivateTempDir();
    PrivateTempDir(const PrivateTempDir&) = delete;
    PrivateTempDir& operator=(const PrivateTempDir&) = delete;
    std::string path;  ///< as the System sees it (under --root: relative to the root)
    std::string base;  ///< the directory it was made in
    std::string error; ///< strerror of mkdtemp when it failed

private:
    std::filesystem::path m_made; ///< the directory on the host, to remove
};

/// gpuprov's repository cache for this command: default_repo_cache_dir() when this user can
/// write it, else a private directory made like mkdtemp (0700) under $TMPDIR or /tmp, removed
/// when this object goes. `path` is empty only when neither could be had.
class RepoCacheDir {
public:
    RepoCacheDir(const GlobalOptions& opts, const System& sys);
    ~RepoCacheDir();
    RepoCacheDir(const RepoCacheDir&) = delete;
    RepoCacheDir& operator=(const RepoCacheDir&) = delete;
    std::string path;

private:
    std::optional<PrivateTempDir> m_private; ///< when the home cache cannot be used
};

/// The running binary (/proc/self/exe's target), for copying it where units run gpuprov; empty
/// when unknown. Units never name it.
[[nodiscard]] std::string running_binary();

/// Parses --only/--skip lists; throws UsageError on an unknown step id.
StepFilter make_filter(const std::string& only, const std::string& skip);
/// Prints the plan; returns the plan command's exit code.
int show_plan(const GlobalOptions& opts, const std::string& profile_arg, const StepFilter& filter,
              bool json, bool detailed_exitcode, bool allow_remove = false);
} // namespace gpuprov::cli
