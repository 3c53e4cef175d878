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

namespace {

// "[1.2-3]" at the start of `s`: the text inside, and `s` advanced past it.
std::optional<std::string> take_bracketed(std::string_view& s, char open, char close) {
    s = trim(s);
    if (s.empty() || s.front() != open) {
        return std::nullopt;
    }
    const auto end = s.find(close);
    if (end == std::string_view::npos) {
        return std::nullopt;
    }
    auto inside = std::string(s.substr(1, end - 1));
    s.remove_prefix(end + 1);
    return inside;
}

} // namespace

std::vector<PackageAction> parse_apt_simulation(std::string_view output) {
    // apt-get's simulation lines (apt-pkg/algorithms.cc, pkgSimulate):
    //   Inst NAME [OLDVERSION] (NEWVERSION RELEASE... [ARCH])
    //   Remv NAME [OLDVERSION]      Purg NAME [OLDVERSION]
    // NAME carries ":ARCH" only for foreign architectures.
    std::vector<PackageAction> out;
    for (const auto& raw : lines(output)) {
        std::string_view line = raw;
        const bool inst = starts_with(line, "Inst ");
        const bool remv = starts_with(line, "Remv ") || starts_with(line, "Purg ");
        if (!inst && !remv) {
            continue;
        }
        line.remove_prefix(5);
        const auto space = line.find(' ');
        PackageAction a;
        a.name = std::string(line.substr(0, space));
        line = space == std::string_view::npos ? std::string_view{} : line.substr(space);
        if (const auto old = take_bracketed(line, '[', ']')) {
            a.from = *old;
        }
        if (remv) {
            a.kind = PackageAction::Kind::remove;
            out.push_back(std::move(a));
            continue;
        }
        const auto paren = take_bracketed(line, '(', ')');
        if (!paren) {
            continue; // not a line apt writes; never guess a version
        }
        a.to = std::string(trim(std::string_view(*paren).substr(0, paren->find(' '))));
        if (a.from.empty()) {
            a.kind = PackageAction::Kind::install;
        } else {
            const int c = compare_deb_versions(a.to, a.from);
            a.kind = c > 0   ? PackageAction::Kind::upgrade
                     : c < 0 ? PackageAction::Kind::downgrade
                             : PackageAction::Kind::reinstall;
        }
        out.push_back(std::move(a));
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
    for (const auto* debian : {"libcuda1", "libnvcuvid1", "libnvoptix1", "libegl-nvidia",
                               "libgles-nvidia", "libglx-nvidia", "libgl1-nvidia"}) {
        if (starts_with(name, debian)) {
            return true;
        }
    }
    return name.find("nvidia") != std::string_view::npos;
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
