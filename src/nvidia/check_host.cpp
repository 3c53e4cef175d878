#include "probe.hpp"

#include <algorithm>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

using namespace nvidia_detail;

bool fabric_manager_wanted(const Profile& profile, const HostFacts& facts) {
    switch (profile.fabric_manager) {
    case FabricManagerMode::enabled:
        return true;
    case FabricManagerMode::disabled:
        return false;
    case FabricManagerMode::automatic:
        // NVSwitch bridges on the PCI bus, not the GPU model: a single SXM GPU in a cloud VM
        // has no NVSwitch and its fabric manager would refuse to start.
        return facts.nvswitch_count > 0;
    }
    return false;
}

std::vector<CheckOutcome> check_fabric_manager(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!fabric_manager_wanted(in.profile, in.facts)) {
        return out;
    }
    const std::vector<std::string> argv = {"systemctl", "is-active", "nvidia-fabricmanager"};
    auto c = make_outcome("fabric-manager.active", "fabric-manager", display_argv(argv));
    c.expected = "active";
    c.fix = "systemctl enable --now nvidia-fabricmanager (its version must equal the driver's); "
            "see `journalctl -u nvidia-fabricmanager`";
    const auto r = probe(sys, argv);
    const auto state = std::string(trim(r.out));
    c.found = state.empty() ? failure_text(r) : state;
    c.excerpt = head_lines(output_of(r), 2);
    settle(c, state == "active");
    out.push_back(c);
    return out;
}

std::vector<CheckOutcome> check_persistence(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.tuning.persistence_mode) {
        return out;
    }
    const auto q = query_gpus(sys);
    auto c = make_outcome("tuning.persistence-mode", "tuning", q.command);
    c.expected = "Enabled on every GPU";
    c.fix = "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1 until reboot)";
    if (!q.ok()) {
        c.found = "nvidia-smi failed: " + failure_text(q.result);
        c.excerpt = head_lines(output_of(q.result));
        settle(c, false);
        out.push_back(c);
        return out;
    }
    const auto off = std::count_if(q.gpus.begin(), q.gpus.end(),
                                   [](const SmiGpu& g) { return g.persistence_mode != true; });
    c.found = off == 0
                  ? "Enabled on all " + std::to_string(q.gpus.size())
                  : "Disabled on " + std::to_string(off) + " of " + std::to_string(q.gpus.size());
    settle(c, off == 0);
    out.push_back(c);
    return out;
}

} // namespace gpuprov
