// Slurm and Kubernetes node maintenance for `gpuprov upgrade` (docs/upgrade.md). Sources:
// - scontrol(1) (slurm.schedmd.com/scontrol.html): `scontrol update NodeName=N State=DRAIN
//   Reason=...` and `State=RESUME`; `scontrol show node N` prints `State=IDLE+DRAIN` for a
//   drained node and `MIXED+DRAIN`/`ALLOCATED+DRAIN` while jobs still run (sinfo's "drained"
//   and "draining"); an unknown node exits 1 ("Node N not found").
// - kubectl drain (kubernetes.io/docs/reference/kubectl/generated/kubectl_drain): marks the
//   node unschedulable, evicts its pods; --ignore-daemonsets (daemon set pods, the GPU
//   operator's and device plugin's among them, would only come back), --delete-emptydir-data,
//   --timeout (0 waits forever); `kubectl cordon`/`uncordon` set and clear unschedulable.
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/node_drain.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>

namespace gpuprov {

namespace {

std::vector<std::string> kubectl(const NodeSchedulers& s, std::vector<std::string> args) {
    args.insert(args.begin(), {"kubectl", "--kubeconfig", s.kubeconfig});
    return args;
}

void run_all(System& sys, const std::vector<std::vector<std::string>>& argvs,
             std::chrono::seconds k8s_timeout) {
    for (const auto& argv : argvs) {
        // kubectl drain waits for the pods itself, up to its --timeout; give it a minute more.
        const auto r = sys.run({.argv = argv, .timeout = k8s_timeout + 60s});
        if (!r.ok()) {
            throw Error(fmt::format("{} failed ({}): {}", display_argv(argv),
                                    r.timed_out   ? "timed out"
                                    : r.not_found ? "not found"
                                                  : fmt::format("exit status {}", r.exit_code),
                                    tail_lines(trim(r.out + r.err), 5)));
        }
    }
}

} // namespace

std::string short_hostname(const System& sys) {
    const auto name = sys.read_file("/proc/sys/kernel/hostname");
    auto host = name ? std::string(trim(*name)) : std::string();
    return host.substr(0, host.find('.'));
}

NodeSchedulers find_schedulers(const System& sys, const std::string& node,
                               const std::string& kubeconfig, std::vector<std::string>& notes) {
    NodeSchedulers s;
    if (node.empty()) {
        notes.push_back("this host has no hostname to look the node up by: pass --node NAME");
        return s;
    }
    const auto show = sys.query({.argv = {"scontrol", "show", "node", node}, .timeout = 60s});
    if (show.not_found) {
        notes.push_back("Slurm: no scontrol on this host");
    } else if (!show.ok() || slurm_state(show.out).empty()) {
        notes.push_back(fmt::format("Slurm: scontrol does not know the node {} (exit {}: {})", node,
                                    show.exit_code, trim(show.out + show.err)));
    } else {
        s.slurm_node = node;
        notes.push_back(fmt::format("Slurm: node {} is {}", node, slurm_state(show.out)));
    }
    std::string config = kubeconfig;
    if (config.empty()) {
        for (const auto& path : kKubeconfigs) {
            if (sys.exists(path)) {
                config = path;
                break;
            }
        }
    }
    const auto version = sys.query({.argv = {"kubectl", "version", "--client"}, .timeout = 60s});
    if (version.not_found) {
        notes.push_back("Kubernetes: no kubectl on this host");
    } else if (config.empty() || !sys.exists(config)) {
        notes.push_back(fmt::format("Kubernetes: kubectl is here but no kubeconfig ({}); pass "
                                    "--kubeconfig to cordon the node",
                                    config.empty() ? join(kKubeconfigs, ", ") : config));
    } else {
        s.k8s_node = node;
        s.kubeconfig = config;
        notes.push_back(fmt::format("Kubernetes: node {} through {}", node, config));
    }
    return s;
}

std::string slurm_state(std::string_view show_node) {
    for (const auto& word : split_words(show_node)) {
        if (starts_with(word, "State=")) {
            return word.substr(6);
        }
    }
    return {};
}

bool slurm_drained(std::string_view state) {
    const auto flags = split(state, '+');
    bool drain = false;
    for (const auto& f : flags) {
        drain = drain || f == "DRAIN";
    }
    // The base state comes first; a trailing '*' marks a node not responding.
    auto base = flags.empty() ? std::string() : flags.front();
    if (!base.empty() && base.back() == '*') {
        base.pop_back();
    }
    return drain && (base == "IDLE" || base == "DOWN");
}

std::vector<GpuProcess> parse_compute_apps(std::string_view csv) {
    std::vector<GpuProcess> out;
    for (const auto& line : lines(csv)) {
        const auto comma = line.find(',');
        if (trim(line).empty() || comma == std::string::npos) {
            continue;
        }
        out.push_back({std::string(trim(std::string_view(line).substr(0, comma))),
                       std::string(trim(std::string_view(line).substr(comma + 1)))});
    }
    return out;
}

std::vector<std::vector<std::string>> drain_argvs(const NodeSchedulers& s,
                                                  std::chrono::seconds k8s_timeout) {
    std::vector<std::vector<std::string>> out;
    if (!s.slurm_node.empty()) {
        out.push_back({"scontrol", "update", "NodeName=" + s.slurm_node, "State=DRAIN",
                       std::string("Reason=") + kDrainReason});
    }
    if (!s.k8s_node.empty()) {
        out.push_back(kubectl(s, {"cordon", s.k8s_node}));
        out.push_back(
            kubectl(s, {"drain", s.k8s_node, "--ignore-daemonsets", "--delete-emptydir-data",
                        fmt::format("--timeout={}s", k8s_timeout.count())}));
    }
    return out;
}

std::vector<std::vector<std::string>> undrain_argvs(const NodeSchedulers& s) {
    std::vector<std::vector<std::string>> out;
    if (!s.slurm_node.empty()) {
        out.push_back({"scontrol", "update", "NodeName=" + s.slurm_node, "State=RESUME"});
    }
    if (!s.k8s_node.empty()) {
        out.push_back(kubectl(s, {"uncordon", s.k8s_node}));
    }
    return out;
}

void drain_node(System& sys, const NodeSchedulers& s, std::chrono::seconds k8s_timeout) {
    run_all(sys, drain_argvs(s, k8s_timeout), k8s_timeout);
}

void undrain_node(System& sys, const NodeSchedulers& s) {
    run_all(sys, undrain_argvs(s), 0s);
}

IdleWait wait_until_idle(const System& sys, const NodeSchedulers& s, std::chrono::seconds limit,
                         std::chrono::seconds interval,
                         const std::function<void(const std::string&)>& say) {
    const auto start = sys.now();
    while (true) {
        std::vector<std::string> busy;
        const auto apps = sys.query({.argv = kComputeAppsQuery, .timeout = 60s});
        // No nvidia-smi, or no driver loaded: nothing can be running on the GPUs.
        if (apps.ok()) {
            for (const auto& p : parse_compute_apps(apps.out)) {
                busy.push_back(fmt::format("pid {} ({})", p.pid, p.name));
            }
        }
        if (!s.slurm_node.empty()) {
            const auto show =
                sys.query({.argv = {"scontrol", "show", "node", s.slurm_node}, .timeout = 60s});
            const auto state = slurm_state(show.out);
            if (!slurm_drained(state)) {
                busy.push_back(fmt::format("Slurm node {} is {}", s.slurm_node,
                                           state.empty() ? "unknown" : state));
            }
        }
        const auto waited = std::chrono::duration_cast<std::chrono::seconds>(sys.now() - start);
        if (busy.empty()) {
            return {.idle = true, .busy = {}, .waited = waited};
        }
        if (waited >= limit) {
            return {.idle = false, .busy = join(busy, "; "), .waited = waited};
        }
        say(fmt::format("waiting for the GPUs to be free ({}s of {}s): {}", waited.count(),
                        limit.count(), join(busy, "; ")));
        sys.sleep(std::min(interval, limit - waited));
    }
}

} // namespace gpuprov
