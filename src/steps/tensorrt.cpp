// tensorrt: NVIDIA's TensorRT packages from the CUDA repository, every package of the set at one
// version "<trt>-1+cudaX.Y" built for the profile's CUDA major and not for a newer release than
// the profile's (TensorRT installation guide, network repo method; matrix `tensorrt:`).
#include "packages_step.hpp"
#include "steps.hpp"
#include "tensorrt_pick.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

/// Every build of `anchor` in the index, for the blocked message.
std::string builds_offered(const PackageIndex& index, const std::string& anchor) {
    std::vector<std::string> versions;
    for (const auto* rec : index.versions(anchor)) {
        versions.push_back(rec->version);
    }
    return versions.empty() ? "none" : join(versions, ", ");
}

/// The installed version when every package is installed at one version that fits.
std::optional<std::string> installed_set(const System& sys, const PackageManager& pm,
                                         const std::vector<std::string>& packages,
                                         const std::string& prefix, const DottedVersion& cuda) {
    std::optional<std::string> common;
    for (const auto& p : packages) {
        const auto v = pm.installed(sys, p);
        if (!v || (common && *common != *v)) {
            return std::nullopt;
        }
        common = v;
    }
    if (common && tensorrt_build_fits(*common, prefix, cuda)) {
        return common;
    }
    return std::nullopt;
}

class Tensorrt final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "tensorrt"; }
    [[nodiscard]] std::string_view summary() const override {
        return "TensorRT built for the CUDA release, all packages in lockstep";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.tensorrt || !ctx.profile.cuda) {
            r.status = StepStatus::skipped;
            r.reason = ctx.profile.tensorrt ? "TensorRT needs a cuda section"
                                            : "profile asks for no TensorRT";
            return r;
        }
        const auto& prefix = ctx.profile.tensorrt->version;
        const auto want = DottedVersion::parse(prefix);
        const auto cuda = DottedVersion::parse(ctx.profile.cuda->version);
        const auto* line = want ? ctx.matrix.tensorrt(want->major()) : nullptr;
        if (line == nullptr || !cuda) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format("the matrix knows no TensorRT {}", prefix);
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        const auto& packages = ctx.facts.os.family == "rhel" ? line->rpm : line->deb;
        if (installed_set(sys, *pm, packages, prefix, *cuda)) {
            return r;
        }
        const auto* index = index_or_block(ctx, "cuda", r);
        if (index == nullptr) {
            return r;
        }
        const auto anchor = "libnvinfer" + std::to_string(line->major);
        const auto version = pick_tensorrt(*index, anchor, prefix, *cuda);
        if (!version) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format(
                "the CUDA repository has no TensorRT {}.x built for CUDA {}.x up to {} ({} "
                "there: {})",
                prefix, cuda->major(), cuda->str(), anchor, builds_offered(*index, anchor));
            return r;
        }
        // Lockstep: the meta package and every library at exactly this version, or none.
        if (const auto pins =
                pin_with_prefix(*index, packages, *version, r, "CUDA", VersionMatch::exact)) {
            if (const auto built = cuda_build_of(*version); built && *built != *cuda) {
                r.changes.push_back(
                    note(fmt::format("TensorRT {} is the +cuda{} build: the repository has none "
                                     "for CUDA {}, and a build for a newer CUDA is never used",
                                     *version, built->str(), cuda->str())));
            }
            plan_installs(r, sys, *pm, *pins);
        }
        return r;
    }

    StepStatus apply(const StepContext&, System&, const CheckResult&, ApplyPhase) override {
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        return check_tensorrt({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_tensorrt() {
    return std::make_unique<Tensorrt>();
}

} // namespace gpuprov::steps
