// The upgrade's order (docs/upgrade.md): drain, wait for the GPUs to be free, apply, reboot and
// continue from gpuprov-resume.service, verify --smoke, put the node back. Every phase is
// saved before it starts, so a kill or a reboot finds where the upgrade stood; the node goes
// back into service only after verify passed.
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade.hpp>

namespace gpuprov {

namespace {

class Upgrade {
public:
    Upgrade(System& sys, const UpgradeOptions& opt, const UpgradeHooks& hooks,
            const std::function<void(const std::string&)>& say)
        : m_sys(sys), m_opt(opt), m_hooks(hooks), m_say(say), m_boot(current_boot_id(sys)) {}

    UpgradeResult run() {
        const auto before = load_upgrade_state(m_sys);
        // An unfinished upgrade (a reboot, a failure fixed since, a kill) continues with the
        // node it drained; a finished one, or none, starts anew.
        const bool unfinished = before && before->phase != "done";
        if (unfinished) {
            m_state = *before;
            m_state.profile = m_opt.profile;
            m_state.smoke = m_state.smoke && m_opt.smoke;
            const auto last_boot = m_state.events.empty() ? "" : m_state.events.back().boot_id;
            if (m_state.phase == "rebooting" && !m_boot.empty() && last_boot != m_boot) {
                event("resumed",
                      fmt::format("after the reboot (boot {} -> {})", last_boot, m_boot));
            } else {
                event("resumed",
                      fmt::format("continuing the upgrade left at phase '{}'", m_state.phase));
            }
        } else {
            m_state =
                UpgradeState{.profile = m_opt.profile, .phase = "draining", .smoke = m_opt.smoke};
        }
        try {
            if (!unfinished || m_state.phase == "draining" || m_state.phase == "failed") {
                if (!drain(unfinished)) {
                    return m_result;
                }
            }
            return apply_and_finish();
        } catch (const Error& e) {
            return fail(e.describe());
        }
    }

private:
    /// Drains (again, for a failed upgrade: draining a drained node changes nothing) and waits.
    bool drain(bool unfinished) {
        if (!unfinished) {
            const auto node = m_opt.node.empty() ? short_hostname(m_sys) : m_opt.node;
            std::vector<std::string> notes;
            m_state.schedulers = find_schedulers(m_sys, node, m_opt.kubeconfig, notes);
            for (const auto& n : notes) {
                m_say(n);
            }
        }
        const auto& s = m_state.schedulers;
        const auto argvs = drain_argvs(s, m_opt.k8s_timeout);
        std::vector<std::string> shown;
        for (const auto& a : argvs) {
            shown.push_back(display_argv(a));
        }
        phase("draining");
        event("drain",
              argvs.empty() ? "no scheduler knows this node: nothing to drain" : join(shown, "; "));
        drain_node(m_sys, s, m_opt.k8s_timeout);
        const auto wait = wait_until_idle(m_sys, s, m_opt.wait_limit, m_opt.poll, m_say);
        if (!wait.idle) {
            fail(fmt::format("the GPUs were still in use after {}s: {}", wait.waited.count(),
                             wait.busy));
            return false;
        }
        event("idle", fmt::format("no GPU process left after {}s", wait.waited.count()));
        return true;
    }

    UpgradeResult apply_and_finish() {
        phase("applying");
        std::string message;
        const auto applied = m_hooks.apply(message);
        if (applied == StepStatus::reboot_required) {
            phase("rebooting");
            event("reboot", message);
            m_say("reboot required: gpuprov-resume.service continues the upgrade at the next "
                  "boot (verify, then the node is put back)");
            return {StepStatus::reboot_required, message};
        }
        if (applied != StepStatus::done) {
            return fail("apply failed: " + message);
        }
        event("apply", message.empty() ? "done" : message);
        phase("verifying");
        std::string why;
        const auto what = m_state.smoke ? "verify --smoke" : "verify (--no-smoke)";
        if (!m_hooks.verify(m_state.smoke, why)) {
            return fail(fmt::format("{} failed: {}", what, why));
        }
        event("verify", fmt::format("{} passed", what));
        undrain_node(m_sys, m_state.schedulers);
        const auto argvs = undrain_argvs(m_state.schedulers);
        std::vector<std::string> shown;
        for (const auto& a : argvs) {
            shown.push_back(display_argv(a));
        }
        event("resume", argvs.empty() ? "nothing was drained" : join(shown, "; "));
        phase("done");
        event("done", "upgrade finished; the node is back in service");
        return {StepStatus::done, "upgrade finished; the node is back in service"};
    }

    UpgradeResult fail(const std::string& reason) {
        std::vector<std::string> by_hand;
        for (const auto& a : undrain_argvs(m_state.schedulers)) {
            by_hand.push_back(display_argv(a));
        }
        const auto message =
            by_hand.empty()
                ? reason
                : fmt::format("{}; the node stays drained: once fixed, run `gpuprov upgrade {}` "
                              "again, or put it back by hand: {}",
                              reason, m_state.profile, join(by_hand, "; "));
        m_state.phase = "failed";
        try {
            event("failed", message);
        } catch (const Error&) {
            // The reason still reaches the caller and the log.
        }
        m_result = {StepStatus::failed, message};
        return m_result;
    }

    void phase(const std::string& p) {
        m_state.phase = p;
        save_upgrade_state(m_sys, m_state);
    }

    void event(const std::string& what, const std::string& message) {
        m_state.events.push_back({rfc3339(m_sys.now()), m_boot, what, message});
        save_upgrade_state(m_sys, m_state);
        m_say(fmt::format("upgrade: {}: {}", what, message));
    }

    System& m_sys;
    const UpgradeOptions& m_opt;
    const UpgradeHooks& m_hooks;
    const std::function<void(const std::string&)>& m_say;
    std::string m_boot;
    UpgradeState m_state;
    UpgradeResult m_result;
};

} // namespace

UpgradeResult run_upgrade(System& sys, const UpgradeOptions& opt, const UpgradeHooks& hooks,
                          const std::function<void(const std::string&)>& say) {
    return Upgrade(sys, opt, hooks, say).run();
}

} // namespace gpuprov
