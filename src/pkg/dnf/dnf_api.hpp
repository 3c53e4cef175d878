#pragma once
// The unprivileged resolution of a dnf transaction (issue 26 item 17): dnf's own solver through
// its Python API, for `gpuprov plan` run by an ordinary user, whom `dnf install --assumeno`
// refuses ("has to be run with superuser privileges").
#include <gpuprov/package_manager.hpp>
#include <gpuprov/system.hpp>
#include <gpuprov/transaction.hpp>
#include <string>
#include <string_view>

namespace gpuprov::dnf_detail {

/// The private directories of one resolution: the view's repository files (as the root
/// simulation's --setopt=reposdir), dnf's metadata cache, and its persistdir and logdir.
struct ApiDirs {
    std::string reposdir;
    std::string cachedir;
    std::string persistdir;
    std::string logdir;
};

/// dnf's "name-[epoch:]version-release" spelling of an exact version (NEVR without arch).
[[nodiscard]] std::string dnf_spec(const PackagePin& pin);
/// Refuses a spec with whitespace or quoting (it would start a second `dnf shell` command).
void check_spec(const std::string& s);

/// gpuprov's resolver program, compiled in (src/pkg/dnf/gpuprov_dnf_resolve.py).
[[nodiscard]] std::string_view resolver_program();

/// The interpreter dnf itself runs under: the one its /usr/bin/dnf names on its #! line
/// (/usr/bin/python3 on RHEL 9/10, /usr/libexec/platform-python on RHEL 8, whose python3 may
/// lack the dnf module); /usr/bin/python3 when that line cannot be read.
[[nodiscard]] std::string dnf_python(const System& sys);

/// The command: `PYTHON -I - --reposdir ... [--enable M:S]... [--install SPEC]...`, the program
/// on stdin, every spec one argv element (never part of the program text).
[[nodiscard]] Command api_command(const System& sys, const SimulationRequest& req,
                                  const ApiDirs& dirs);

/// Runs api_command and fills `t` from its records: actions, module changes, the error dnf
/// gave, and which resolver answered.
void resolve_with_api(System& sys, const SimulationRequest& req, const ApiDirs& dirs,
                      PackageTransaction& t);

} // namespace gpuprov::dnf_detail
