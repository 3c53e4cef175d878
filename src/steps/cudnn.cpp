// cudnn: the cuDNN build made for the profile's CUDA. cuDNN 8 pins `+cudaX.Y` builds from the
// matrix; cuDNN 9 ships one build per CUDA major (libcudnn9-cuda-12), per NVIDIA's cuDNN
// installation guide for Linux.
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>

namespace gpuprov::steps {

namespace {

struct CudnnChoice {
    std::vector<std::string> packages;
    std::string version_prefix;
};

std::optional<CudnnChoice> choose(const StepContext& ctx, CheckResult& r) {
    const auto* names = package_names_or_block(ctx, r);
    if (names == nullptr) {
        return std::nullopt;
    }
    const auto& want = ctx.profile.cudnn->version;
    const auto cudnn = DottedVersion::parse(want);
    const auto cuda = DottedVersion::parse(ctx.profile.cuda->version);
    if (!cudnn || !cuda) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("cannot read cudnn.version '{}'", want);
        return std::nullopt;
    }
    if (cudnn->major() >= 9) {
        const auto fit = ctx.matrix.cudnn9_for(*cudnn, *cuda);
        if (fit.kind == Cudnn9Fit::Kind::unsupported) {
            r.status = StepStatus::blocked;
            r.reason = fit.message;
            return std::nullopt;
        }
        if (!fit.message.empty()) {
            r.changes.push_back(note(fit.message));
        }
        // "9" on CUDA 11.4-11.7: the cuda-11 packages of cuDNN 9.5 and later need 11.8, so the
        // newest minor that serves this release caps the pin.
        const auto prefix = fit.newest_minor && cudnn->parts.size() < 2
                                ? fit.newest_minor->str() + "."
                                : want + ".";
        return CudnnChoice{expand_package_names(names->cudnn9, {.cuda = ctx.profile.cuda->version}),
                           prefix};
    }
    const auto build = ctx.matrix.cudnn8_for(*cudnn, *cuda);
    if (!build) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("no cuDNN {} build exists for CUDA {}", want, cuda->str());
        return std::nullopt;
    }
    // "8.9.7.29-1+cuda12.2" on apt, "8.9.7.29-1.cuda12.2" on dnf.
    return CudnnChoice{
        names->cudnn8.packages,
        build->first + expand_package_name(names->cudnn8.release, {.cuda = build->second.str()})};
}

class Cudnn final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "cudnn"; }
    [[nodiscard]] std::string_view summary() const override {
        return "cuDNN build matching the CUDA release";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.cudnn || !ctx.profile.cuda) {
            r.status = StepStatus::skipped;
            r.reason =
                ctx.profile.cudnn ? "cuDNN needs a cuda section" : "profile asks for no cuDNN";
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        const auto choice = choose(ctx, r);
        if (!choice) {
            return r;
        }
        if (all_installed(sys, *pm, choice->packages, choice->version_prefix)) {
            return r;
        }
        const auto* index = index_or_block(ctx, "cuda", r);
        if (index == nullptr) {
            return r;
        }
        if (const auto pins =
                pin_with_prefix(*index, choice->packages, choice->version_prefix, r, "CUDA")) {
            plan_installs(r, sys, *pm, *pins);
        }
        return r;
    }

    StepStatus apply(const StepContext&, System&, const CheckResult&, ApplyPhase) override {
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.cudnn) {
            return {};
        }
        return check_cudnn({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_cudnn() {
    return std::make_unique<Cudnn>();
}

} // namespace gpuprov::steps
