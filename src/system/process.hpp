#pragma once
#include <gpuprov/system.hpp>

namespace gpuprov::detail {

/// posix_spawn + poll on both pipes + kill on timeout. argv[0] is looked up in PATH.
CommandResult run_process(const Command& cmd);

} // namespace gpuprov::detail
