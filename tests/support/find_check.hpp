#pragma once
// A check outcome by its id, for the tests of checks, verify and doctor (one helper: the engine's
// and the nvidia area's tests had four copies).
#include <algorithm>
#include <gpuprov/check.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace gpuprov::testing {

inline const CheckOutcome* find_check(const std::vector<CheckOutcome>& all, std::string_view id) {
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const CheckOutcome& c) { return c.id == id; });
    return it == all.end() ? nullptr : &*it;
}

// Over a temporary list (a call's result) the outcome is copied out: a pointer into it would
// dangle at the end of the statement (ASan caught `const auto* c = find_check(run(...), id)`).
inline std::optional<CheckOutcome> find_check(std::vector<CheckOutcome>&& all,
                                              std::string_view id) {
    const auto* c = find_check(static_cast<const std::vector<CheckOutcome>&>(all), id);
    return c != nullptr ? std::optional<CheckOutcome>(*c) : std::nullopt;
}

} // namespace gpuprov::testing
