#pragma once
// The one list of step ids, in the order apply runs the steps. Header-only so the profile
// reader (steps.skip, steps.only) and the step registry (make_steps, which a unit test checks
// against this list) share it without the profile library linking the steps.
#include <string>
#include <vector>

namespace gpuprov {

[[nodiscard]] inline const std::vector<std::string>& step_ids() {
    static const std::vector<std::string> ids{
        "preflight",    "nouveau", "cuda-repo",  "secure-boot", "driver",     "fabric-manager",
        "cuda-toolkit", "cudnn",   "nccl",       "tensorrt",    "infiniband", "container-toolkit",
        "tuning",       "mig",     "monitoring", "dcgm",        "readiness", "verify"};
    return ids;
}

} // namespace gpuprov
