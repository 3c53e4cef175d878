#pragma once
// What gpgv prints for a signature the test scripts, shaped as gpuprov asks for it: with
// `--output -` the signed text goes to stdout and the status lines (`--status-fd 2`) to stderr;
// otherwise the status lines come on stdout (`--status-fd 1`). Only for tests linking gpuprov_repo.
#include <algorithm>
#include <gpuprov/repo.hpp>
#include <gpuprov/system.hpp>
#include <string>

namespace gpuprov::testing {

inline CommandResult gpgv_answer(const Command& cmd, const std::string& status, int exit_code = 0) {
    const bool output = std::find(cmd.argv.begin(), cmd.argv.end(), "--output") != cmd.argv.end();
    if (!output) {
        return CommandResult{.exit_code = exit_code, .out = status};
    }
    // Real gpgv writes the signed text only for a message it could parse.
    auto text = clearsigned_text(cmd.stdin_data.value_or(""));
    return CommandResult{.exit_code = exit_code, .out = text.value_or(""), .err = status};
}

} // namespace gpuprov::testing
