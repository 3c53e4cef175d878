#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>
#include <gpuprov/version.hpp>

namespace gpuprov {

std::string_view to_string(PackageAction::Kind kind) {
    switch (kind) {
    case PackageAction::Kind::install:
        return "install";
    case PackageAction::Kind::upgrade:
        return "upgrade";
    case PackageAction::Kind::downgrade:
        return "downgrade";
    case PackageAction::Kind::reinstall:
        return "reinstall";
    case PackageAction::Kind::remove:
        return "remove";
    }
    return "install";
}

std::vector<const PackageAction*> PackageTransaction::unowned_removals() const {
    std::vector<const PackageAction*> out;
    for (const auto& a : actions) {
        if (a.kind == PackageAction::Kind::remove && !a.owned) {
            out.push_back(&a);
        }
    }
    return out;
}

std::vector<PackagePin> PackageTransaction::exact_installs() const {
    std::vector<PackagePin> out;
    for (const auto& a : actions) {
        if (a.kind != PackageAction::Kind::remove) {
            out.push_back({a.name, a.to});
        }
    }
    return out;
}

std::vector<std::string> PackageTransaction::exact_removals() const {
    std::vector<std::string> out;
    for (const auto& a : actions) {
        if (a.kind == PackageAction::Kind::remove) {
            out.push_back(a.name);
        }
    }
    return out;
}

std::vector<PackagePin> PackageTransaction::holds() const {
    std::vector<PackagePin> out;
    for (const auto& a : actions) {
        if (a.hold && a.kind != PackageAction::Kind::remove) {
            out.push_back({a.name, a.to});
        }
    }
    return out;
}

std::vector<std::string> dependency_names(std::string_view field) {
    std::vector<std::string> out;
    for (const auto& clause : split(field, ',')) {
        for (const auto& alt : split(clause, '|')) {
            auto name = trim(alt);
            name = name.substr(0, name.find_first_of(" (:["));
            if (!name.empty() &&
                std::find(out.begin(), out.end(), std::string(name)) == out.end()) {
                out.emplace_back(name);
            }
        }
    }
    return out;
}

std::vector<std::string>
dependency_closure(const std::vector<std::string>& roots,
                   const std::function<std::vector<std::string>(const std::string&)>& depends_of,
                   const std::function<bool(std::string_view)>& keep) {
    std::set<std::string> seen(roots.begin(), roots.end());
    std::vector<std::string> todo(roots.begin(), roots.end());
    while (!todo.empty()) {
        const auto name = todo.back();
        todo.pop_back();
        for (const auto& dep : depends_of(name)) {
            if (keep(dep) && seen.insert(dep).second) {
                todo.push_back(dep);
            }
        }
    }
    return {seen.begin(), seen.end()};
}

bool is_driver_package(std::string_view name) {
    if (starts_with(name, "libnvidia-container") || starts_with(name, "nvidia-container") ||
        starts_with(name, "nvidia-docker")) {
        return false;
    }
    if (starts_with(name, "cuda-drivers")) {
        return true;
    }
    // NVSDM (NVLink 5 switch management) ships at the driver's version from R570 (reference §A2).
    for (const auto* debian : {"libcuda1", "libnvcuvid1", "libnvoptix1", "libegl-nvidia",
                               "libgles-nvidia", "libglx-nvidia", "libgl1-nvidia", "libnvsdm"}) {
        if (starts_with(name, debian)) {
            return true;
        }
    }
    return name.find("nvidia") != std::string_view::npos;
}

std::string driver_branch_of(std::string_view version) {
    if (const auto colon = version.find(':'); colon != std::string_view::npos) {
        version.remove_prefix(colon + 1);
    }
    const auto digits = version.find_first_not_of("0123456789");
    const auto head = version.substr(0, digits);
    // NVIDIA's driver branches are three digits (R300 .. R999); what follows is the rest of the
    // driver version or the packaging revision.
    if (head.size() != 3 || head < "300" ||
        (digits != std::string_view::npos && version[digits] != '.' && version[digits] != '-')) {
        return {};
    }
    return std::string(head);
}

std::set<std::string> gpuprov_installed_packages(const System& sys) {
    std::set<std::string> out;
    try {
        if (const auto journal = load_journal(sys)) {
            for (const auto& s : journal->steps) {
                for (const auto& [name, version] : s.versions) {
                    out.insert(name);
                }
            }
        }
    } catch (const Error&) {
        // An unreadable journal owns nothing: removals then need --allow-remove, the safe side.
    }
    return out;
}

std::string describe(const PackageAction& a) {
    switch (a.kind) {
    case PackageAction::Kind::install:
        return fmt::format("{:<9} {}  {}", to_string(a.kind), a.name, a.to);
    case PackageAction::Kind::remove:
        return fmt::format("{:<9} {}  {}", to_string(a.kind), a.name, a.from);
    case PackageAction::Kind::reinstall:
        // Same version on both sides: print it once, never "X -> X".
        return fmt::format("{:<9} {}  {}", to_string(a.kind), a.name, a.to);
    default:
        return fmt::format("{:<9} {}  {} -> {}", to_string(a.kind), a.name, a.from, a.to);
    }
}

std::vector<std::string> transaction_diff(const std::vector<PackageAction>& planned,
                                          const std::vector<PackageAction>& now) {
    // Order within apt's output is not part of the promise (apt orders for dpkg), the set is.
    std::vector<std::string> out;
    for (const auto& a : now) {
        if (std::find(planned.begin(), planned.end(), a) == planned.end()) {
            out.push_back("+ " + describe(a));
        }
    }
    for (const auto& a : planned) {
        if (std::find(now.begin(), now.end(), a) == now.end()) {
            out.push_back("- " + describe(a));
        }
    }
    return out;
}

} // namespace gpuprov
