#pragma once
// Taking a node out of its scheduler before an upgrade and putting it back after
// (docs/upgrade.md): Slurm through scontrol, Kubernetes through kubectl, both through System.
#include <chrono>
#include <functional>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {

/// The schedulers that know this node, each by the name it knows the node by; an empty name:
/// that scheduler is absent (its tool missing, or the node unknown to it).
struct NodeSchedulers {
    std::string slurm_node; ///< `scontrol show node NAME` answered for it
    std::string k8s_node;   ///< kubectl and a kubeconfig are present
    std::string kubeconfig; ///< passed as --kubeconfig (the child's environment has none)
    [[nodiscard]] bool any() const { return !slurm_node.empty() || !k8s_node.empty(); }
};

/// Kubeconfigs tried in order when none is given: kubeadm's admin credentials, then root's
/// (a kubelet's own credentials may not evict pods).
inline const std::vector<std::string> kKubeconfigs = {"/etc/kubernetes/admin.conf",
                                                      "/root/.kube/config"};

/// This host's name as schedulers usually know it: the kernel's hostname up to the first dot.
[[nodiscard]] std::string short_hostname(const System& sys);

/// Which schedulers know `node`; `kubeconfig` empty: the first of kKubeconfigs that exists.
/// `notes` receives a line for each scheduler found or passed over, and why.
[[nodiscard]] NodeSchedulers find_schedulers(const System& sys, const std::string& node,
                                             const std::string& kubeconfig,
                                             std::vector<std::string>& notes);

/// The State= value of `scontrol show node` output ("IDLE+DRAIN", "MIXED+DRAIN"); empty
/// when absent.
[[nodiscard]] std::string slurm_state(std::string_view show_node);
/// DRAIN set and no job left: the base state IDLE or DOWN (Slurm's sinfo says "drained"; with
/// ALLOCATED, MIXED or COMPLETING it says "draining").
[[nodiscard]] bool slurm_drained(std::string_view state);

/// One process nvidia-smi --query-compute-apps lists.
struct GpuProcess {
    std::string pid;
    std::string name;
};
inline const std::vector<std::string> kComputeAppsQuery = {
    "nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader"};
[[nodiscard]] std::vector<GpuProcess> parse_compute_apps(std::string_view csv);

/// `reason` on the Slurm node (Reason=), e.g. "gpuprov upgrade".
inline constexpr const char* kDrainReason = "gpuprov upgrade";

/// The argv of each scheduler action, for the plan-like listing and the tests.
[[nodiscard]] std::vector<std::vector<std::string>> drain_argvs(const NodeSchedulers& s,
                                                                std::chrono::seconds k8s_timeout);
[[nodiscard]] std::vector<std::vector<std::string>> undrain_argvs(const NodeSchedulers& s);

/// Runs drain_argvs in order; throws Error naming the command that failed.
void drain_node(System& sys, const NodeSchedulers& s, std::chrono::seconds k8s_timeout);
/// Runs undrain_argvs in order; throws Error naming the command that failed.
void undrain_node(System& sys, const NodeSchedulers& s);

/// What wait_until_idle found at its end.
struct IdleWait {
    bool idle = false;
    std::string busy; ///< what still held the node at the deadline: processes, Slurm's state
    std::chrono::seconds waited{0};
};
/// Polls every `interval` until no compute process is on the GPUs and the Slurm node (when
/// any) is drained, at most `limit`; `say` gets one line per poll that still waits.
[[nodiscard]] IdleWait wait_until_idle(const System& sys, const NodeSchedulers& s,
                                       std::chrono::seconds limit, std::chrono::seconds interval,
                                       const std::function<void(const std::string&)>& say);

} // namespace gpuprov
