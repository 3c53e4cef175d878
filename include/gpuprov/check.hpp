#pragma once
// One verification result: what was run, what it printed, what was expected and found.
// `verify`, the steps' verify part and `doctor` all speak in these.
#include <string>
#include <vector>

namespace gpuprov {

struct CheckOutcome {
    std::string id;   ///< stable id: "driver.loaded", "gpus.count", "cuda.nvcc-release"
    std::string step; ///< the step it belongs to: "driver", "cuda-toolkit", "verify"
    bool passed = false;
    /// Not run, `found` says why (no GPU, no image): neither passed nor failed, so verify's exit
    /// status ignores it and no report calls it a pass.
    bool skipped = false;
    std::string command; ///< what was run or read ("nvidia-smi --query-gpu=...", a file path)
    std::string excerpt; ///< the relevant lines of its output (a few lines at most)
    std::string expected;
    std::string found;
    std::string fix; ///< what to do when it failed; empty when passed
};

[[nodiscard]] inline bool failed(const CheckOutcome& c) {
    return !c.passed && !c.skipped;
}

/// True when none failed (skipped ones included).
[[nodiscard]] inline bool all_passed(const std::vector<CheckOutcome>& checks) {
    for (const auto& c : checks) {
        if (failed(c)) {
            return false;
        }
    }
    return true;
}

} // namespace gpuprov
