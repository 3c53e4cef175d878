// `gpuprov verify`: every step's own checks, not only the NVIDIA ones the final step runs.
#include <gpuprov/engine.hpp>
#include <gpuprov/probe_cache.hpp>
#include <set>

namespace gpuprov {

std::vector<CheckOutcome> verify_steps(const StepContext& ctx, const System& sys,
                                       const std::vector<std::unique_ptr<Step>>& steps,
                                       const StepFilter& filter) {
    std::set<std::string> left_out;
    for (const auto& step : steps) {
        const std::string id(step->id());
        if (step_filtered_out(id, filter, ctx.profile)) {
            left_out.insert(id);
        }
    }
    // Each probe once: the final step's checks repeat the driver's, CUDA's, cuDNN's probes.
    const ProbeCache probes(sys);
    std::vector<CheckOutcome> out;
    std::set<std::string> seen;
    for (const auto& step : steps) {
        const std::string id(step->id());
        if (left_out.count(id) != 0) {
            continue;
        }
        for (auto& c : step->verify(ctx, probes)) {
            // The final step re-runs the driver, CUDA, cuDNN... checks the steps have already
            // given; each is reported once. A check belongs to its step: one of a step left
            // out (`--skip cudnn`) is not run for it, whoever would report it.
            if (left_out.count(c.step) != 0 || !seen.insert(c.id).second) {
                continue;
            }
            out.push_back(std::move(c));
        }
    }
    return out;
}

} // namespace gpuprov
