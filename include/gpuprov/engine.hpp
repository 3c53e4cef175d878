#pragma once
#include <chrono>
// Plan and apply: resolve a profile against the live host, show it, carry it out.
#include <functional>
#include <gpuprov/journal.hpp>
#include <gpuprov/step.hpp>
#include <gpuprov/transaction.hpp>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuprov {

struct PlannedStep {
    std::string id;
    std::string summary;
    CheckResult check;
};

/// One package transaction of the plan and the steps whose packages it carries.
struct PlannedTransaction {
    std::vector<std::string> steps;
    PackageTransaction transaction;
    std::string blocked; ///< why apply would refuse it (unowned removals, held packages, apt error)
    /// Runs on its own before the batch's transaction (CheckResult::pre_installs: NVIDIA's
    /// pinning package); the batch's transaction was resolved as if it were in place.
    bool first = false;
    /// preferences.d files (name -> content) the simulation added: what `first` will install.
    std::map<std::string, std::string> view_preferences;
};

struct Plan {
    std::string profile; ///< profile name
    std::string profile_source;
    std::vector<PlannedStep> steps; ///< every step, in the design's order
    /// The profile's repositories as this host uses them: URL, and the key trusted for each
    /// with where it comes from (the profile's pin or NVIDIA's key for the distro).
    std::vector<ResolvedRepo> repositories;
    /// The package transactions apply runs, as apt resolves them (resolve_transactions).
    std::vector<PlannedTransaction> transactions;
    /// The command apply runs before anything else because the package database says an
    /// earlier transaction was interrupted (`dpkg --configure -a`, `dnf remove --duplicates`);
    /// empty when none. Shown by plan: the repair changes the host too (issue 26 item 14).
    std::string repair;
    [[nodiscard]] bool blocked() const;
    [[nodiscard]] bool changes_pending() const;
};

struct StepFilter {
    std::set<std::string> only; ///< when non-empty, every other step is skipped
    std::set<std::string> skip;
};

/// Why step `id` is left out of this run ("not in --only", "--skip", "profile steps.skip");
/// nullopt when it runs. Plan, apply and verify share it.
[[nodiscard]] std::optional<std::string>
step_filtered_out(const std::string& id, const StepFilter& filter, const Profile& profile);

/// Throws UsageError naming the valid ids when `ids` holds an unknown one.
void validate_step_ids(const std::set<std::string>& ids);

/// Runs every step's check. Never writes to the host.
[[nodiscard]] Plan build_plan(const StepContext& ctx, const System& sys,
                              const std::vector<std::unique_ptr<Step>>& steps,
                              const StepFilter& filter);

struct TransactionPolicy {
    bool allow_remove = false;
    /// Empty: simulate against the system's own apt configuration (apply, once the sources are
    /// in place). Otherwise a private directory for apt's view with gpuprov's verified indexes.
    std::string scratch_dir;
    std::string cache_dir; ///< the repository cache the verified indexes are in
};

/// Which steps share one package transaction in apply: preflight's (kernel headers) alone, then
/// every other runnable step's up to the first blocked one. Indexes into plan.steps.
[[nodiscard]] std::vector<std::vector<std::size_t>> package_groups(const Plan& plan);

/// Asks the package manager what each group's transaction would do and fills
/// plan.transactions: every install, upgrade, downgrade and removal, removals of packages the
/// profile does not own marked (blocked unless allow_remove), held packages apt would move
/// that no step releases (blocked), the driver closure marked for holding.
void resolve_transactions(System& sys, const StepContext& ctx, Plan& plan,
                          const TransactionPolicy& policy);

/// What the plan promises, one line per step status, change, install and package action, in
/// order; reasons and repository details are left out (they may word the same promise
/// differently from one second to the next). Interactive apply carries out the plan the
/// operator confirmed: apply compares these lines with its own plan's before it changes
/// anything (ApplyOptions::confirmed_plan).
[[nodiscard]] std::vector<std::string> plan_promise(const Plan& plan);

