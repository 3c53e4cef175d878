#pragma once
// `gpuprov forecast` (registered like the commands of cli_common.hpp).
#include "cli_common.hpp"

namespace gpuprov::cli {

void add_forecast_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);

} // namespace gpuprov::cli
