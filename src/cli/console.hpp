#pragma once
// The operator's console for the commands that change the host (apply, rollback, upgrade): step
// lines and progress as they happen, and the one question asked before a change.
#include <chrono>
#include <gpuprov/engine.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov::cli {

class ConsoleReporter final : public Reporter {
public:
    /// `quiet`: stdout carries a JSON document, so the lines go to stderr.
    ConsoleReporter(bool color, bool quiet);
    void step_started(std::string_view id, std::string_view what) override;
    void step_finished(std::string_view id, StepStatus status, std::string_view message) override;
    void info(std::string_view message) override;
    void progress(double percent, std::string_view what) override;
    void progress_done() override;

private:
    void say(const std::string& line) const;
    bool m_color;
    bool m_quiet;
    bool m_live;
    bool m_live_shown = false;
    std::optional<std::chrono::steady_clock::time_point> m_progress_started;
    std::chrono::steady_clock::time_point m_last_printed{};
    double m_last_percent = -1;
    std::string m_pending; ///< the newest update not printed yet
};

/// Asks `question` with " [y/N] " on the terminal; only y, Y or yes is a yes.
[[nodiscard]] bool confirm(std::string_view question);

} // namespace gpuprov::cli
