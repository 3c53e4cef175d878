#pragma once
// The step interface: check (read-only), apply (make it so), verify (prove it with real tools).
#include <gpuprov/check.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/system.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

enum class StepStatus { satisfied, pending, blocked, skipped, done, failed, reboot_required };

/// "satisfied", "pending", ..., "reboot-required".
[[nodiscard]] std::string_view to_string(StepStatus status);
[[nodiscard]] std::optional<StepStatus> step_status_from_string(std::string_view s);

/// One intended change, exact enough for a change review.
struct Change {
    enum class Kind { file, package, command, service, note };
    Kind kind = Kind::note;
    std::string target; ///< file path, package name, argv display, unit name
    std::string detail; ///< unified diff, "=version", why
};
[[nodiscard]] std::string_view to_string(Change::Kind kind);

struct PackagePin {
    std::string name;
    std::string version; ///< exact version from the repository index
    [[nodiscard]] std::string spec() const { return name + "=" + version; }
};

struct CheckResult {
    StepStatus status = StepStatus::satisfied;
    std::string reason;                 ///< why pending/blocked/skipped, in one line
    std::vector<Change> changes;        ///< what apply would do
    std::vector<PackagePin> installs;   ///< packages apply needs; the engine may batch these
    std::vector<std::string> refresh_sources; ///< apt source files whose index must be refreshed
};

/// Package indexes of the profile's repositories, resolved once per run.
struct RepoState {
    ResolvedRepo repo;
    std::optional<PackageIndex> index; ///< nullopt when unreachable
    std::optional<OpenPgpKey> key;
    std::string error;
};

/// Everything a step may read. Built once per command from the profile, facts and matrix.
struct StepContext {
    const Profile& profile;
    const HostFacts& facts;
    const Matrix& matrix;
    const std::map<std::string, RepoState>& repos; ///< by repository name ("cuda")
    bool for_apply = false; ///< apply adds root checks that plan leaves out
};

class Step {
public:
    virtual ~Step() = default;
    [[nodiscard]] virtual std::string_view id() const = 0;
    [[nodiscard]] virtual std::string_view summary() const = 0;
    /// Read-only: is the host already in the wanted state? What would apply do?
    [[nodiscard]] virtual CheckResult check(const StepContext& ctx, const System& sys) const = 0;
    /// Makes it so, after the engine installed `planned.installs` (batched). Throws Error on
    /// failure; returns done or reboot_required.
    virtual StepStatus apply(const StepContext& ctx, System& sys, const CheckResult& planned) = 0;
    /// Proves the step with the real tools.
    [[nodiscard]] virtual std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                           const System& sys) const = 0;
};

/// All steps in the design's order: preflight, nouveau, cuda-repo, driver, fabric-manager,
/// cuda-toolkit, cudnn, nccl, container-toolkit, tuning, monitoring, verify.
[[nodiscard]] std::vector<std::unique_ptr<Step>> make_steps();
[[nodiscard]] const std::vector<std::string>& step_ids();

} // namespace gpuprov
