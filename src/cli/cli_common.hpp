#pragma once
// Shared by the subcommand files. Only src/cli includes CLI11.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <gpuprov/engine.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/saved_plan.hpp>
#include <gpuprov/system.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

/// The values `opt` accepts: its check, and what `gpuprov completion` offers (one list each).
CLI::Option* accept_only(CLI::Option* opt, std::vector<std::string> values);
/// What accept_only() recorded for `opt`; empty when any value goes.
[[nodiscard]] const std::vector<std::string>& accepted_values(const CLI::Option* opt);

/// Value placeholders (CLI11 type names) that also tell `gpuprov completion` how to complete a
/// value: a profile (built-in name or YAML file), a file, a directory, step ids.
inline constexpr const char* kProfileValue = "PROFILE";
inline constexpr const char* kFileValue = "FILE";
inline constexpr const char* kDirValue = "DIR";
inline constexpr const char* kStepsValue = "STEPS";

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
void add_slurm_gres_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_upgrade_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
void add_rollback_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);
/// `gpuprov completion bash|zsh|steps`, generated from `app` itself (added last).
void add_completion_command(CLI::App& app);

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
/// The profile text apply installs for the resume unit (empty for a built-in), as
/// ApplyOptions::profile_text wants it; `gpuprov upgrade` runs apply the same way.
[[nodiscard]] std::string profile_text_for_resume(const std::string& arg, const Profile& profile);
/// As root: the profile, its parents and the running binary must be files only root could
/// have written (--allow-untrusted lifts it). Throws HostError.
void require_local_trust(const System& sys, const std::string& profile_arg, const Profile& profile,
                         const std::string& self);

/// --only/--skip as given: each may repeat and each value may hold several comma-separated
/// ids; repeats add up (`--skip a --skip b` is `--skip a,b`), as with apt's and terraform's
/// repeatable flags.
struct StepFilterArgs {
    std::vector<std::string> only;
    std::vector<std::string> skip;
};
/// Adds --only and --skip to `cmd`; `what` says what a step id selects ("" for the steps
/// themselves, "the checks of " for verify).
void add_step_filter_options(CLI::App* cmd, StepFilterArgs& args, const std::string& what = "");
/// Parses --only/--skip lists; throws UsageError on an unknown step id.
StepFilter make_filter(const StepFilterArgs& args);
/// A plan as `plan` computes it, with what apply needs to hold it to its word.
struct PlanRun {
    Plan plan;
    HostFacts facts;
    /// Set exactly when no transaction was resolved (--root), saying why and how to get it.
    std::optional<std::string> unresolved;
    PlanSeal seal;
    std::optional<Change> binary; ///< gpuprov_binary_change()
};
/// Computes the plan without printing it (apply --plan compares it with the saved one).
/// `fresh_indexes`: every signed index fetched anew, none reused from the cache (a saved plan
/// and its check must see what the mirrors serve now, not what they served 15 minutes ago).
[[nodiscard]] PlanRun compute_plan(const GlobalOptions& opts, const std::string& profile_arg,
                                   const StepFilter& filter, bool allow_remove,
                                   bool fresh_indexes = false);
/// The profile's text a saved plan's digest covers: a built-in's, or a file with its
/// `extends:` chain resolved.
[[nodiscard]] std::string profile_digest_text(const std::string& profile_arg);
/// Prints the plan; returns the plan command's exit code. `out`, when given, receives the
/// plan shown (interactive apply carries out exactly that one; plan --out saves it).
int show_plan(const GlobalOptions& opts, const std::string& profile_arg, const StepFilter& filter,
              bool json, bool detailed_exitcode, bool allow_remove = false, PlanRun* out = nullptr,
              bool fresh_indexes = false);
} // namespace gpuprov::cli
