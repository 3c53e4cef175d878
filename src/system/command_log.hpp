#pragma once
// The record of every command gpuprov runs: argv, exit status, duration and the full output
// (or only its size, for the metrics timer's probes), through spdlog (the file sink keeps
// everything; the console shows what --log-level asks for).
#include <chrono>
#include <gpuprov/system.hpp>
#include <string>

namespace gpuprov::detail {

/// Bytes of each stream kept in the log per command; a longer one keeps its last bytes, which
/// hold the error (apt, dpkg and dkms print it last).
inline constexpr std::size_t kLoggedOutputBytes = 1u << 20;

/// `changes`: a command that may change the host (System::run) is logged at info, a read-only
/// probe (System::query) at debug; either's output at debug, unless Command::log_output is
/// false: then only the summary line, with the size of each stream.
void log_command(const Command& cmd, const CommandResult& result,
                 std::chrono::steady_clock::duration took, bool changes);

/// How a result ended, in words: "exit 0", "killed by signal 9", "timed out", ...
[[nodiscard]] std::string describe_outcome(const CommandResult& result);

} // namespace gpuprov::detail
