#pragma once
#include <gpuprov/system.hpp>

namespace gpuprov::detail {

/// Runs one command: posix_spawn into its own process group, with every signal at its default
/// and the environment of child_env.hpp; argv[0] is looked up in the child's PATH.
///
/// The deadlines are the child's, not its pipes': the result comes as soon as the child exits
/// (what it wrote is drained for at most 200 ms, so a daemon it started that still holds the
/// pipes is left alone and not waited for), and a child past Command::timeout, silent past
/// Command::idle_timeout, or running when gpuprov is asked to stop (unless
/// Command::finish_on_stop) is ended with its whole group: SIGTERM, 2 s grace, SIGKILL, reap.
/// Both pipes are read throughout, so a child never blocks on a full pipe.
/// Command::cwd: the child starts there (posix_spawn_file_actions_addchdir_np on glibc >= 2.29,
/// gpuprov itself changing directory around the spawn before that).
CommandResult run_process(const Command& cmd);

/// Tests only: use the pre-2.29 way of starting a child in Command::cwd on any glibc.
void force_chdir_fallback(bool on);

} // namespace gpuprov::detail
