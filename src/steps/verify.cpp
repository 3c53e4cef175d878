// verify: the last step proves the whole profile with the real tools (nvidia-smi, nvcc, the
// cuDNN header, ldconfig, nvidia-ctk).
#include "common.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

class Verify final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "verify"; }
    [[nodiscard]] std::string_view summary() const override {
        return "prove the profile with nvidia-smi, nvcc, cuDNN, NCCL, container checks";
    }

    // The planner marks this pending whenever another step has changes to make.
    [[nodiscard]] CheckResult check(const StepContext&, const System&) const override { return {}; }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        std::vector<std::string> failed;
        for (const auto& c : verify(ctx, sys)) {
            if (gpuprov::failed(c) && ctx.skipped_steps.count(c.step) == 0) {
                failed.push_back(fmt::format("{}: expected {}, found {}{}", c.id, c.expected,
                                             c.found,
                                             c.fix.empty() ? "" : " (fix: " + c.fix + ")"));
            }
        }
        if (!failed.empty()) {
            throw Error(fmt::format("{} check{} failed:\n  {}", failed.size(),
                                    failed.size() == 1 ? "" : "s", join(failed, "\n  ")));
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        return verify_profile({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_verify() {
    return std::make_unique<Verify>();
}

} // namespace gpuprov::steps
