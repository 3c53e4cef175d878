#pragma once
// The process runner's side of include/gpuprov/interrupt.hpp.
#include <sys/types.h>

namespace gpuprov::detail {

/// How many stop signals have arrived (cleared by clear_stop_request()).
[[nodiscard]] unsigned stop_count() noexcept;

/// Read end of the self-pipe the handler writes a byte to, so a runner blocked in poll() wakes
/// at once; -1 before install_stop_handlers(). Level-triggered: drain it after waking.
[[nodiscard]] int stop_wakeup_fd() noexcept;
void drain_stop_wakeups() noexcept;

/// The running command's process group, so a forced quit (a second signal) can take it along
/// instead of leaving it without a reader; `finishing` tells the handler that the runner itself
/// decides what a further signal means (a finish_on_stop command). 0 when none runs. One slot:
/// gpuprov runs one command at a time.
void set_running_child(pid_t pgid, bool finishing) noexcept;

} // namespace gpuprov::detail
