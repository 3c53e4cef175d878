#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/system.hpp>

namespace gpuprov {

std::string display_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& word : argv) {
        if (!out.empty()) {
            out += ' ';
        }
        const bool plain =
            !word.empty() &&
            word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-_./=:+,@%") == std::string::npos;
        if (plain) {
            out += word;
        } else {
            out += '\'' + replace_all(word, "'", "'\\''") + '\'';
        }
    }
    return out;
}

CommandResult run_checked(System& sys, const Command& cmd) {
    auto result = sys.run(cmd);
    if (!result.ok()) {
        std::string why;
        if (result.not_found) {
            why = "could not be started";
        } else if (result.interrupted) {
            why = "was stopped: gpuprov is stopping";
        } else if (result.idle) {
            why = fmt::format("produced no output for {} s", cmd.idle_timeout.count() / 1000);
        } else if (result.timed_out) {
            why = fmt::format("timed out after {} s", cmd.timeout.count() / 1000);
        } else {
            why = fmt::format("exited {}", result.exit_code);
        }
        auto tail = tail_lines(result.err.empty() ? result.out : result.err, 8);
        throw CommandError(fmt::format("`{}` {}{}{}", display_argv(cmd.argv), why,
                                       tail.empty() ? "" : ":\n", tail));
    }
    return result;
}

} // namespace gpuprov
