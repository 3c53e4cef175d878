#include "cli_common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gpuprov/journal.hpp>
#include <gpuprov/json_text.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

namespace gpuprov::cli {

namespace {

std::string or_dash(const std::string& s) {
    return s.empty() ? "-" : s;
}

void print_human(const Journal& j) {
    std::cout << fmt::format("Profile:   {}{}\n", j.profile,
                             j.profile_source.empty() ? "" : " (" + j.profile_source + ")");
    std::cout << fmt::format("Last run:  {} -> {}, result {} ({} run(s))\n",
                             or_dash(j.run_started_at), or_dash(j.run_finished_at),
                             or_dash(j.result), j.runs);
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

} // namespace

void add_status_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("status", "what the last apply did (the journal)");
    static bool json = false;
    cmd->add_flag("--json", json, "one JSON document on stdout");
    cmd->callback([&opts, &exit_code] {
        const auto journal = load_journal(host_system(opts));
        if (json) {
            nlohmann::json doc = {{"recorded", journal.has_value()}};
            doc["journal"] = journal ? nlohmann::json::parse(journal_to_json_text(*journal))
                                     : nlohmann::json(nullptr);
            std::cout << json_text(doc) << "\n";
        } else if (!journal) {
            std::cout << fmt::format("no runs recorded ({} does not exist)\n", kJournalPath);
        } else {
            print_human(*journal);
        }
        // Scriptable health: a monitoring check or Ansible can ask "did the last run work?".
        exit_code = !journal                               ? kExitOk
                    : journal->result == "failed"          ? kExitFailed
                    : journal->result == "reboot-required" ? kExitRebootRequired
                                                           : kExitOk;
    });
}

} // namespace gpuprov::cli
