#include "command_log.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <string_view>

namespace gpuprov::detail {

namespace {

void log_stream(std::string_view name, const std::string& text) {
    if (text.empty()) {
        return;
    }
    std::string_view body = text;
    std::string note;
    if (body.size() > kLoggedOutputBytes) {
        note = fmt::format(" (first {} bytes left out)", body.size() - kLoggedOutputBytes);
        body.remove_prefix(body.size() - kLoggedOutputBytes);
    }
    if (!note.empty()) {
        spdlog::debug("  {}{}", name, note);
    }
    while (!body.empty()) {
        const auto nl = body.find('\n');
        spdlog::debug("  {}| {}", name, body.substr(0, nl));
        if (nl == std::string_view::npos) {
            break;
        }
        body.remove_prefix(nl + 1);
    }
}

/// "0 B", "512 B", "2.1 KiB", "3.4 MiB".
std::string size_text(std::size_t bytes) {
    if (bytes < 1024) {
        return fmt::format("{} B", bytes);
    }
    if (bytes < 1024 * 1024) {
        return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
    }
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024 * 1024));
}

} // namespace

std::string describe_outcome(const CommandResult& r) {
    if (r.not_found) {
        return "could not be started (not found)";
    }
    if (r.interrupted) {
        return r.pid == 0 ? "not started: gpuprov is stopping" : "stopped: gpuprov is stopping";
    }
    if (r.idle) {
        return "killed: no output for its idle timeout";
    }
    if (r.timed_out) {
        return "killed: timed out";
    }
    if (r.exit_code > 128) {
        return fmt::format("exit {} (signal {})", r.exit_code, r.exit_code - 128);
    }
    return fmt::format("exit {}", r.exit_code);
}

void log_command(const Command& cmd, const CommandResult& result,
                 std::chrono::steady_clock::duration took, bool changes) {
    const auto seconds = std::chrono::duration<double>(took).count();
    auto line = fmt::format("{} `{}` -> {} in {:.3f} s", changes ? "run" : "query",
                            display_argv(cmd.argv), describe_outcome(result), seconds);
    // A read-only query that succeeded has said what gpuprov parsed from it; its output (a
    // Packages file's worth of apt-cache, a page of nvidia-smi) would bury the commands that
    // change the host. A failed one keeps it: that is what the reader needs.
    const bool quiet_query = !changes && result.ok();
    if (!cmd.log_output || quiet_query) {
        line += fmt::format(" (stdout {}, stderr {}, not logged{})", size_text(result.out.size()),
                            size_text(result.err.size()),
                            cmd.log_output ? ": a query that succeeded" : "");
    }
    if (changes) {
        spdlog::info("{}", line);
    } else {
        spdlog::debug("{}", line);
    }
    if (!cmd.log_output || quiet_query) {
        return;
    }
    log_stream("stdout", result.out);
    log_stream("stderr", result.err);
}

} // namespace gpuprov::detail
