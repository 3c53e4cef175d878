// Whether nouveau or nova_core is loaded. Either source is enough: /sys/module/<name> also exists
// for a built-in nouveau, which /proc/modules does not list, and a sysfs-less container still has
// /proc/modules.
#include "detectors.hpp"

#include <gpuprov/strings.hpp>

namespace gpuprov {

bool proc_modules_has(std::string_view content, std::string_view module) {
    if (module.empty()) {
        return false;
    }
    std::size_t start = 0;
    while (start < content.size()) {
        auto end = content.find('\n', start);
        if (end == std::string_view::npos) {
            end = content.size();
        }
        const auto line = content.substr(start, end - start);
        // The name is the first column, so "nouveau" must not match "nouveau_foo" or
        // "drm_nouveau".
        if (starts_with(line, module) && line.size() > module.size() &&
            (line[module.size()] == ' ' || line[module.size()] == '\t')) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

namespace facts_detail {

bool read_module_loaded(const System& sys, const std::string& module) {
    if (sys.exists("/sys/module/" + module)) {
        return true;
    }
    const auto modules = sys.read_file("/proc/modules");
    return modules && proc_modules_has(*modules, module);
}

} // namespace facts_detail

bool is_nova_core_driver(std::string_view driver) {
    return driver == "NovaCore" || driver == "nova_core" || driver == "nova-core";
}

std::string competing_driver_holding(const HostFacts& facts, const System& sys) {
    if (facts.nouveau_loaded || sys.exists("/sys/module/nouveau")) {
        return "nouveau";
    }
    if (facts.nova_core_loaded || sys.exists("/sys/module/nova_core")) {
        return "nova_core";
    }
    return {};
}

std::vector<const PciGpu*> gpus_bound_to_nova_core(const HostFacts& facts) {
    std::vector<const PciGpu*> out;
    for (const auto& g : facts.gpus) {
        if (is_nova_core_driver(g.driver)) {
            out.push_back(&g);
        }
    }
    return out;
}

std::string competing_driver_loaded(const HostFacts& facts) {
    if (facts.nouveau_loaded) {
        return "nouveau";
    }
    if (facts.nova_core_loaded) {
        return "nova_core";
    }
    return {};
}

} // namespace gpuprov
