// apt-get's simulation output (`apt-get install --simulate`), read into package actions: what
// apt itself resolved, for the plan and for apply's comparison with it.
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>
#include <gpuprov/version.hpp>
#include <optional>

namespace gpuprov {

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

} // namespace gpuprov
