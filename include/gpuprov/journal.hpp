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
};

struct Journal {
    int schema = 1;
    std::string profile; ///< name as given to apply (built-in name or absolute path)
    std::string profile_source;
    std::string run_started_at;
    std::string run_finished_at;
    std::string result; ///< "running", "done", "failed", "reboot-required"
    bool reboot_pending = false;
    int runs = 0;                   ///< how many apply runs touched this journal
    std::vector<JournalStep> steps; ///< in step order
    [[nodiscard]] const JournalStep* step(std::string_view id) const;
    JournalStep& upsert(std::string_view id);
};

/// nullopt when no journal exists; throws HostError when it exists but does not parse.
[[nodiscard]] std::optional<Journal> load_journal(const System& sys);
/// Atomic write (temp + fsync + rename).
void save_journal(System& sys, const Journal& journal);
[[nodiscard]] std::string journal_to_json_text(const Journal& journal);
[[nodiscard]] Journal journal_from_json_text(std::string_view text);
/// RFC 3339 UTC timestamp of `tp`.
[[nodiscard]] std::string rfc3339(std::chrono::system_clock::time_point tp);

} // namespace gpuprov
