#pragma once
// The step interface: check (read-only), apply (make it so), verify (prove it with real tools).
#include <functional>
#include <gpuprov/check.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/step_ids.hpp>
#include <gpuprov/system.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

enum class StepStatus { satisfied, pending, blocked, skipped, done, failed, reboot_required };

/// "satisfied", "pending", ..., "reboot-required".
[[nodiscard]] std::string_view to_string(StepStatus status);
[[nodiscard]] std::optional<StepStatus> step_status_from_string(std::string_view s);
/// Whether apply runs a step its check left in this state (pending, or waiting on a reboot).
[[nodiscard]] inline bool apply_runs(StepStatus s) {
    return s == StepStatus::pending || s == StepStatus::reboot_required;
}

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
    std::string version; ///< exact version from the repository index; empty: the distro's own
    [[nodiscard]] std::string spec() const { return version.empty() ? name : name + "=" + version; }
};

/// A dnf module stream a step's packages come from, enabled in the same transaction (NVIDIA's
/// driver on RHEL 8/9: nvidia-driver:580-open). apt has none.
struct ModuleStream {
    std::string module; ///< "nvidia-driver"
    std::string stream; ///< "580-open"
    /// Another stream of the module is enabled: dnf refuses a plain enable, so the transaction
    /// switches (`dnf module switch-to`).
    bool switch_from_other = false;
    [[nodiscard]] std::string spec() const { return module + ":" + stream; }
    friend bool operator==(const ModuleStream&, const ModuleStream&) = default;
};

struct CheckResult {
    StepStatus status = StepStatus::satisfied;
    std::string reason;                ///< why pending/blocked/skipped, in one line
    std::vector<Change> changes;       ///< what apply would do
    std::vector<PackagePin> installs;  ///< packages apply needs; the engine may batch these
    std::vector<std::string> removals; ///< packages this step removes in that transaction
    std::vector<std::string> unholds;  ///< held packages this step releases before it
    std::vector<ModuleStream> modules; ///< dnf module streams enabled in that transaction
    /// Hold the driver closure of `installs` at the versions the transaction installs.
    bool hold_installs = false;
    /// Packages installed (and removed) in a transaction of their own before the batch's:
    /// NVIDIA's pinning package, which must be in place before apt resolves the driver
    /// ("install the pinning package prior to installing the driver", driver installation guide).
    std::vector<PackagePin> pre_installs;
    std::vector<std::string> pre_removals;
    /// What those packages put in /etc/apt/preferences.d/ (file name -> content, read from the
    /// package itself), so the plan's simulation of the batch sees the pin the host will have.
    std::map<std::string, std::string> view_preferences;
};

/// A profile repository with its package index, loaded on first use.
struct RepoState {
    ResolvedRepo repo;
    std::optional<PackageIndex> index; ///< nullopt when unreachable or not in the profile
    std::optional<OpenPgpKey> key;
    std::string error;     ///< why index is missing (URL and status)
    std::string inrelease; ///< the InRelease the index was verified from, byte for byte
};

/// Hands out repository indexes lazily, so a run whose steps are all satisfied never touches
/// the network.
class RepoProvider {
public:
    virtual ~RepoProvider() = default;
    /// The state of a profile repository by name ("cuda", "container-toolkit").
    [[nodiscard]] virtual const RepoState& repo(const std::string& name) const = 0;
    /// The InRelease this repository's index was last verified from, without any download: the
    /// loaded state's when it is loaded, else gpuprov's cache's (any age); nullopt when neither.
    /// Lets a converged host compare apt's lists with it and stay off the network.
    [[nodiscard]] virtual std::optional<std::string> known_inrelease(const std::string&) const {
        return std::nullopt;
    }
    /// A package file of a repository, downloaded into gpuprov's cache and checked against the
    /// SHA-256 its verified index lists (fetch_package_file); for the few small packages the
    /// plan must read (NVIDIA's pinning package).
    [[nodiscard]] virtual PackageFileResult package_file(const std::string& repo,
                                                         const PackageRecord& record) const {
        (void)repo;
        return {.path = {}, .error = "no repository downloads here: " + record.name};
    }
};

/// Everything a step may read. Built once per command from the profile, facts and matrix.
struct StepContext {
    const Profile& profile;
    const HostFacts& facts;
    const Matrix& matrix;
    const RepoProvider& repos;
    std::string gpuprov_path = "/usr/local/bin/gpuprov"; ///< for units that run gpuprov
    /// Steps this run leaves out (--only/--skip, steps.skip): the final verify does not judge
    /// what they would have installed.
    std::set<std::string> skipped_steps;
    /// Shows a line on the operator's terminal during apply, and nowhere else: not the log
    /// file, not the journal. For what must reach a person once and never a file (the
    /// one-time MokManager password). Unset outside apply (plan, verify): nothing is shown.
    std::function<void(std::string_view)> tell_operator;
};

/// The parts of apply around the engine's batched package transaction, in this order. Between
/// `sources` and `prepare` the engine checks that the package manager still resolves what the
/// plan showed, so nothing destructive happens before that guard.
enum class ApplyPhase {
    sources,   ///< repositories and keys: what the package manager resolves against
    prepare,   ///< destructive work the install needs (blacklist, old holds, runfile removal)
    configure, ///< after the install (holds, PATH, services); returns done or reboot_required
};

class Step {
public:
    virtual ~Step() = default;
    [[nodiscard]] virtual std::string_view id() const = 0;
    [[nodiscard]] virtual std::string_view summary() const = 0;
    /// Read-only: is the host already in the wanted state? What would apply do?
    [[nodiscard]] virtual CheckResult check(const StepContext& ctx, const System& sys) const = 0;
    /// Makes it so. The engine calls `sources`, then `prepare` for every step of a batch,
    /// installs their `pre_installs` and then all their `planned.installs` in one transaction,
    /// then calls `configure` for each. Throws Error on failure; returns done or
    /// reboot_required.
    virtual StepStatus apply(const StepContext& ctx, System& sys, const CheckResult& planned,
                             ApplyPhase phase) = 0;
    /// Proves the step with the real tools.
    [[nodiscard]] virtual std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                           const System& sys) const = 0;
    /// Why this step still needs a reboot, with evidence (the failing command's stderr, DKMS
    /// status, doctor's finding). The engine puts it in the journal, and when the step asks
    /// for a reboot again after one has happened, in the failure message.
    [[nodiscard]] virtual std::string reboot_evidence(const StepContext&, const System&) const {
        return {};
    }
};

/// All steps in the order of step_ids() (gpuprov/step_ids.hpp).
[[nodiscard]] std::vector<std::unique_ptr<Step>> make_steps();

} // namespace gpuprov
