#include <fmt/chrono.h>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/strings.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

using nlohmann::json;

const JournalStep* Journal::step(std::string_view id) const {
    for (const auto& s : steps) {
        if (s.id == id) {
            return &s;
        }
    }
    return nullptr;
}

JournalStep& Journal::upsert(std::string_view id) {
    for (auto& s : steps) {
        if (s.id == id) {
            return s;
        }
    }
    steps.push_back(JournalStep{.id = std::string(id)});
    return steps.back();
}

std::string rfc3339(std::chrono::system_clock::time_point tp) {
    const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(tp);
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", secs);
}

std::string journal_to_json_text(const Journal& j) {
    json steps = json::array();
    for (const auto& s : j.steps) {
        steps.push_back({{"id", s.id},
                         {"status", s.status},
                         {"started_at", s.started_at},
                         {"finished_at", s.finished_at},
                         {"message", s.message},
                         {"versions", s.versions},
                         {"reboot_boot_id", s.reboot_boot_id},
                         {"reboot_requested_at", s.reboot_requested_at}});
    }
    const json doc = {{"schema", j.schema},
                      {"profile", j.profile},
                      {"profile_source", j.profile_source},
                      {"run_started_at", j.run_started_at},
                      {"run_finished_at", j.run_finished_at},
                      {"result", j.result},
                      {"message", j.message},
                      {"reboot_pending", j.reboot_pending},
                      {"runs", j.runs},
                      {"boot_id", j.boot_id},
                      {"steps", steps}};
    return json_text(doc) + "\n";
}

Journal journal_from_json_text(std::string_view text) {
    const auto doc = json::parse(text.begin(), text.end());
    Journal j;
    j.schema = doc.value("schema", 1);
    j.profile = doc.value("profile", "");
    j.profile_source = doc.value("profile_source", "");
    j.run_started_at = doc.value("run_started_at", "");
    j.run_finished_at = doc.value("run_finished_at", "");
    j.result = doc.value("result", "");
    j.message = doc.value("message", "");
    j.reboot_pending = doc.value("reboot_pending", false);
    j.runs = doc.value("runs", 0);
    // Fields added after schema 1 shipped default to empty, so older files still load.
    j.boot_id = doc.value("boot_id", "");
    for (const auto& s : doc.value("steps", json::array())) {
        JournalStep step;
        step.id = s.value("id", "");
        step.status = s.value("status", "");
        step.started_at = s.value("started_at", "");
        step.finished_at = s.value("finished_at", "");
        step.message = s.value("message", "");
        step.versions = s.value("versions", std::map<std::string, std::string>{});
        step.reboot_boot_id = s.value("reboot_boot_id", "");
        step.reboot_requested_at = s.value("reboot_requested_at", "");
        j.steps.push_back(std::move(step));
    }
    return j;
}

std::optional<Journal> load_journal(const System& sys) {
    const auto text = sys.read_file(kJournalPath);
    if (!text) {
        return std::nullopt;
    }
    try {
        return journal_from_json_text(*text);
    } catch (const json::exception& e) {
        throw HostError(
            fmt::format("{} is not a gpuprov journal ({}); move it aside to start afresh",
                        kJournalPath, e.what()));
    }
}

RecoveredJournal load_journal_or_move_aside(System& sys) {
    try {
        return {load_journal(sys), {}};
    } catch (const HostError&) {
        // A copy, then the removal: System has no rename, and a kill between the two leaves
        // both, which the next run handles the same way.
        const auto text = sys.read_file(kJournalPath).value_or("");
        auto stamp = replace_all(rfc3339(sys.now()), ":", "");
        const auto moved = fmt::format("{}.corrupt-{}", kJournalPath, stamp);
        sys.write_file_atomic(moved, text, 0600);
        sys.remove_file(kJournalPath);
        return {std::nullopt, moved};
    }
}

std::string current_boot_id(const System& sys) {
    return std::string(trim(sys.read_file(kBootIdPath).value_or("")));
}

void save_journal(System& sys, const Journal& journal) {
    sys.write_file_atomic(kJournalPath, journal_to_json_text(journal), 0644);
}

} // namespace gpuprov
