// /var/lib/gpuprov/upgrade.json: the upgrade's own journal, beside the apply journal
// (state.json), which each apply run rewrites.
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/json_text.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

std::optional<UpgradeState> load_upgrade_state(const System& sys) {
    const auto text = sys.read_file(kUpgradeStatePath);
    if (!text) {
        return std::nullopt;
    }
    try {
        const auto j = nlohmann::json::parse(*text);
        UpgradeState s;
        s.profile = j.value("profile", "");
        s.phase = j.value("phase", "");
        s.smoke = j.value("smoke", true);
        const auto sched = j.value("schedulers", nlohmann::json::object());
        s.schedulers.slurm_node = sched.value("slurm_node", "");
        s.schedulers.k8s_node = sched.value("k8s_node", "");
        s.schedulers.kubeconfig = sched.value("kubeconfig", "");
        for (const auto& e : j.value("events", nlohmann::json::array())) {
            s.events.push_back({e.value("at", ""), e.value("boot_id", ""), e.value("event", ""),
                                e.value("message", "")});
        }
        return s;
    } catch (const nlohmann::json::exception& e) {
        throw HostError(fmt::format("{} does not parse ({}); move it aside to start a new "
                                    "upgrade",
                                    kUpgradeStatePath, e.what()));
    }
}

std::string upgrade_state_to_json_text(const UpgradeState& s) {
    auto events = nlohmann::json::array();
    for (const auto& e : s.events) {
        events.push_back(
            {{"at", e.at}, {"boot_id", e.boot_id}, {"event", e.event}, {"message", e.message}});
    }
    const nlohmann::json j = {{"profile", s.profile},
                              {"phase", s.phase},
                              {"smoke", s.smoke},
                              {"schedulers",
                               {{"slurm_node", s.schedulers.slurm_node},
                                {"k8s_node", s.schedulers.k8s_node},
                                {"kubeconfig", s.schedulers.kubeconfig}}},
                              {"events", events}};
    return json_text(j);
}

void save_upgrade_state(System& sys, const UpgradeState& s) {
    sys.write_file_atomic(kUpgradeStatePath, upgrade_state_to_json_text(s) + "\n", 0644);
}

std::vector<std::string> upgrade_summary(const UpgradeState& s) {
    const UpgradeEvent none;
    const auto& last = s.events.empty() ? none : s.events.back();
    const bool finished = s.phase == "done" || s.phase == "failed";
    std::vector<std::string> drained;
    if (!s.schedulers.slurm_node.empty()) {
        drained.push_back("Slurm node " + s.schedulers.slurm_node);
    }
    if (!s.schedulers.k8s_node.empty()) {
        drained.push_back("Kubernetes node " + s.schedulers.k8s_node);
    }
    const auto nodes = drained.empty()     ? std::string("no scheduler knew this node")
                       : s.phase == "done" ? fmt::format("{}: back in service", join(drained, ", "))
                                           : fmt::format("{}: drained", join(drained, ", "));
    std::vector<std::string> out{
        fmt::format("{} {} {} (profile {}; {})", s.phase.empty() ? "unknown" : s.phase,
                    finished ? "at" : "since", last.at.empty() ? "-" : last.at,
                    s.profile.empty() ? "-" : s.profile, nodes)};
    if (!last.message.empty()) {
        out.push_back(fmt::format("{}: {}", last.event, last.message));
    }
    return out;
}

bool upgrade_failed_since(const UpgradeState& s, const std::string& run_started_at) {
    // Both are RFC 3339 UTC with the same format (rfc3339()), so they order as strings.
    return s.phase == "failed" && !s.events.empty() && s.events.back().at >= run_started_at;
}

} // namespace gpuprov
