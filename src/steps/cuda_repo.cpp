// cuda-repo: NVIDIA's CUDA apt repository with its pinned key (never apt-key).
#include "apt_repo.hpp"
#include "dnf_repo.hpp"
#include "steps.hpp"

namespace gpuprov::steps {

namespace {

class CudaRepo final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "cuda-repo"; }
    [[nodiscard]] std::string_view summary() const override {
        return "NVIDIA CUDA repository: pinned key, deb822 source, index refresh";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.repositories.contains("cuda")) {
            // A profile for containers or monitoring only; a step that needs NVIDIA's packages
            // blocks on its own when the repository is missing (index_or_block).
            r.status = StepStatus::skipped;
            r.reason = "profile names no CUDA repository (repositories.cuda)";
            return r;
        }
        if (!package_manager_or_block(ctx, r)) {
            return r;
        }
        check_apt_repo(ctx, sys, "cuda", r);
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase == ApplyPhase::sources) {
            apply_apt_repo(ctx, sys, "cuda");
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.repositories.contains("cuda")) {
            return {};
        }
        if (ctx.facts.os.family == "rhel") {
            return verify_dnf(ctx, sys);
        }
        const auto files = apt_repo_placement(ctx, sys, "cuda").files;
        const bool ok = apt_repo_in_place(ctx, sys, "cuda");
        std::vector<CheckOutcome> out{
            CheckOutcome{.id = "cuda-repo.source",
                         .step = "cuda-repo",
                         .passed = ok,
                         .command = files.keyring + ", " + files.source,
                         .expected = "key with the pinned fingerprint and a Signed-By source",
                         .found = ok ? "in place" : "missing or different",
                         .fix = ok ? "" : "gpuprov apply PROFILE --only cuda-repo"}};
        if (ok) {
            // The files do nothing until apt has read them.
            const auto lists = apt_lists_state(ctx, sys, "cuda");
            out.push_back(
                CheckOutcome{.id = "cuda-repo.index",
                             .step = "cuda-repo",
                             .passed = lists.current,
                             .command = lists.inrelease,
                             .expected = "apt's lists hold this source's InRelease and Packages",
                             .found = lists.current ? "current" : lists.why,
                             .fix = lists.current ? "" : "gpuprov apply PROFILE --only cuda-repo"});
        }
        return out;
    }

private:
    /// The rhel family: the key and .repo file, then dnf's own metadata cache of the
    /// repository (not apt's lists): what dnf installs from is what gpuprov verified.
    static std::vector<CheckOutcome> verify_dnf(const StepContext& ctx, const System& sys) {
        const auto files = dnf_repo_files("cuda");
        const bool ok = dnf_repo_in_place(ctx, sys, "cuda");
        std::vector<CheckOutcome> out{CheckOutcome{
            .id = "cuda-repo.source",
            .step = "cuda-repo",
            .passed = ok,
            .command = files.key + ", " + files.repo,
            .expected = "key with the pinned fingerprint and a .repo with gpgcheck=1 and "
                        "repo_gpgcheck=1",
            .found = ok ? "in place" : "missing or different",
            .fix = ok ? "" : "gpuprov apply PROFILE --only cuda-repo"}};
        if (ok) {
            const auto cache = dnf_cache_state(ctx, sys, "cuda");
            out.push_back(CheckOutcome{
                .id = "cuda-repo.index",
                .step = "cuda-repo",
                .passed = cache.current,
                .command = cache.repomd,
                .expected = "dnf's metadata cache holds this repository's signed repomd.xml, as "
                            "new as the one gpuprov verified",
                .found = cache.current ? "current" : cache.why,
                .fix = cache.current ? "" : "gpuprov apply PROFILE --only cuda-repo"});
        }
        return out;
    }
};

} // namespace

std::unique_ptr<Step> make_cuda_repo() {
    return std::make_unique<CudaRepo>();
}

} // namespace gpuprov::steps
