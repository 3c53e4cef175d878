#include "console.hpp"

#include "render.hpp"

#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

namespace gpuprov::cli {

ConsoleReporter::ConsoleReporter(bool color, bool quiet)
    : m_color(color), m_quiet(quiet), m_live(!quiet && ::isatty(1) != 0) {}

void ConsoleReporter::step_started(std::string_view id, std::string_view what) {
    say(fmt::format("==> {}: {}", id, what));
}
void ConsoleReporter::step_finished(std::string_view id, StepStatus status,
                                    std::string_view message) {
    if (status == StepStatus::satisfied || status == StepStatus::skipped) {
        say(fmt::format("    {:<18} {}", id, status_word(status, m_color)));
        return;
    }
    say(fmt::format("    {:<18} {}{}", id, status_word(status, m_color),
                    message.empty() ? "" : fmt::format(": {}", message)));
}
void ConsoleReporter::info(std::string_view message) {
    say(fmt::format("    {}", message));
}

/// On a terminal one live line, redrawn in place; elsewhere (cloud-init's log, a pipe,
/// --json's stderr) a line every 5 s at most, so a 20-minute install is neither silent nor
/// thousands of lines.
void ConsoleReporter::progress(double percent, std::string_view what) {
    const auto now = std::chrono::steady_clock::now();
    if (!m_progress_started) {
        m_progress_started = now;
        m_last_printed = now - std::chrono::hours(1);
        m_last_percent = -1;
    }
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::seconds>(now - *m_progress_started).count();
    m_pending =
        fmt::format("    [{:3.0f}%] {}  ({}:{:02d})", percent, what, elapsed / 60, elapsed % 60);
    if (m_live) {
        std::cout << "\r\033[K" << m_pending << std::flush;
        m_live_shown = true;
        m_pending.clear();
        return;
    }
    // A new phase (the download's 100% then dpkg's 0%) is news; otherwise every 5 s.
    if (percent < m_last_percent || now - m_last_printed >= std::chrono::seconds(5)) {
        say(m_pending);
        m_pending.clear();
        m_last_printed = now;
    }
    m_last_percent = percent;
}
void ConsoleReporter::progress_done() {
    if (m_live_shown) {
        std::cout << "\r\033[K" << std::flush;
    } else if (!m_pending.empty()) {
        say(m_pending); // where it ended, even inside the last 5 s
    }
    m_live_shown = false;
    m_pending.clear();
    m_progress_started.reset();
}

void ConsoleReporter::say(const std::string& line) const {
    // With --json, stdout carries only the document; progress goes to stderr.
    (m_quiet ? std::cerr : std::cout) << line << std::endl;
}

bool confirm(std::string_view question) {
    std::cout << question << " [y/N] " << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    return answer == "y" || answer == "Y" || answer == "yes";
}

} // namespace gpuprov::cli
