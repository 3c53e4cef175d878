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
/// The version of every JSON document gpuprov prints (plan, apply, verify, doctor, status,
/// facts; docs/json.md): a consumer (the Ansible module, a CI parser) checks it first. Raised
/// when a field is removed or changes meaning; adding a field keeps it.
inline constexpr int kJsonFormatVersion = 1;
/// `doc` with its "format_version" set.
[[nodiscard]] inline nlohmann::json versioned(nlohmann::json doc) {
    doc["format_version"] = kJsonFormatVersion;
    return doc;
}
/// ANSI colour for a status word, or the word itself when `color` is off.
[[nodiscard]] std::string status_word(StepStatus status, bool color);

} // namespace gpuprov::cli
