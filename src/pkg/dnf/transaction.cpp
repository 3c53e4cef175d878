// dnf's transaction table, as `dnf --assumeno install|remove|shell` prints it (dnf 4,
// dnf/cli/output.py list_transaction): a title line per group ("Installing:", "Upgrading:",
// "Removing dependent packages:", ...) and one row per package:
//   " name   arch   [epoch:]version-release   repo   size"
// A name too long for its column sits alone on its line and the rest follows on the next,
// indented. Real samples: tests/fixtures/cmd/dnf/.
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>

namespace gpuprov {

namespace {

std::optional<PackageAction::Kind> group_kind(std::string_view title) {
    // Every group title dnf 4 prints for package actions; module stream groups ("Enabling
    // module streams:") change no package and are skipped.
    if (starts_with(title, "Installing") || title == "Replacing:") {
        return PackageAction::Kind::install; // Installing:, ... dependencies:, weak ...
    }
    if (starts_with(title, "Upgrading")) {
        return PackageAction::Kind::upgrade;
    }
    if (starts_with(title, "Downgrading")) {
        return PackageAction::Kind::downgrade;
    }
    if (starts_with(title, "Reinstalling")) {
        return PackageAction::Kind::reinstall;
    }
    if (starts_with(title, "Removing")) {
        return PackageAction::Kind::remove; // Removing:, dependent packages:, unused ...
    }
    return std::nullopt;
}

std::vector<std::string> fields(std::string_view line) {
    std::vector<std::string> out;
    for (const auto& w : split(line, ' ')) {
        if (const auto t = trim(w); !t.empty()) {
            out.emplace_back(t);
        }
    }
    return out;
}

} // namespace

std::vector<PackageAction> parse_dnf_transaction(std::string_view output) {
    std::vector<PackageAction> out;
    std::optional<PackageAction::Kind> kind;
    std::string pending_name; // a wrapped row's name, waiting for its second line
    for (const auto& raw : lines(output)) {
        std::string_view line = raw;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.empty() || line.front() != ' ') {
            // A title (or "Transaction Summary", "=====" rules, messages): rows end here.
            pending_name.clear();
            const auto t = trim(line);
            kind = !t.empty() && t.back() == ':' ? group_kind(t) : std::nullopt;
            continue;
        }
        if (!kind) {
            continue;
        }
        auto f = fields(line);
        if (!pending_name.empty()) {
            f.insert(f.begin(), pending_name);
            pending_name.clear();
        } else if (f.size() == 1) {
            pending_name = f.front();
            continue;
        }
        // name arch version repo size [unit]; the size is "5.6 k" or "0".
        if (f.size() < 5) {
            continue;
        }
        PackageAction a;
        a.kind = *kind;
        a.name = f[0];
        if (a.kind == PackageAction::Kind::remove) {
            a.from = f[2];
        } else {
            a.to = f[2];
        }
        out.push_back(std::move(a));
    }
    return out;
}

std::vector<std::string> parse_dnf_module_changes(std::string_view output) {
    // dnf/cli/output.py: "Enabling module streams:" rows are "name stream", "Switching module
    // streams:" rows "name old -> new", "Resetting modules:"/"Disabling modules:" rows "name".
    std::vector<std::string> out;
    std::string verb;
    for (const auto& raw : lines(output)) {
        std::string_view line = raw;
        if (line.empty() || line.front() != ' ') {
            const auto t = trim(line);
            verb = t == "Enabling module streams:"    ? "enable"
                   : t == "Switching module streams:" ? "switch"
                   : t == "Resetting modules:"        ? "reset"
                   : t == "Disabling modules:"        ? "disable"
                                                      : "";
            continue;
        }
        const auto f = fields(line);
        if (!verb.empty() && !f.empty()) {
            out.push_back(verb + " " + join(f, " "));
        }
    }
    return out;
}

} // namespace gpuprov