/// Live repository indexes for a profile: fetched on first use into `cache_dir`, where a copy
/// younger than `max_age` is reused (kIndexMaxAge: plan and apply in one sitting share an
/// index); 0 fetches every signed index anew (a saved plan must see what the mirror serves now).
inline constexpr std::chrono::seconds kIndexMaxAge{15 * 60};
class LiveRepoProvider final : public RepoProvider {
public:
    LiveRepoProvider(System& sys, const Profile& profile, const HostFacts& facts,
                     const Matrix& matrix, std::string cache_dir,
                     std::chrono::seconds max_age = kIndexMaxAge);
    [[nodiscard]] const RepoState& repo(const std::string& name) const override;
    [[nodiscard]] std::optional<std::string>
    known_inrelease(const std::string& name) const override;
    [[nodiscard]] PackageFileResult package_file(const std::string& repo,
                                                 const PackageRecord& record) const override;

private:
    System& m_sys;
    const Profile& m_profile;
    const HostFacts& m_facts;
    const Matrix& m_matrix; ///< NVIDIA's key for the host's distro (resolve_host_repo)
    std::string m_cache_dir;
    std::chrono::seconds m_max_age;

public:
    /// Where the verified indexes are: the transaction simulation's view links to them.
    [[nodiscard]] const std::string& cache_dir() const { return m_cache_dir; }
    mutable std::map<std::string, RepoState> m_loaded;

    /// Rollback (gpuprov/rollback.hpp): package name -> the one version the steps may see.
    /// Each repository's index keeps only that version of a pinned name, so every step's
    /// newest()/newest_with_prefix() picks the verified closure's build, whatever was published
    /// since. Set before the first repo() call.
    std::map<std::string, std::string> pins;
    /// Pinned packages a repository of the profile carries, but none at the pinned version
    /// ("name=version"); loads every repository of the profile first.
    [[nodiscard]] std::vector<std::string> missing_pins() const;
    /// Pinned names no repository of the profile carries at all (the distribution's packages a
    /// transaction pulled in, such as dkms): left as the distribution has them.
    [[nodiscard]] std::set<std::string> foreign_pins() const;

private:
    mutable std::set<std::string> m_pins_found; ///< at the pinned version
    mutable std::set<std::string> m_pins_seen;  ///< at any version
};

enum class RebootPolicy { never, if_needed };

/// Where systemd units find gpuprov (the resume unit, the metrics timer): /usr/bin/gpuprov when
/// a package installed it there, else /usr/local/bin/gpuprov. Never the path the running binary
/// happens to have (./build/gpuprov, /proc/self/exe). Plan and apply both render units with it,
/// so a converged host plans as a no-op wherever the binary that runs plan lives.
[[nodiscard]] std::string units_gpuprov_path(const System& sys);

/// What apply installs for units that run /usr/local/bin/gpuprov (no package installed
/// gpuprov): the running binary `self_path` there when that file is missing or has other
/// bytes (sizes compared first, then the contents side by side; never read whole), and
/// logrotate's rule for /var/log/gpuprov.log when /etc/logrotate.d has none (the packages ship
/// it). Apply installs them only along with other changes, so this is nullopt when
/// `changes_pending` is false (a converged host stays a no-op) and when there is nothing to do.
/// `self_path` empty, unreadable or the installed path itself: no binary is copied.
[[nodiscard]] std::optional<Change>
gpuprov_binary_change(const System& sys, const std::string& self_path, bool changes_pending);
/// Installs what gpuprov_binary_change() names: `self_path` as /usr/local/bin/gpuprov (atomic,
/// mode 0755) and /etc/logrotate.d/gpuprov (0644), each only where needed.
void install_gpuprov_binary(System& sys, const std::string& self_path);
/// As root, before apply changes anything: the binary the units run (units_gpuprov_path) must
/// be one only root could have written (gpuprov/local_trust.hpp), and while it is missing, so
/// must the directory apply is about to copy `self_path` into. Nothing to check when it is
/// `self_path` (checked as the running binary). Throws HostError naming path, owner and mode.
void require_trusted_units_binary(const System& sys, const std::string& self_path);

