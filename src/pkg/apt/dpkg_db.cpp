// dpkg's database straight from /var/lib/dpkg/status instead of `dpkg-query`: no process start,
// and the file format has been stable for decades. This is the only reader of that file: facts,
// the apt backend and doctor all go through dpkg_database().
#include <algorithm>
#include <gpuprov/package_db.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::string_view field_value(std::string_view line, std::string_view field) {
    if (line.size() <= field.size() || !starts_with(line, field) || line[field.size()] != ':') {
        return {};
    }
    return trim(line.substr(field.size() + 1));
}

/// Names in a Depends/Provides field: "a (>= 1), b | c:any" → a, b, c (every alternative).
void add_names(std::string_view field, std::vector<std::string>& out) {
    for (const auto& clause : split(field, ',')) {
        for (const auto& alt : split(clause, '|')) {
            auto name = trim(alt);
            name = name.substr(0, name.find_first_of(" (:["));
            if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) {
                out.emplace_back(name);
            }
        }
    }
}

/// "want flag state": installed means state "installed" with the "ok" flag, whatever the
/// selection (install, hold, or deinstall not yet carried out). "reinstreq" and half states
/// are not installed.
void set_status(InstalledPackage& p, std::string_view status) {
    p.status = std::string(status);
    const auto words = split(status, ' ');
    if (words.size() == 3) {
        p.installed = words[1] == "ok" && words[2] == "installed";
        p.hold = words[0] == "hold";
    }
}

} // namespace

PackageDb parse_dpkg_db(std::string_view status) {
    std::vector<InstalledPackage> out;
    InstalledPackage current;
    bool has_version = false;
    const auto finish = [&] {
        if (!current.name.empty()) {
            current.installed = current.installed && has_version; // nothing to pin without one
            out.push_back(std::move(current));
        }
        current = {};
        has_version = false;
    };
    std::size_t start = 0;
    while (start <= status.size()) {
        auto end = status.find('\n', start);
        if (end == std::string_view::npos) {
            end = status.size();
        }
        auto line = status.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        start = end + 1;
        if (trim(line).empty()) {
            finish();
            continue;
        }
        if (line.front() == ' ' || line.front() == '\t') {
            continue; // continuation of Description:, Conffiles: and the like
        }
        if (auto v = field_value(line, "Package"); !v.empty()) {
            current.name = std::string(v);
        } else if (auto ver = field_value(line, "Version"); !ver.empty()) {
            current.version = std::string(ver);
            has_version = true;
        } else if (auto arch = field_value(line, "Architecture"); !arch.empty()) {
            current.arch = std::string(arch);
        } else if (auto st = field_value(line, "Status"); !st.empty()) {
            set_status(current, st);
        } else if (auto dep = field_value(line, "Depends"); !dep.empty()) {
            add_names(dep, current.depends);
        } else if (auto pre = field_value(line, "Pre-Depends"); !pre.empty()) {
            add_names(pre, current.depends);
        } else if (auto prov = field_value(line, "Provides"); !prov.empty()) {
            add_names(prov, current.provides);
        }
    }
    finish();
    return PackageDb(std::move(out));
}

} // namespace gpuprov
