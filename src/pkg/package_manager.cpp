// The host's package manager, chosen from the facts, and the wait for another one's lock.
#include <gpuprov/facts.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/package_manager.hpp>
#include <spdlog/spdlog.h>

namespace gpuprov {

std::unique_ptr<PackageManager> make_package_manager(const HostFacts& facts) {
    if (facts.os.family == "debian") {
        return make_apt();
    }
    // Only the releases mapped onto NVIDIA's rhel8/rhel9/rhel10 repositories (dnf 4 on all
    // three): Amazon Linux, Fedora and EL 7 are dnf/yum hosts gpuprov does not provision.
    if (facts.os.family == "rhel" && !facts.os.repo_slug.empty()) {
        return make_dnf();
    }
    return nullptr;
}

bool wait_for_package_lock(const System& sys, const PackageManager& pm,
                           std::chrono::seconds deadline) {
    const auto until = sys.now() + deadline;
    bool said = false;
    for (;;) {
        std::optional<int> holder;
        std::string file;
        for (const auto& f : pm.lock_files()) {
            if ((holder = sys.lock_holder(f))) {
                file = f;
                break;
            }
        }
        if (!holder) {
            return true;
        }
        // A stop request (Ctrl-C, systemctl stop) ends the wait: the caller ends the run.
        if (sys.now() >= until || stop_requested()) {
            return false;
        }
        if (!said) {
            spdlog::warn("waiting up to {} s for {} (held by process {}, e.g. unattended-upgrades)",
                         deadline.count(), file, *holder);
            said = true;
        }
        sys.sleep(2s);
    }
}

} // namespace gpuprov
