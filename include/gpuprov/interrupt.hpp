#pragma once
// Stop requests: SIGINT (Ctrl-C), SIGTERM (systemctl stop, shutdown) and SIGHUP (a closed
// terminal) become a flag instead of killing gpuprov on the spot, so a run can end cleanly with
// its journal saved and no apt or dpkg left running without its reader.
//
// What a stop does (the process runner and the engine share the work):
//  - the command running now is stopped (SIGTERM to its process group, SIGKILL after a short
//    grace) and returns CommandResult::interrupted; a command marked Command::finish_on_stop (a
//    dpkg transaction) runs to completion instead, so dpkg is not left half-configured;
//  - no new command starts: the runner returns `interrupted` for it without running it;
//  - the engine checks stop_requested() between steps and ends the run with the journal saved.
// A second signal quits at once (as if no handler were installed), taking the running
// command's process group with it. While a finish_on_stop command runs, the second signal
// instead stops that command (it must come at least a second after the first, so one hurried
// double Ctrl-C does not abort a package transaction); a third then quits at once.
#include <string_view>

namespace gpuprov {

/// Catches SIGINT, SIGTERM and SIGHUP, and ignores SIGPIPE in gpuprov itself (a write to a
/// closed pipe or socket then fails with EPIPE instead of killing it; children still start with
/// every signal at its default). A signal already ignored when gpuprov starts (`nohup`, a
/// background job of a non-interactive shell) stays ignored. Call once, first thing in main().
void install_stop_handlers();

/// Whether a stop signal has arrived since start-up.
[[nodiscard]] bool stop_requested() noexcept;

/// The first stop signal received (SIGINT, SIGTERM or SIGHUP); 0 when none.
[[nodiscard]] int stop_signal() noexcept;

/// "SIGINT", "SIGTERM", "SIGHUP"; empty when no stop was requested.
[[nodiscard]] std::string_view stop_signal_name() noexcept;

/// The conventional exit status for a run ended by the stop: 128 + the signal (130 for
/// Ctrl-C, 143 for SIGTERM); 0 when no stop was requested.
[[nodiscard]] int stop_exit_code() noexcept;

/// Forgets every stop request. For tests, which raise signals at themselves one case after
/// another; gpuprov itself never takes a stop back.
void clear_stop_request() noexcept;

} // namespace gpuprov
