#include <cstdint>
#include <ctime>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/strings.hpp>
#include <nlohmann/json.hpp>
#include <optional>

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

namespace {

/// Seconds between two of rfc3339()'s timestamps; 0 when either is missing or unreadable.
double seconds_between(const std::string& from, const std::string& to) {
    const auto parse = [](const std::string& t) -> std::optional<std::int64_t> {
        std::tm tm{};
        if (t.size() != 20 || ::strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) {
            return std::nullopt;
        }
        return static_cast<std::int64_t>(::timegm(&tm));
    };
    const auto a = parse(from);
    const auto b = parse(to);
    return a && b && *b >= *a ? static_cast<double>(*b - *a) : 0.0;
}

} // namespace

void Journal::archive_last_run() {
    if (run_started_at.empty()) {
        return;
    }
    JournalRun run{.started_at = run_started_at,
                   .finished_at = run_finished_at,
                   .result = result,
                   .message = message,
                   .profile = profile,
                   .boot_id = boot_id};
    for (const auto& s : steps) {
        // A step's entry is this run's when it was written after the run started.
        if ((s.status == "done" || s.status == "failed" || s.status == "reboot-required") &&
            s.finished_at >= run_started_at) {
            run.steps.push_back(
                {s.id, s.status, seconds_between(s.started_at, s.finished_at), s.versions});
        }
    }
    history.insert(history.begin(), std::move(run));
    if (history.size() > kJournalHistory) {
        history.resize(kJournalHistory);
    }
}

std::string rfc3339(std::chrono::system_clock::time_point tp) {
    const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(tp);
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", secs);
}

namespace {

json history_json(const std::vector<JournalRun>& runs) {
    json out = json::array();
    for (const auto& r : runs) {
        json steps = json::array();
        for (const auto& s : r.steps) {
            steps.push_back({{"id", s.id},
                             {"status", s.status},
                             {"seconds", s.seconds},
                             {"versions", s.versions}});
        }
        out.push_back({{"started_at", r.started_at},
                       {"finished_at", r.finished_at},
                       {"result", r.result},
                       {"message", r.message},
                       {"profile", r.profile},
                       {"boot_id", r.boot_id},
                       {"steps", steps}});
    }
    return out;
}

json verified_json(const std::vector<VerifiedClosure>& closures) {
    json out = json::array();
    for (const auto& c : closures) {
        out.push_back({{"verified_at", c.verified_at},
                       {"via", c.via},
                       {"profile", c.profile},
                       {"profile_name", c.profile_name},
                       {"profile_text", c.profile_text},
                       {"driver_branch", c.driver_branch},
                       {"cuda", c.cuda},
                       {"packages", c.packages}});
    }
    return out;
}

} // namespace

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
                      {"steps", steps},
                      {"history", history_json(j.history)},
                      {"verified", verified_json(j.verified)}};
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
    for (const auto& r : doc.value("history", json::array())) {
        JournalRun run;
        run.started_at = r.value("started_at", "");
        run.finished_at = r.value("finished_at", "");
        run.result = r.value("result", "");
        run.message = r.value("message", "");
        run.profile = r.value("profile", "");
        run.boot_id = r.value("boot_id", "");
        for (const auto& s : r.value("steps", json::array())) {
            run.steps.push_back({s.value("id", ""), s.value("status", ""), s.value("seconds", 0.0),
                                 s.value("versions", std::map<std::string, std::string>{})});
        }
        j.history.push_back(std::move(run));
    }
    for (const auto& c : doc.value("verified", json::array())) {
        j.verified.push_back(
            {.verified_at = c.value("verified_at", ""),
             .via = c.value("via", "apply"),
             .profile = c.value("profile", ""),
             .profile_name = c.value("profile_name", ""),
             .profile_text = c.value("profile_text", ""),
             .driver_branch = c.value("driver_branch", ""),
             .cuda = c.value("cuda", ""),
             .packages = c.value("packages", std::map<std::string, std::string>{})});
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

std::string last_run_result(const System& sys, const Journal& journal) {
    if (journal.result != "running") {
        return journal.result;
    }
    // lock_holder only looks (a shared flock probe, dropped at once): status changes nothing,
    // works unprivileged (the lock file is 0644), and a missing file means no run ever held it.
    return sys.lock_holder(kRunLockPath) ? "running" : "interrupted";
}

std::string current_boot_id(const System& sys) {
    return std::string(trim(sys.read_file(kBootIdPath).value_or("")));
}

void save_journal(System& sys, const Journal& journal) {
    sys.write_file_atomic(kJournalPath, journal_to_json_text(journal), 0644);
}

} // namespace gpuprov
