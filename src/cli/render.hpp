#pragma once
#include <gpuprov/engine.hpp>
#include <gpuprov/facts.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace gpuprov::cli {

/// Human plan: one block per step, changes indented under it, a summary line.
[[nodiscard]] std::string render_plan_text(const Plan& plan, const HostFacts& facts, bool color);
/// The `plan --json` document: {profile, profile_source, host, steps[], summary}.
[[nodiscard]] nlohmann::json plan_to_json(const Plan& plan, const HostFacts& facts);
/// ANSI colour for a status word, or the word itself when `color` is off.
[[nodiscard]] std::string status_word(StepStatus status, bool color);

} // namespace gpuprov::cli
