// Runs gpuprov's unprivileged dnf resolver (gpuprov_dnf_resolve.py, compiled in) through the
// System seam, like every command: an argv vector, a deadline, the fixed environment, logged.
#include "dnf_api.hpp"

#include <fmt/format.h>
#include <gpuprov/embedded.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <spdlog/spdlog.h>

namespace gpuprov {

namespace dnf_files {
const std::vector<EmbeddedFile>& files();
} // namespace dnf_files

namespace dnf_detail {

std::string_view resolver_program() {
    for (const auto& f : dnf_files::files()) {
        if (f.name == "gpuprov_dnf_resolve.py") {
            return f.content;
        }
    }
    throw BugError("gpuprov_dnf_resolve.py is not compiled in");
}

std::string dnf_python(const System& sys) {
    constexpr const char* kFallback = "/usr/bin/python3";
    const auto dnf = sys.read_file("/usr/bin/dnf");
    if (!dnf || !starts_with(*dnf, "#!")) {
        return kFallback;
    }
    const auto first = std::string_view(*dnf).substr(2, dnf->find('\n') - 2);
    for (const auto& word : split(first, ' ')) {
        const auto w = trim(word);
        if (w.empty()) {
            continue;
        }
        // "/usr/bin/env python3" names no path: the fixed PATH finds python3 the same way.
        if (w.front() != '/' || w.size() > 4096) {
            return kFallback;
        }
        return std::string(w) == "/usr/bin/env" ? kFallback : std::string(w);
    }
    return kFallback;
}

Command api_command(const System& sys, const SimulationRequest& req, const ApiDirs& dirs) {
    // -I: neither the working directory, PYTHON* variables nor the user's site directory
    // decide what `import dnf` loads; it starts in /.
    std::vector<std::string> argv{dnf_python(sys), "-I",         "-",           "--reposdir",
                                  dirs.reposdir,   "--cachedir", dirs.cachedir, "--persistdir",
                                  dirs.persistdir, "--logdir",   dirs.logdir};
    for (const auto& m : req.modules) {
        check_spec(m.spec());
        argv.insert(argv.end(), {m.switch_from_other ? "--switch-to" : "--enable", m.spec()});
    }
    for (const auto& p : req.installs) {
        check_spec(dnf_spec(p));
        argv.insert(argv.end(), {"--install", dnf_spec(p)});
    }
    for (const auto& r : req.removals) {
        check_spec(r);
        argv.insert(argv.end(), {"--remove", r});
    }
    // The bounds of the root path's makecache: the first read of NVIDIA's metadata is large.
    return {.argv = std::move(argv),
            .timeout = 900s,
            .stdin_data = std::string(resolver_program()),
            .idle_timeout = 300s,
            .cwd = "/"};
}

void resolve_with_api(System& sys, const SimulationRequest& req, const ApiDirs& dirs,
                      PackageTransaction& t) {
    const auto cmd = api_command(sys, req, dirs);
    t.simulated_with = display_argv(cmd.argv) + " < gpuprov's dnf resolver (dnf's Python API)";
    t.resolver = "dnf-python-api";
    t.resolved_by =
        fmt::format("dnf's own solver through its Python API, as uid {} on a private cache ({})",
                    sys.effective_uid(), dirs.cachedir);
    const auto r = sys.query(cmd);
    const auto out = parse_dnf_api_output(r.out);
    for (const auto& w : out.warnings) {
        spdlog::warn("dnf (Python API): {}", w);
    }
    if (!out.dnf_version.empty()) {
        t.resolved_by = fmt::format(
            "dnf {}'s own solver through its Python API, as uid {} on a private cache ({})",
            out.dnf_version, sys.effective_uid(), dirs.cachedir);
    }
    std::string why;
    if (r.not_found) {
        why = cmd.argv.front() + " (dnf's interpreter) is not installed";
    } else if (r.timed_out || r.interrupted) {
        why = "it did not finish";
    } else if (!out.error.empty()) {
        why = out.error;
    } else if (!r.ok() || !out.done) {
        why = fmt::format("exit {}, no complete answer: {}", r.exit_code,
                          tail_lines(r.err.empty() ? r.out : r.err, 12));
    }
    if (!why.empty()) {
        t.error = fmt::format("dnf could not resolve the transaction (`{}` exit {}): {}",
                              t.simulated_with, r.exit_code, why);
        return;
    }
    t.actions = out.actions;
    t.module_changes = out.module_changes;
}

} // namespace dnf_detail

} // namespace gpuprov
