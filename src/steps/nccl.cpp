// nccl: NCCL (libnccl2/libnccl-dev, libnccl/libnccl-devel on rpm) built for exactly the profile's
// CUDA; an unpinned install can pick the +cuda build of a newer release and break the toolkit it
// was meant for.
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class Nccl final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "nccl"; }
    [[nodiscard]] std::string_view summary() const override {
        return "NCCL built for the CUDA release";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.nccl || !ctx.profile.cuda) {
            r.status = StepStatus::skipped;
            r.reason = ctx.profile.nccl ? "NCCL needs a cuda section" : "profile sets nccl: false";
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        // libnccl2/libnccl-dev on apt, libnccl/libnccl-devel on dnf; "+cuda12.4" on both.
        const auto* names = package_names_or_block(ctx, r);
        if (names == nullptr) {
            return r;
        }
        const PackageVars vars{.cuda = ctx.profile.cuda->version};
        const auto packages = expand_package_names(names->nccl.packages, vars);
        const auto suffix = expand_package_name(names->nccl.release, vars);
        bool installed = true;
        for (const auto& p : packages) {
            const auto v = pm->installed(sys, p);
            installed = installed && v && ends_with(*v, suffix);
        }
        if (installed) {
            return r;
        }
        const auto* index = index_or_block(ctx, "cuda", r);
        if (index == nullptr) {
            return r;
        }
        std::vector<PackagePin> pins;
        for (const auto& p : packages) {
            const PackageRecord* pick = nullptr;
            for (const auto* rec : index->versions(p)) {
                if (ends_with(rec->version, suffix)) {
                    pick = rec;
                    break;
                }
            }
            if (pick == nullptr) {
                r.status = StepStatus::blocked;
                r.reason = fmt::format("the CUDA repository has no {} built for CUDA {}", p,
                                       ctx.profile.cuda->version);
                return r;
            }
            pins.push_back({p, pick->version});
        }
        plan_installs(r, sys, *pm, pins);
        return r;
    }

    StepStatus apply(const StepContext&, System&, const CheckResult&, ApplyPhase) override {
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.nccl) {
            return {};
        }
        return check_nccl({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_nccl() {
    return std::make_unique<Nccl>();
}

} // namespace gpuprov::steps
