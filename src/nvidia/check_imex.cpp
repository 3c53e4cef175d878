// verify's IMEX checks (fabric.imex): the service runs, and where its command service is on,
// nvidia-imex-ctl says the local instance is READY.
#include "probe.hpp"

#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

using namespace nvidia_detail;

namespace {

constexpr const char* kImexStep = "fabric-manager";

} // namespace

bool imex_command_service_on(std::string_view config_cfg) {
    // KEY=VALUE lines, '#' comments (the packaged config.cfg); the last assignment wins.
    bool on = false;
    for (const auto& line : lines(config_cfg)) {
        const auto t = trim(line);
        if (starts_with(t, "IMEX_CMD_ENABLED=")) {
            on = trim(t.substr(std::string_view("IMEX_CMD_ENABLED=").size())) == "1";
        }
    }
    return on;
}

std::vector<CheckOutcome> check_imex(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.fabric.imex) {
        return out;
    }
    const std::vector<std::string> argv = {"systemctl", "is-active", "nvidia-imex"};
    auto c = make_outcome("fabric-manager.imex", kImexStep, display_argv(argv));
    c.expected = "active";
    if (!in.profile.fabric.imex_service()) {
        // NVIDIA's IMEX guide (Deployment Models): the node list is written before the service
        // starts, by an administrator or a job launcher; without fabric.imex_nodes that is not
        // gpuprov, so whether the service runs now is not this profile's to judge.
        skip(c, "fabric.imex_nodes is not set: nvidia-imex is started by whoever writes "
                "/etc/nvidia-imex/nodes_config.cfg (a job launcher's prolog, the DRA driver)");
        out.push_back(c);
        return out;
    }
    c.fix = "see `journalctl -u nvidia-imex` and /var/log/nvidia-imex.log: the service needs the "
            "driver of its own version loaded and this node's address in "
            "/etc/nvidia-imex/nodes_config.cfg; then systemctl restart nvidia-imex";
    const auto r = probe(sys, argv);
    const auto state = std::string(trim(r.out));
    c.found = state.empty() ? failure_text(r) : state;
    c.excerpt = head_lines(output_of(r), 2);
    const bool active = state == "active";
    settle(c, active);
    out.push_back(c);

    const std::vector<std::string> ctl = {"nvidia-imex-ctl", "-q"};
    auto q = make_outcome("fabric-manager.imex-ready", kImexStep, display_argv(ctl));
    q.expected = "READY";
    const auto config = sys.read_file("/etc/nvidia-imex/config.cfg");
    if (!active) {
        skip(q, "nvidia-imex is not active");
    } else if (!config || !imex_command_service_on(*config)) {
        // nvidia-imex-ctl talks to the daemon's command service, which config.cfg turns on
        // (NVIDIA IMEX guide, "IMEX Service Command Service").
        skip(q, "the IMEX command service is off (IMEX_CMD_ENABLED=1 is not in "
                "/etc/nvidia-imex/config.cfg), so nvidia-imex-ctl cannot ask the daemon");
    } else {
        // -q prints the local daemon's state: INITIALIZING, STARTING_AUTH_SERVER,
        // WAITING_FOR_PEERS, WAITING_FOR_RECOVERY, INIT_GPU, READY, SHUTTING_DOWN or UNAVAILABLE
        // (DCGM's dcgm_fields.h, DCGM_FI_IMEX_DAEMON_STATUS, read from `nvidia-imex-ctl -q`).
        q.fix = "the daemon is not ready: WAITING_FOR_PEERS waits for the other nodes of "
                "fabric.imex_nodes to start theirs; see `nvidia-imex-ctl -N` for the domain";
        const auto rq = probe(sys, ctl);
        const auto answer = std::string(trim(rq.out));
        q.found = answer.empty() ? failure_text(rq) : answer;
        q.excerpt = head_lines(output_of(rq), 2);
        settle(q, rq.ok() && answer == "READY");
    }
    out.push_back(q);
    return out;
}

} // namespace gpuprov
