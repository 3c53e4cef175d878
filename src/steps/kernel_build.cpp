#include "kernel_build.hpp"

#include <algorithm>
#include <gpuprov/dkms.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

using namespace std::chrono_literals;

std::vector<PackagePin> build_tree_packages(const HostFacts& facts, const std::string& kernel) {
    if (facts.os.family == "rhel") {
        return {PackagePin{.name = "kernel-devel-" + kernel}};
    }
    return {PackagePin{.name = "linux-headers-" + kernel}};
}

std::vector<MissingBuildTree> missing_build_trees(const HostFacts& facts, const System& sys,
                                                  const PackageManager& pm) {
    std::vector<MissingBuildTree> out;
    for (const auto& k : facts.kernels) {
        if (k.release == facts.kernel || k.build_tree) {
            continue;
        }
        MissingBuildTree m{.kernel = k.release, .packages = build_tree_packages(facts, k.release)};
        m.available = true;
        for (const auto& pin : m.packages) {
            const auto a = pm.available(sys, pin.name);
            if (!a) {
                m.available = std::nullopt;
            } else if (!*a) {
                m.available = false;
                break;
            }
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<std::string> other_buildable_kernels(const HostFacts& facts, const System& sys,
                                                 const PackageManager& pm) {
    std::vector<std::string> unavailable;
    for (const auto& m : missing_build_trees(facts, sys, pm)) {
        if (m.available == false) {
            unavailable.push_back(m.kernel);
        }
    }
    std::vector<std::string> out;
    for (const auto& k : facts.kernels) {
        if (k.release != facts.kernel &&
            std::find(unavailable.begin(), unavailable.end(), k.release) == unavailable.end()) {
            out.push_back(k.release);
        }
    }
    return out;
}

std::vector<std::string> kernels_without_module(const System& sys,
                                                const std::vector<std::string>& kernels) {
    const auto entries = nvidia_dkms_status(sys);
    std::vector<std::string> out;
    for (const auto& k : kernels) {
        if (installed_for(entries, k) == nullptr) {
            out.push_back(k);
        }
    }
    return out;
}

bool driver_uses_dkms(const System& sys, const std::vector<PackagePin>& installs) {
    const bool planned = std::any_of(installs.begin(), installs.end(), [](const PackagePin& p) {
        return p.name.find("-dkms") != std::string::npos || p.name == "dkms";
    });
    return planned || !nvidia_dkms_status(sys).empty();
}

Command dkms_autoinstall(const std::string& kernel) {
    // A module build takes minutes on a small host; dkms prints as it goes.
    return Command{
        .argv = {"dkms", "autoinstall", "-k", kernel}, .timeout = 1800s, .idle_timeout = 900s};
}

} // namespace gpuprov::steps
