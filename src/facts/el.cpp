// Facts only the rhel family has: kernel-devel for the running kernel, dnf module streams,
// EPEL and SELinux. All file reads, plus the rpm database's cached query.
#include "detectors.hpp"

#include <gpuprov/package_db.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

std::map<std::string, std::string> parse_dnf_module_file(std::string_view content) {
    // libdnf's ModulePackageContainer writes one INI section per module:
    //   [nvidia-driver]\nname=nvidia-driver\nstream=580-open\nprofiles=\nstate=enabled
    std::map<std::string, std::string> out;
    std::string section;
    std::string stream;
    std::string state;
    const auto flush = [&] {
        if (!section.empty() && state == "enabled" && !stream.empty()) {
            out[section] = stream;
        }
        stream.clear();
        state.clear();
    };
    for (const auto& raw : lines(content)) {
        const auto line = trim(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        if (line.front() == '[' && line.back() == ']') {
            flush();
            section = std::string(trim(line.substr(1, line.size() - 2)));
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            continue;
        }
        const auto key = trim(line.substr(0, eq));
        const auto value = trim(line.substr(eq + 1));
        if (key == "stream") {
            stream = std::string(value);
        } else if (key == "state") {
            state = to_lower(value);
        }
    }
    flush();
    return out;
}

std::string parse_selinux_config(std::string_view config) {
    for (const auto& raw : lines(config)) {
        const auto line = trim(raw);
        if (starts_with(line, "SELINUX=")) {
            auto v = to_lower(trim(line.substr(8)));
            if (v == "enforcing" || v == "permissive" || v == "disabled") {
                return v;
            }
        }
    }
    return {};
}

namespace facts_detail {

namespace {

std::string read_selinux(const System& sys) {
    // selinuxfs is mounted only when SELinux runs; its enforce file is the live mode.
    if (const auto enforce = sys.read_file("/sys/fs/selinux/enforce")) {
        const auto v = trim(*enforce);
        if (v == "1") {
            return "enforcing";
        }
        if (v == "0") {
            return "permissive";
        }
    }
    const auto config = sys.read_file("/etc/selinux/config");
    if (!config) {
        return {};
    }
    const auto mode = parse_selinux_config(*config);
    // Configured on but selinuxfs absent: not running (booted with selinux=0, or a container).
    return mode.empty() ? mode : (mode == "disabled" ? mode : "disabled");
}

} // namespace

void read_el_facts(const System& sys, HostFacts& facts) {
    if (facts.os.family != "rhel") {
        return;
    }
    const auto& db = rpm_database(sys);
    facts.kernel_devel = rpm_for_kernel(db, "kernel-devel", facts.kernel);
    facts.kernel_headers_rpm = rpm_for_kernel(db, "kernel-headers", facts.kernel);
    for (const auto& name : sys.list_dir("/etc/dnf/modules.d")) {
        if (name.size() > 7 && name.substr(name.size() - 7) == ".module") {
            if (const auto content = sys.read_file("/etc/dnf/modules.d/" + name)) {
                for (auto& [module, stream] : parse_dnf_module_file(*content)) {
                    facts.module_streams[module] = stream;
                }
            }
        }
    }
    for (const auto& name : sys.list_dir("/etc/yum.repos.d")) {
        if (starts_with(name, "epel") && name.size() > 5 &&
            name.substr(name.size() - 5) == ".repo") {
            facts.epel = true;
        }
    }
    // Oracle Linux ships EPEL as oracle-epel-release-elN (el10: `dnf -y install
    // oracle-epel-release-el10` on Oracle Linux Server 10.0, code index id 33079343206).
    facts.epel = facts.epel || db.installed_version("epel-release") ||
                 db.installed_version("oracle-epel-release-el8") ||
                 db.installed_version("oracle-epel-release-el9") ||
                 db.installed_version("oracle-epel-release-el10");
    facts.selinux = read_selinux(sys);
}

} // namespace facts_detail

} // namespace gpuprov
