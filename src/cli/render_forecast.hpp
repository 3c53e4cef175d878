#pragma once
// The next-boot forecast as text: `gpuprov forecast`, and its short section in plan and status.
#include <gpuprov/facts.hpp>
#include <gpuprov/forecast.hpp>
#include <gpuprov/system.hpp>
#include <string>

namespace gpuprov::cli {

/// `full` lists every kernel and the upgrade look-ahead (`gpuprov forecast`); otherwise the
/// verdict and the findings with their fixes (plan, status).
[[nodiscard]] std::string render_forecast_text(const Forecast& f, bool full, bool color);
/// The short forecast section of `plan` and `status` (what is installed, no upgrade
/// look-ahead); empty where there is nothing to forecast: no NVIDIA GPU, or no driver yet.
[[nodiscard]] std::string forecast_section(const System& sys, const HostFacts& facts, bool color);

} // namespace gpuprov::cli
