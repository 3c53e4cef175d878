// rpm's database through `rpm -qa --qf` (the SQLite/Berkeley DB files are rpm's private format;
// rpm itself is their only stable reader). The query format puts every field where it cannot
// be confused with another: see kRpmQueryFormat.
#include <algorithm>
#include <gpuprov/package_db.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

Command rpm_query_command() {
    return {.argv = {"rpm", "-qa", "--qf", std::string(kRpmQueryFormat)}, .timeout = 120s};
}

namespace {

/// rpm prints "(none)" for an unset tag (no Epoch; gpg-pubkey has no Arch).
std::string tag(std::string_view v) {
    return v == "(none)" ? std::string() : std::string(v);
}

void add_unique(std::vector<std::string>& to, std::string_view v) {
    if (!v.empty() && std::find(to.begin(), to.end(), v) == to.end()) {
        to.emplace_back(v);
    }
}

} // namespace

PackageDb parse_rpm_query(std::string_view out) {
    std::vector<InstalledPackage> records;
    InstalledPackage* current = nullptr;
    for (const auto& raw : lines(out)) {
        std::string_view line = raw;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (starts_with(line, "@@\t")) {
            current = nullptr;
            const auto f = split(line.substr(3), '\t');
            // NAME EPOCH VERSION RELEASE ARCH; a line cut short is not a package.
            if (f.size() != 5 || f[0].empty() || f[2].empty() || f[3].empty() ||
                f[0] == "gpg-pubkey") {
                continue;
            }
            InstalledPackage p;
            p.name = f[0];
            const auto epoch = tag(f[1]);
            p.version = (epoch.empty() ? "" : epoch + ":") + f[2] + "-" + f[3];
            p.arch = tag(f[4]);
            p.installed = true;
            p.status = "installed";
            records.push_back(std::move(p));
            current = &records.back();
        } else if (current != nullptr && starts_with(line, "P\t")) {
            add_unique(current->provides, trim(line.substr(2)));
        } else if (current != nullptr && starts_with(line, "R\t")) {
            const auto name = trim(line.substr(2));
            // rpmlib(...) are features of rpm itself, not packages.
            if (!starts_with(name, "rpmlib(")) {
                add_unique(current->depends, name);
            }
        }
    }
    return PackageDb(std::move(records));
}

Evr split_evr(std::string_view evr) {
    Evr out;
    if (const auto colon = evr.find(':'); colon != std::string_view::npos) {
        out.epoch = std::string(evr.substr(0, colon));
        evr.remove_prefix(colon + 1);
    }
    if (const auto dash = evr.rfind('-'); dash != std::string_view::npos) {
        out.version = std::string(evr.substr(0, dash));
        out.release = std::string(evr.substr(dash + 1));
    } else {
        out.version = std::string(evr);
    }
    return out;
}

} // namespace gpuprov
