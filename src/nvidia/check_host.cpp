#include "probe.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/smi_fabric.hpp>
#include <gpuprov/strings.hpp>
#include <iterator>

namespace gpuprov {

using namespace nvidia_detail;

bool fabric_manager_wanted(const Profile& profile, const HostFacts& facts) {
    switch (profile.fabric_manager) {
    case FabricManagerMode::enabled:
        return true;
    case FabricManagerMode::disabled:
        return false;
    case FabricManagerMode::automatic:
        // NVSwitches found on this host, not the GPU model: a single SXM GPU in a cloud VM has
        // no NVSwitch and its fabric manager would refuse to start. Up to NVLink 4 they are
        // NVIDIA PCI bridges; NVLink 5 ones (HGX B200/B300) are InfiniBand devices (SW_MNG).
        return facts.nvswitch_count > 0 || facts.nvlink5_switch_count > 0;
    }
    return false;
}

namespace {

/// "GPU 00000000:18:00.0 (NVIDIA B200)", or "GPU #2" in an excerpt without headings.
std::string gpu_name(const SmiFabric& f, std::size_t i) {
    std::string out = f.gpu.empty() ? fmt::format("GPU #{}", i) : "GPU " + f.gpu;
    if (!f.product.empty()) {
        out += " (" + f.product + ")";
    }
    return out;
}

} // namespace

CheckOutcome check_fabric_state(const HostFacts& facts, const System& sys) {
    const std::vector<std::string> argv = {"nvidia-smi", "-q"};
    auto c = make_outcome("fabric-manager.fabric-state", "fabric-manager", display_argv(argv));
    c.expected = "every GPU's Fabric State Completed, Status Success";
    c.fix = "the GPUs have not joined the NVLink fabric (CUDA fails with error 802 until they "
            "do): check `systemctl status nvidia-fabricmanager` and `journalctl -u "
            "nvidia-fabricmanager`; on NVLink 5 (HGX B200/B300) fabric manager also needs "
            "nvlsm installed and ib_umad loaded";
    const auto r = probe(sys, argv);
    if (!r.ok()) {
        c.found = "nvidia-smi -q failed: " + failure_text(r);
        c.excerpt = head_lines(output_of(r), 2);
        settle(c, false);
        return c;
    }
    const auto sections = parse_smi_fabric(r.out);
    std::vector<std::string> bad;
    std::size_t registered = 0;
    for (std::size_t i = 0; i < sections.size(); ++i) {
        const auto& f = sections[i];
        switch (judge_fabric(f)) {
        case FabricVerdict::registered:
            ++registered;
            break;
        case FabricVerdict::not_reported:
            break;
        case FabricVerdict::pending:
        case FabricVerdict::failed:
            bad.push_back(gpu_name(f, i) + ": " + describe_fabric(f));
            break;
        }
    }
    if (!bad.empty()) {
        c.found = join(bad, "; ");
        c.excerpt = bad.front();
        settle(c, false);
        return c;
    }
    if (registered == 0) {
        // No GPU reports a fabric state: drivers and GPUs before Hopper print N/A (or no
        // section). An NVLink 5 host always reports one, so there it is a failure.
        c.found = sections.empty() ? "no Fabric section in nvidia-smi -q"
                                   : "no GPU reports a fabric state (N/A)";
        if (facts.nvlink5_switch_count > 0) {
            settle(c, false);
        } else {
            c.skipped = true;
            c.fix.clear();
        }
        return c;
    }
    c.found = fmt::format("Completed, Success on {} GPU{}", registered, registered == 1 ? "" : "s");
    settle(c, true);
    return c;
}

namespace {

/// fabric-manager.active, .ib-umad (NVLink 5) and .fabric-state.
std::vector<CheckOutcome> check_fabric_manager_service(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> fm;
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
    fm.push_back(c);
    if (in.facts.nvlink5_switch_count > 0) {
        auto m = make_outcome("fabric-manager.ib-umad", "fabric-manager", "/sys/module/ib_umad");
        m.expected = "loaded (NVLSM reaches the NVLink 5 switches through it)";
        const bool loaded = sys.exists("/sys/module/ib_umad");
        m.found = loaded ? "loaded" : "not loaded";
        m.fix = "modprobe ib_umad, and list it in /etc/modules-load.d/ (on Ubuntu cloud kernels "
                "it is in linux-modules-extra-$(uname -r)); then systemctl restart "
                "nvidia-fabricmanager";
        settle(m, loaded);
        fm.push_back(m);
    }
    fm.push_back(check_fabric_state(in.facts, sys));
    return fm;
}

} // namespace

std::vector<CheckOutcome> check_fabric_manager(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (fabric_manager_wanted(in.profile, in.facts)) {
        out = check_fabric_manager_service(in, sys);
    }
    // IMEX runs with or without fabric manager (GB200 compute trays have none); after it, as on
    // an NVSwitch host IMEX needs the fabric up.
    auto imex = check_imex(in, sys);
    out.insert(out.end(), std::make_move_iterator(imex.begin()),
               std::make_move_iterator(imex.end()));
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
