#include "probe.hpp"

#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

CommandResult probe(const System& sys, std::vector<std::string> argv, ProbeLog log) {
    Command cmd;
    cmd.argv = std::move(argv);
    cmd.timeout = kProbeTimeout;
    cmd.log_output = log == ProbeLog::output;
    return sys.query(cmd);
}

std::string output_of(const CommandResult& r) {
    std::string text = std::string(trim(r.out));
    const auto err = trim(r.err);
    if (!err.empty()) {
        if (!text.empty()) {
            text += '\n';
        }
        text += err;
    }
    return text;
}

std::string head_lines(std::string_view text, std::size_t max_lines) {
    const auto all = lines(trim(text));
    std::vector<std::string> kept(
        all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(max_lines, all.size())));
    return join(kept, "\n");
}

std::string failure_text(const CommandResult& r) {
    if (r.not_found) {
        return "not installed (command not found)";
    }
    if (r.timed_out) {
        return "timed out after " + std::to_string(kProbeTimeout.count()) + " s";
    }
    return "exit status " + std::to_string(r.exit_code);
}

GpuQuery query_gpus(const System& sys, ProbeLog log) {
    GpuQuery q;
    auto argv = smi_query_argv();
    q.command = display_argv(argv);
    q.result = probe(sys, std::move(argv), log);
    if (q.result.ok()) {
        q.gpus = parse_smi_query(q.result.out);
    }
    return q;
}

CheckOutcome make_outcome(std::string id, std::string step, std::string command) {
    CheckOutcome c;
    c.id = std::move(id);
    c.step = std::move(step);
    c.command = std::move(command);
    return c;
}

void settle(CheckOutcome& c, bool passed) {
    c.passed = passed;
    if (passed) {
        c.fix.clear();
    }
}

void skip(CheckOutcome& c, const std::string& why) {
    c.found = "skipped: " + why;
    settle(c, false);
    c.fix.clear();
    c.skipped = true;
}

} // namespace gpuprov::nvidia_detail
