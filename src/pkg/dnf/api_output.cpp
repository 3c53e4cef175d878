// The records gpuprov's unprivileged dnf resolver prints (src/pkg/dnf/gpuprov_dnf_resolve.py,
// its header lists them): one per line, tab-separated, "\\", "\t" and "\n" escaped inside a
// field. A real capture: tests/fixtures/cmd/dnf/api/.
#include <gpuprov/strings.hpp>
#include <gpuprov/transaction.hpp>

namespace gpuprov {

namespace {

std::vector<std::string> record_fields(std::string_view line) {
    std::vector<std::string> out(1);
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '\t') {
            out.emplace_back();
        } else if (c == '\\' && i + 1 < line.size()) {
            const char e = line[++i];
            out.back() += e == 't' ? '\t' : e == 'n' ? '\n' : e;
        } else {
            out.back() += c;
        }
    }
    return out;
}

std::optional<PackageAction::Kind> action_kind(std::string_view word) {
    for (const auto k : {PackageAction::Kind::install, PackageAction::Kind::upgrade,
                         PackageAction::Kind::downgrade, PackageAction::Kind::reinstall,
                         PackageAction::Kind::remove}) {
        if (to_string(k) == word) {
            return k;
        }
    }
    return std::nullopt;
}

} // namespace

DnfApiOutput parse_dnf_api_output(std::string_view output) {
    DnfApiOutput out;
    for (const auto& raw : lines(output)) {
        std::string_view line = raw;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.empty()) {
            continue;
        }
        const auto f = record_fields(line);
        const auto& type = f[0];
        if (type == "resolver" && f.size() >= 2 && starts_with(f[1], "dnf ")) {
            out.dnf_version = f[1].substr(4);
        } else if (type == "warning" && f.size() >= 2) {
            out.warnings.push_back(f[1]);
        } else if (type == "error" && f.size() >= 2) {
            out.error = f[1];
        } else if (type == "module" && f.size() >= 3) {
            out.module_changes.push_back(
                join(std::vector<std::string>(f.begin() + 1, f.end()), " "));
        } else if (type == "package" && f.size() >= 6) {
            const auto kind = action_kind(f[1]);
            if (!kind) {
                out.error = "gpuprov's dnf resolver printed an unknown action '" + f[1] + "'";
                return out;
            }
            PackageAction a;
            a.kind = *kind;
            a.name = f[2];
            (a.kind == PackageAction::Kind::remove ? a.from : a.to) = f[4];
            out.actions.push_back(std::move(a));
        } else if (type == "done" && f.size() >= 2) {
            // The count guards against a record lost on the way (a cut pipe, a partial line).
            out.done = f[1] == std::to_string(out.actions.size());
        }
    }
    return out;
}

} // namespace gpuprov