/// Where apply installs the profile the resume unit runs: /etc/gpuprov/resume/<name>.yaml, with
/// any character of the name other than [A-Za-z0-9._-] replaced by '_'. Never the operator's
/// /etc/gpuprov/<name>.yaml.
[[nodiscard]] std::string installed_profile_path(const std::string& profile_name);

struct ApplyOptions {
    StepFilter filter;
    RebootPolicy reboot = RebootPolicy::never;
    bool allow_remove = false; ///< apt may remove packages the profile does not own
    /// `gpuprov rollback`: the verified closure's exact versions (LiveRepoProvider::pins); the
    /// run refuses when one is gone from the repositories or the transaction would take
    /// another build, records its verified closure as a rollback's, and resumes as a rollback.
    std::map<std::string, std::string> pins;
    bool rollback = false;
    std::string profile_arg; ///< as given on the command line (built-in name or absolute path)
    /// The profile as a self-contained YAML text (a file's own text, or its `extends:` chain of
    /// files resolved into one document), installed at installed_profile_path() for the resume
    /// unit. Empty for a built-in profile: the unit names it.
    std::string profile_text;
    /// The running binary (the target of /proc/self/exe), installed at /usr/local/bin/gpuprov
    /// when units run that path and it differs (gpuprov_binary_change). Empty: never copied.
    std::string self_path;
    std::chrono::seconds lock_wait{600};
    /// plan_promise() of the plan the operator confirmed (interactive apply); apply refuses,
    /// before it changes anything, when its own plan promises something else. Empty: no plan
    /// was shown (--yes), apply carries out its own.
    std::optional<std::vector<std::string>> confirmed_plan;
    /// Run by `gpuprov upgrade`: the resume unit continues the upgrade, not a bare apply.
    bool upgrade = false;
    /// --from-bundle as opened: the bundle's directory (for a FILE.tar its extracted copy in the
    /// repository cache, which outlives /tmp) and the fingerprint that must sign it. The resume
    /// unit passes both on, so the run after the reboot installs from the same checked bundle,
    /// not from repositories an air-gapped host cannot reach. Empty: no bundle.
    std::string bundle_dir;
    std::string bundle_key;
};

/// Progress callbacks, so the CLI can print and tests can record.
class Reporter {
public:
    virtual ~Reporter() = default;
    virtual void step_started(std::string_view id, std::string_view what) = 0;
    virtual void step_finished(std::string_view id, StepStatus status,
                               std::string_view message) = 0;
    virtual void info(std::string_view message) = 0;
    /// A long package transaction's progress (0-100 and what it does now), as often as the
    /// package manager reports it; progress_done() when the transaction ended.
    virtual void progress(double percent, std::string_view what) {
        (void)percent;
        (void)what;
    }
    virtual void progress_done() {}
};

struct ApplyResult {
    StepStatus status = StepStatus::done; ///< done, failed or reboot_required
    std::string message;
    /// The run ended early because gpuprov was asked to stop (SIGINT, SIGTERM, SIGHUP); status
    /// is failed, the CLI exits 128 + the signal.
    bool interrupted = false;
    int apt_transactions = 0; ///< package install transactions run
    int index_refreshes = 0;  ///< apt-get update runs
    std::vector<std::pair<std::string, StepStatus>> steps;
};

/// Every check of every step that is not left out by `filter` or the profile's steps.skip, in
/// step order, each check once (what `gpuprov verify` prints): the repository, nouveau,
/// monitoring... steps' own checks as well as the NVIDIA ones.
[[nodiscard]] std::vector<CheckOutcome>
verify_steps(const StepContext& ctx, const System& sys,
             const std::vector<std::unique_ptr<Step>>& steps, const StepFilter& filter);

/// Applies a profile: lock, repair interrupted dpkg, journal, per step live check → apply →
/// the step's own verify, batched installs, reboot handling with a budget of one reboot per
/// step. Requires root (throws HostError otherwise).
ApplyResult apply_profile(System& sys, const Profile& profile, const Matrix& matrix,
                          const ApplyOptions& options, Reporter& reporter);

} // namespace gpuprov
