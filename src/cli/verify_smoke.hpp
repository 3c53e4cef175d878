#pragma once
// verify --smoke: running the smoke tests for the CLI and showing them (text, JSON, JUnit).
#include "cli_common.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/smoke.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprov::cli {

/// Throws UsageError under --root: the programs would run on this host, not in the root.
void refuse_smoke_under_root(const GlobalOptions& opts);
/// Runs the smoke tests in a private directory (removed afterwards).
[[nodiscard]] std::vector<SmokeOutcome> run_smoke_tests(const GlobalOptions& opts, System& sys,
                                                        const Profile& profile,
                                                        const HostFacts& facts);
/// "smoke:" then one line per test (✓ passed, ✗ failed, - skipped) with its reason and fix.
void print_smoke_human(const std::vector<SmokeOutcome>& smoke, bool color);
[[nodiscard]] nlohmann::json smoke_to_json(const std::vector<SmokeOutcome>& smoke);
/// JUnit <testcase> elements (classname gpuprov.smoke), `escape` applied to every text.
[[nodiscard]] std::string smoke_junit_cases(const std::vector<SmokeOutcome>& smoke,
                                            std::string (*escape)(std::string_view));
[[nodiscard]] bool any_failed(const std::vector<SmokeOutcome>& smoke);

} // namespace gpuprov::cli
