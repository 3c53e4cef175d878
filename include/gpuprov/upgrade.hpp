#pragma once
// `gpuprov upgrade PROFILE` (docs/upgrade.md): a branch or version change on a node in use.
// Drain (Slurm, Kubernetes), wait for the GPUs to be free, apply, reboot and resume through
// gpuprov-resume.service, verify --smoke, put the node back. Its record is
// /var/lib/gpuprov/upgrade.json: the phase, the schedulers it drained, and one event per
// step with the boot it happened in, so the run after the reboot knows it continues an upgrade.
#include <chrono>
#include <functional>
#include <gpuprov/node_drain.hpp>
#include <gpuprov/step.hpp>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {

inline constexpr const char* kUpgradeStatePath = "/var/lib/gpuprov/upgrade.json";

struct UpgradeEvent {
    std::string at;      ///< RFC 3339 UTC
    std::string boot_id; ///< the boot it happened in
    std::string event;   ///< "drain", "idle", "apply", "reboot", "resumed", "verify", "resume",
                         ///< "failed", "done"
    std::string message;
};

struct UpgradeState {
    std::string profile;
    /// "draining", "applying", "rebooting", "verifying", "failed" (the node stays drained),
    /// "done".
    std::string phase;
    NodeSchedulers schedulers; ///< what was drained, so exactly that is put back
    /// verify runs the smoke tests (upgrade --no-smoke: not), kept for the run after the reboot
    bool smoke = true;
    std::vector<UpgradeEvent> events;
};

/// nullopt when there is none; throws HostError when it does not parse.
[[nodiscard]] std::optional<UpgradeState> load_upgrade_state(const System& sys);
void save_upgrade_state(System& sys, const UpgradeState& state);
/// The record as upgrade.json holds it (`gpuprov status --json` shows it as is).
[[nodiscard]] std::string upgrade_state_to_json_text(const UpgradeState& state);

/// What `gpuprov status` says of the last upgrade: its phase and when, the profile, what it
/// drained (and whether that is back in service), then the last event's message (for a failed
/// one: why, and the commands that put the node back).
[[nodiscard]] std::vector<std::string> upgrade_summary(const UpgradeState& state);
/// The upgrade failed after the apply journal's last run started (`run_started_at`, RFC 3339
/// UTC; empty: no run recorded), so the node it drained is still out of service and no later
/// apply speaks for the host: `gpuprov status` then exits as for a failed run.
[[nodiscard]] bool upgrade_failed_since(const UpgradeState& state,
                                        const std::string& run_started_at);

struct UpgradeOptions {
    std::string profile;    ///< as the resume unit names it
    std::string node;       ///< the scheduler's name for this node; empty: short_hostname()
    std::string kubeconfig; ///< empty: the first of kKubeconfigs present
    std::chrono::seconds wait_limit{3600}; ///< for the GPU processes and Slurm's jobs to end
    std::chrono::seconds poll{10};
    std::chrono::seconds k8s_timeout{600}; ///< kubectl drain --timeout
    bool smoke = true; ///< false: verify without the smoke tests (a continuation keeps false)
};

/// The parts of the upgrade that are other commands' work, so the CLI wires in apply and
/// verify --smoke and the tests script them.
struct UpgradeHooks {
    /// apply with the reboot policy if-needed; done, reboot_required or failed, and why.
    std::function<StepStatus(std::string& message)> apply;
    /// verify (with the smoke tests when `smoke`); true when it passed, else `message` says
    /// what failed.
    std::function<bool(bool smoke, std::string& message)> verify;
};

struct UpgradeResult {
    StepStatus status = StepStatus::done; ///< done, reboot_required or failed
    std::string message;
};

/// The whole upgrade, or its continuation after the reboot (the state says which). `say` gets
/// every line the operator should see. A failure leaves the node drained, records the reason
/// as a "failed" event, and returns failed.
[[nodiscard]] UpgradeResult run_upgrade(System& sys, const UpgradeOptions& opt,
                                        const UpgradeHooks& hooks,
                                        const std::function<void(const std::string&)>& say);

} // namespace gpuprov
