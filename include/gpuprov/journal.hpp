#pragma once
// The run journal, /var/lib/gpuprov/state.json: history of what apply did. Never a substitute
// for a live check.
#include <gpuprov/system.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {

inline constexpr const char* kJournalPath = "/var/lib/gpuprov/state.json";
inline constexpr const char* kRunLockPath = "/run/gpuprov.lock";
inline constexpr const char* kBackupDir = "/var/lib/gpuprov/backup";

struct JournalStep {
    std::string id;
    std::string status;     ///< a StepStatus string: "done", "failed", "reboot-required", ...
    std::string started_at; ///< RFC 3339 UTC
    std::string finished_at;
    std::string message;                         ///< failure or reboot reason
    std::map<std::string, std::string> versions; ///< package → version installed
    /// The reboot budget: the boot id (/proc/sys/kernel/random/boot_id) of the boot in which
    /// this step first asked for a reboot, kept until the step is done or satisfied. A step
    /// that asks again in a later boot had its reboot, and it did not help: it fails.
    std::string reboot_boot_id;
    std::string reboot_requested_at; ///< RFC 3339 UTC, when it first asked
};

/// One finished (or killed) run, kept in Journal::history.
struct JournalRun {
    std::string started_at;
    std::string finished_at; ///< empty: the run was killed before it finished
    std::string result;      ///< as Journal::result; "running" for a run that was killed
    std::string message;
    std::string profile;
    std::string boot_id;
    /// Steps this run did something to (done, failed, reboot-required): status, the seconds
    /// it took, and the versions it installed.
    struct Step {
        std::string id;
        std::string status;
        double seconds = 0;
        std::map<std::string, std::string> versions;
    };
    std::vector<Step> steps;
};

/// How many earlier runs the journal keeps, newest first.
inline constexpr std::size_t kJournalHistory = 10;

/// The NVIDIA packages installed when a run's final verify passed: what `gpuprov rollback`
/// reinstalls (docs/rollback.md). Recorded by apply, once per distinct closure.
struct VerifiedClosure {
    std::string verified_at; ///< RFC 3339 UTC
    /// "apply", or "rollback" for a closure a rollback restored: rollback undoes the newest
    /// change an apply made, never its own (so a second rollback is a no-op).
    std::string via = "apply";
    std::string profile;      ///< as apply was given it (built-in name or absolute path)
    std::string profile_name; ///< the profile's `name:`
    /// The profile as one self-contained YAML document (the resume unit's copy); empty for a
    /// built-in, which `profile` names.
    std::string profile_text;
    std::string driver_branch; ///< "535"; empty without a driver step
    std::string cuda;          ///< cuda.version; empty without one
    /// Package name -> exact installed version: driver, fabric manager, toolkit, libraries.
    std::map<std::string, std::string> packages;
};

/// How many verified closures the journal keeps, newest first.
inline constexpr std::size_t kVerifiedHistory = 10;

struct Journal {
    int schema = 1;
    std::string profile; ///< name as given to apply (built-in name or absolute path)
    std::string profile_source;
    std::string run_started_at;
    std::string run_finished_at;
    std::string result;  ///< "running", "done", "failed", "reboot-required"
    std::string message; ///< the last run's outcome in one line: why it failed, what needs a reboot
    bool reboot_pending = false;
    int runs = 0;                   ///< how many apply runs touched this journal
    std::string boot_id;            ///< the boot the last run ran in (empty: unknown)
    std::vector<JournalStep> steps; ///< in step order
    /// The runs before this one, newest first, at most kJournalHistory.
    std::vector<JournalRun> history;
    /// Closures the final verify passed on, newest first, at most kVerifiedHistory; one entry
    /// per change (a converged re-run adds none).
    std::vector<VerifiedClosure> verified;
    [[nodiscard]] const JournalStep* step(std::string_view id) const;
    /// Moves the run this journal describes into `history` (steps that ran in it, with their
    /// durations), before a new run starts; a journal that never ran adds nothing.
    void archive_last_run();
    JournalStep& upsert(std::string_view id);
};

inline constexpr const char* kBootIdPath = "/proc/sys/kernel/random/boot_id";

/// nullopt when no journal exists; throws HostError when it exists but does not parse.
[[nodiscard]] std::optional<Journal> load_journal(const System& sys);

struct RecoveredJournal {
    std::optional<Journal> journal; ///< nullopt: none, or it was unreadable and moved aside
    std::string moved_to;           ///< where an unreadable journal went; empty when none
};
/// For apply, which must not stop on a damaged history: a journal that does not parse is moved
/// to state.json.corrupt-<UTC time> (kept for a human to read) and the run starts afresh.
[[nodiscard]] RecoveredJournal load_journal_or_move_aside(System& sys);

/// The last run's result as it stands now: the journal's `result`, except for one still
/// "running": that is "running" while a gpuprov process holds kRunLockPath, and "interrupted"
/// once none does (the run was killed: SIGKILL, the OOM killer, a power cut), since a live
/// apply holds that lock from before the journal says "running" until after its final entry.
[[nodiscard]] std::string last_run_result(const System& sys, const Journal& journal);

/// This boot's id, trimmed; empty when the kernel does not expose one (some containers).
[[nodiscard]] std::string current_boot_id(const System& sys);
/// Atomic write (temp + fsync + rename).
void save_journal(System& sys, const Journal& journal);
[[nodiscard]] std::string journal_to_json_text(const Journal& journal);
[[nodiscard]] Journal journal_from_json_text(std::string_view text);
/// RFC 3339 UTC timestamp of `tp`.
[[nodiscard]] std::string rfc3339(std::chrono::system_clock::time_point tp);

} // namespace gpuprov
