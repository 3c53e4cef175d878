#include "cli_common.hpp"
#include "render.hpp"
#include "render_forecast.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/upgrade.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

namespace gpuprov::cli {

namespace {

std::string or_dash(const std::string& s) {
    return s.empty() ? "-" : s;
}

std::string result_note(const std::string& result) {
    if (result == "interrupted") {
        return fmt::format(" (it ended without a final entry and no gpuprov holds {}: killed, "
                           "or the machine went down; run apply again to finish)",
                           kRunLockPath);
    }
    if (result == "running") {
        return fmt::format(" (a gpuprov run holds {} now)", kRunLockPath);
    }
    return {};
}

void print_human(const Journal& j, const std::string& result) {
    std::cout << fmt::format("Profile:   {}{}\n", j.profile,
                             j.profile_source.empty() ? "" : " (" + j.profile_source + ")");
    std::cout << fmt::format("Last run:  {} -> {}, result {}{} ({} run(s))\n",
                             or_dash(j.run_started_at), or_dash(j.run_finished_at), or_dash(result),
                             result_note(result), j.runs);
    if (!j.message.empty()) {
        std::cout << fmt::format("Message:   {}\n", j.message);
    }
    std::cout << fmt::format("Reboot:    {}\n", j.reboot_pending ? "pending" : "not pending");
    if (j.steps.empty()) {
        return;
    }
    std::cout << "Steps:\n";
    for (const auto& s : j.steps) {
        std::cout << fmt::format("  {:<18} {:<16} {}{}\n", s.id, s.status,
                                 or_dash(s.finished_at.empty() ? s.started_at : s.finished_at),
                                 s.message.empty() ? "" : "  " + s.message);
    }
    if (j.history.empty()) {
        return;
    }
    std::cout << "Earlier runs (newest first):\n";
    for (const auto& r : j.history) {
        std::vector<std::string> ran;
        for (const auto& s : r.steps) {
            ran.push_back(fmt::format("{} {} {:.0f}s", s.id, s.status, s.seconds));
        }
        std::cout << fmt::format(
            "  {}  {:<16} {}\n", or_dash(r.started_at), r.result == "running" ? "killed" : r.result,
            ran.empty() ? std::string("nothing to do") : fmt::format("{}", fmt::join(ran, ", ")));
    }
}

// The upgrade record, or why it cannot be read: status reports, it does not fail on it.
struct UpgradeRecord {
    std::optional<UpgradeState> state;
    std::string error;
};

UpgradeRecord read_upgrade_record(const System& sys) {
    try {
        return {load_upgrade_state(sys), {}};
    } catch (const HostError& e) {
        return {std::nullopt, e.what()};
    }
}

void print_upgrade(const UpgradeRecord& u) {
    if (!u.error.empty()) {
        std::cout << fmt::format("Upgrade:   unreadable: {}\n", u.error);
        return;
    }
    if (!u.state) {
        return;
    }
    const auto lines = upgrade_summary(*u.state);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::cout << fmt::format("{}{}\n", i == 0 ? "Upgrade:   " : "           ", lines[i]);
    }
}

} // namespace

void add_status_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd =
        app.add_subcommand("status", "what the last apply and upgrade did (their journals)");
    static bool json = false;
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->callback([&opts, &exit_code] {
        const auto& sys = host_system(opts);
        const auto journal = load_journal(sys);
        // A journal that still says "running" is judged by the run lock: a killed run must not
        // read as success to cloud-init or a monitoring check.
        const auto result = journal ? last_run_result(sys, *journal) : std::string();
        const auto upgrade = read_upgrade_record(sys);
        if (json) {
            nlohmann::json doc = {{"recorded", journal.has_value()},
                                  {"result", journal ? nlohmann::json(result) : nullptr}};
            doc["journal"] = journal ? nlohmann::json::parse(journal_to_json_text(*journal))
                                     : nlohmann::json(nullptr);
            doc["upgrade"] = upgrade.state
                                 ? nlohmann::json::parse(upgrade_state_to_json_text(*upgrade.state))
                                 : nlohmann::json(nullptr);
            if (!upgrade.error.empty()) {
                doc["upgrade_error"] = upgrade.error;
            }
            std::cout << json_text(versioned(std::move(doc))) << "\n";
        } else if (!journal) {
            std::cout << fmt::format("no runs recorded ({} does not exist)\n", kJournalPath);
            print_upgrade(upgrade);
        } else {
            print_human(*journal, result);
            print_upgrade(upgrade);
            if (!foreign_root(opts)) {
                std::cout << forecast_section(sys, detect_facts(sys, Matrix::builtin()),
                                              opts.color());
            }
        }
        // Scriptable health: a monitoring check or Ansible can ask "did the last run work?".
        // Only a finished run that converged (or none yet) is 0. An upgrade that failed after
        // it left the node drained: that is the last word until another run.
        const bool upgrade_failed =
            upgrade.state &&
            upgrade_failed_since(*upgrade.state, journal ? journal->run_started_at : "");
        exit_code = upgrade_failed                ? kExitFailed
                    : !journal                    ? kExitOk
                    : result == "done"            ? kExitOk
                    : result == "reboot-required" ? kExitRebootRequired
                    : result == "running"         ? kExitInProgress
                                                  : kExitFailed;
    });
}

} // namespace gpuprov::cli
