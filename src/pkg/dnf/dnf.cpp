// dnf for the rhel family (RHEL, Rocky Linux, AlmaLinux, Oracle Linux, CentOS 8/9), following
// NVIDIA's driver installation guide for RHEL 8/9
// (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/, "Red Hat Enterprise
// Linux 8/9": kernel-devel-$(uname -r), EPEL's dkms, `dnf module enable nvidia-driver:<stream>`,
// `dnf install nvidia-open`; "Version locking": `dnf versionlock`) and the CUDA installation
// guide's network-repository method (`dnf install cuda-toolkit-X-Y`).
#include "dnf_api.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fnmatch.h>
#include <gpuprov/dnf_download.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade_preview.hpp>

namespace gpuprov {

namespace dnf_detail {

std::string dnf_spec(const PackagePin& pin) {
    return pin.version.empty() ? pin.name : pin.name + "-" + pin.version;
}

/// Package specs go into argv (never a shell), and into `dnf shell`'s script for mixed
/// transactions, where a newline or space would start a second command: refused there.
void check_spec(const std::string& s) {
    if (s.empty() || s.find_first_of(" \t\r\n;'\"\\") != std::string::npos) {
        throw Error(fmt::format("refusing package spec '{}' (whitespace or quoting)", s));
    }
}

} // namespace dnf_detail

namespace {

using dnf_detail::check_spec;
using dnf_detail::dnf_spec;

constexpr const char* kVersionlockList = "/etc/dnf/plugins/versionlock.list";

// dnf_limit_repos(): the repository globs every dnf command is limited to (empty: all enabled).
std::vector<std::string>& repo_limit() {
    static std::vector<std::string> globs;
    return globs;
}

// `--repo=GLOB` for each limit, after the command word (argv[1] stays dnf's command or first
// option: check_install reads it). dnf(8): --repo is --disablerepo="*" --enablerepo=GLOB.
std::vector<std::pair<std::string, std::string>>& extra_repos() {
    static std::vector<std::pair<std::string, std::string>> repos;
    return repos;
}

std::vector<std::string> limited(std::vector<std::string> argv) {
    const auto at = static_cast<std::ptrdiff_t>(std::min<std::size_t>(argv.size(), 2));
    std::vector<std::string> add;
    for (const auto& [id, url] : extra_repos()) {
        // dnf(8) --repofrompath: the repository exists for this command only, so transactions
        // that run before gpuprov's .repo files are written (preflight's) read it too; a
        // higher cost than the .repo's (dnf.conf(5) cost, default 1000) lets gpuprov's own
        // repository serve a package both offer.
        add.push_back("--repofrompath=" + id + "," + url);
        add.push_back("--setopt=" + id + ".cost=2000");
    }
    for (const auto& glob : repo_limit()) {
        add.push_back("--repo=" + glob);
    }
    argv.insert(argv.begin() + at, add.begin(), add.end());
    return argv;
}
constexpr const char* kRepoDir = "/etc/yum.repos.d";

class Dnf final : public PackageManager {
public:
    [[nodiscard]] std::string_view name() const override { return "dnf"; }

    [[nodiscard]] Command install(const std::vector<PackagePin>& pins,
                                  const std::vector<std::string>& removals,
                                  const std::vector<ModuleStream>& modules) const override {
        if (removals.empty() && modules.empty()) {
            // `dnf install` of an exact NEVR installs, upgrades or downgrades to it.
            std::vector<std::string> argv{"dnf", "install", "-y"};
            for (const auto& p : pins) {
                check_spec(dnf_spec(p));
                argv.push_back(dnf_spec(p));
            }
            return transaction(limited(std::move(argv)), std::nullopt);
        }
        // Installs, removals and module streams in one transaction: dnf 4 has no argv form for
        // that; its shell runs a script of module/install/remove commands as one transaction
        // on `run` (real output: tests/fixtures/cmd/dnf/shell-module-enable-install.txt).
        return transaction(limited({"dnf", "shell", "-y"}), script(pins, removals, modules));
    }

    void check_install(const Command& cmd, const CommandResult& result) const override {
        if (cmd.argv.size() < 2 || cmd.argv[1] != "shell") {
            return; // `dnf install` fails with its exit status
        }
        // Real dnf 4.14: a shell whose `module enable` or `install` was refused still exits 0,
        // with "Error: ..." on stderr and nothing done (tests/fixtures/cmd/dnf/lab/).
        for (const auto* text : {&result.err, &result.out}) {
            for (const auto& line : lines(*text)) {
                if (starts_with(trim(line), "Error:")) {
                    throw CommandError(
                        fmt::format("`{}` exited 0 but dnf refused:\n{}", display_argv(cmd.argv),
                                    tail_lines(result.err.empty() ? result.out : result.err, 8)));
                }
            }
        }
    }

    [[nodiscard]] PackageTransaction simulate(System& sys,
                                              const SimulationRequest& req) const override {
        if (!req.preferences.empty()) {
            throw BugError("dnf has no apt preferences (" + req.preferences.begin()->first + ")");
        }
        PackageTransaction t;
        t.requested = req.installs;
        t.removals = req.removals;
        t.modules = req.modules;
        if (sys.effective_uid() != 0) {
            // dnf's CLI refuses install and shell without root, --assumeno or not.
            return simulate_unprivileged(sys, req, std::move(t));
        }
        t.resolver = "dnf";
        t.resolved_by = "dnf itself, as root";
        // --assumeno: dnf resolves, prints its table and answers "no"; nothing changes and no
        // rpm lock is taken. Its exit status is 1 on that path, so success is read from the
        // output instead.
        std::vector<std::string> argv{"dnf", "--assumeno"};
        if (!req.scratch_dir.empty()) {
            const auto dirs = make_view(sys, req);
            const std::vector<std::string> view{"--setopt=reposdir=" + dirs.reposdir,
                                                "--setopt=cachedir=" + dirs.cachedir};
            argv.insert(argv.end(), view.begin(), view.end());
            // With repo_gpgcheck dnf asks before it trusts a repository's key, --assumeno
            // answers no, and the metadata download fails ("repomd.xml GPG signature
            // verification error"). Reading the metadata first with -y imports the key (the
            // pinned one, already checked) into the private cache's keyring only: rpm's
            // database is not touched.
            std::vector<std::string> fill{"dnf", "-y"};
            fill.insert(fill.end(), view.begin(), view.end());
            fill.push_back("makecache");
            fill = limited(std::move(fill));
            const auto m = sys.query({.argv = fill, .timeout = 900s, .idle_timeout = 300s});
            if (!m.ok()) {
                t.simulated_with = display_argv(fill);
                t.error = fmt::format("dnf could not read the repositories (`{}` exit {}): {}",
                                      t.simulated_with, m.exit_code,
                                      tail_lines(m.err.empty() ? m.out : m.err, 6));
                return t;
            }
        }
        std::optional<std::string> stdin_data;
        if (req.removals.empty() && req.modules.empty()) {
            argv.push_back("install");
            for (const auto& p : req.installs) {
                check_spec(dnf_spec(p));
                argv.push_back(dnf_spec(p));
            }
        } else {
            argv.push_back("shell");
            stdin_data = script(req.installs, req.removals, req.modules);
        }
        argv = limited(std::move(argv));
        t.simulated_with = display_argv(argv);
        const auto r = sys.query(
            {.argv = argv, .timeout = 600s, .stdin_data = stdin_data, .idle_timeout = 300s});
        if (const auto why = refusal(r); !why.empty()) {
            t.error = fmt::format("dnf could not resolve the transaction (`{}` exit {}): {}",
                                  t.simulated_with, r.exit_code, why);
            return t;
        }
        t.actions = parse_dnf_transaction(r.out);
        t.module_changes = parse_dnf_module_changes(r.out);
        fill_installed_versions(sys, t);
        return t;
    }

    [[nodiscard]] static PackageTransaction upgrade_preview(const System& sys) {
        PackageTransaction t;
        t.resolver = "dnf";
        t.resolved_by = "dnf itself, as root";
        const auto argv = limited({"dnf", "--assumeno", "upgrade"});
        t.simulated_with = display_argv(argv);
        if (sys.effective_uid() != 0) {
            t.error = "dnf's upgrade preview needs root (`" + t.simulated_with + "`)";
            return t;
        }
        // --assumeno: as in simulate(), dnf resolves, prints its table and answers "no".
        const auto r = sys.query({.argv = argv, .timeout = 600s, .idle_timeout = 300s});
        if (const auto why = refusal(r); !why.empty()) {
            t.error = fmt::format("dnf could not resolve the upgrade (`{}` exit {}): {}",
                                  t.simulated_with, r.exit_code, why);
            return t;
        }
        t.actions = parse_dnf_transaction(r.out);
        fill_installed_versions(sys, t);
        return t;
    }

    [[nodiscard]] Command refresh_source(const std::string& source_file) const override {
        // gpuprov names each .repo file after the one repository id inside it
        // (/etc/yum.repos.d/gpuprov-cuda.repo holds [gpuprov-cuda]); --repo limits dnf to it.
        auto id = std::filesystem::path(source_file).stem().string();
        // -y: the first read of a repo_gpgcheck repository imports its key (the pinned one
        // gpuprov just wrote), which dnf otherwise asks about and, without a terminal, refuses.
        return {.argv = {"dnf", "-y", "makecache", "--refresh", "--repo", id},
                .timeout = 900s,
                .idle_timeout = 300s};
    }

    [[nodiscard]] Command hold(const std::vector<std::string>& packages) const override {
        // python3-dnf-plugin-versionlock: locks each name at its installed version.
        std::vector<std::string> argv{"dnf", "versionlock", "add"};
        argv.insert(argv.end(), packages.begin(), packages.end());
        return {.argv = limited(argv), .timeout = 300s};
    }

    [[nodiscard]] Command unhold(const std::vector<std::string>& packages) const override {
        std::vector<std::string> argv{"dnf", "versionlock", "delete"};
        argv.insert(argv.end(), packages.begin(), packages.end());
        return {.argv = limited(argv), .timeout = 300s};
    }

    [[nodiscard]] Command repair() const override {
        // An rpm transaction killed half-way leaves the old and new version of a package both
        // in the database; dnf removes the older of each pair (dnf(8) "remove --duplicates").
        return transaction(limited({"dnf", "remove", "-y", "--duplicates"}), std::nullopt);
    }

    [[nodiscard]] bool interrupted(const System& sys) const override {
        return !duplicate_packages(rpm_database(sys)).empty();
    }

    [[nodiscard]] std::vector<std::string> lock_files() const override {
        // rpm's transaction lock (fcntl) and dnf's own (flock on a pid file; dnf/lock.py).
        return {"/var/lib/rpm/.rpm.lock", "/var/lib/dnf/rpmdb_lock.pid"};
    }

    [[nodiscard]] std::optional<std::string> installed(const System& sys,
                                                       std::string_view package) const override {
        return rpm_database(sys).installed_version(package);
    }

    [[nodiscard]] std::optional<bool> available(const System& sys,
                                                const std::string& package) const override {
        // Read-only (repoquery takes no rpm lock); dnf refreshes expired metadata as its own
        // makecache timer does. Exit 0 with no line: no enabled repository has it.
        const auto r =
            sys.query({.argv = limited({"dnf", "-q", "repoquery", "--available", "--qf",
                                        "%{name}-%{version}-%{release}.%{arch}", package}),
                       .timeout = 600s,
                       .idle_timeout = 300s});
        if (!r.ok()) {
            return std::nullopt;
        }
        return !trim(r.out).empty();
    }

    [[nodiscard]] bool held(const System& sys, std::string_view package) const override {
        // Judged by effect: the list locks only while the plugin that reads it is installed
        // (stock RHEL/Rocky images lack it; reference §B).
        const auto& db = rpm_database(sys);
        const auto* p = db.find(package);
        if (p == nullptr || !versionlock_available(db)) {
            return false;
        }
        const auto list = sys.read_file(kVersionlockList);
        return list && versionlocked(*list, *p);
    }

    [[nodiscard]] std::vector<std::string>
    installed_depends(const System& sys, std::string_view package) const override {
        return installed_requires(rpm_database(sys), package);
    }

    [[nodiscard]] std::vector<std::string> installed_names(const System& sys) const override {
        std::vector<std::string> out;
        for (const auto& p : rpm_database(sys).records()) {
            if (std::find(out.begin(), out.end(), p.name) == out.end()) {
                out.push_back(p.name);
            }
        }
        return out;
    }

    // A private view of dnf's repositories (dnf_download's too).
    static dnf_detail::ApiDirs view(System& sys, const SimulationRequest& req) {
        return make_view(sys, req);
    }

private:
    /// An ordinary user (`gpuprov plan` for a change review): dnf's own solver through its
    /// Python API on private directories under the view (dnf_api.hpp). Root keeps the CLI,
    /// which is what apply runs.
    static PackageTransaction simulate_unprivileged(System& sys, const SimulationRequest& req,
                                                    PackageTransaction t) {
        t.resolver = "dnf-python-api";
        if (req.scratch_dir.empty()) {
            t.error = "dnf resolves for an unprivileged user only on a private cache, and this "
                      "run has none (run as root, or give the user a writable home)";
            return t;
        }
        auto dirs = make_view(sys, req);
        dirs.persistdir = req.scratch_dir + "/persist";
        dirs.logdir = req.scratch_dir + "/log";
        dnf_detail::resolve_with_api(sys, req, dirs, t);
        if (t.error.empty()) {
            fill_installed_versions(sys, t);
        }
        return t;
    }

    /// The old version of an upgrade, downgrade or reinstall, from the rpm database (dnf's
    /// table names only the new one; both resolvers are read alike).
    static void fill_installed_versions(const System& sys, PackageTransaction& t) {
        const auto& db = rpm_database(sys);
        for (auto& a : t.actions) {
            if (a.kind == PackageAction::Kind::upgrade ||
                a.kind == PackageAction::Kind::downgrade ||
                a.kind == PackageAction::Kind::reinstall) {
                a.from = db.installed_version(a.name).value_or("");
            }
        }
    }

    static std::string script(const std::vector<PackagePin>& pins,
                              const std::vector<std::string>& removals,
                              const std::vector<ModuleStream>& modules) {
        std::string s;
        for (const auto& m : modules) {
            check_spec(m.spec());
            // dnf refuses to enable a second stream of a module ("It is not possible to switch
            // enabled streams of a module unless explicitly enabled", and a `module reset` in
            // the same shell does not count: tests/fixtures/cmd/dnf/error-stream-switch.txt);
            // switch-to moves the installed packages of the module with it.
            s += (m.switch_from_other ? "module switch-to " : "module enable ") + m.spec() + "\n";
        }
        if (!pins.empty()) {
            s += "install";
            for (const auto& p : pins) {
                check_spec(dnf_spec(p));
                s += " " + dnf_spec(p);
            }
            s += "\n";
        }
        if (!removals.empty()) {
            s += "remove";
            for (const auto& r : removals) {
                check_spec(r);
                s += " " + r;
            }
            s += "\n";
        }
        return s + "run\n";
    }

    /// Why dnf refused, or empty when it resolved. "Operation aborted." is --assumeno's own
    /// answer; any other "Error:" line, a dependency "Problem" or a "Skipping packages" group
    /// (dnf leaving out what it cannot install, without best=True:
    /// tests/fixtures/cmd/dnf/shell-switch-to-skipped-conflicts.txt), or no table and no
    /// "Nothing to do", is a refusal.
    static std::string refusal(const CommandResult& r) {
        if (r.timed_out || r.not_found || r.interrupted) {
            return r.not_found ? "dnf is not installed" : "dnf did not finish";
        }
        for (const auto* text : {&r.out, &r.err}) {
            const auto all = lines(*text);
            for (std::size_t i = 0; i < all.size(); ++i) {
                const auto t = trim(all[i]);
                if ((starts_with(t, "Error:") && t != "Error: Operation aborted.") ||
                    starts_with(t, "Skipping packages") || starts_with(t, "Problem ") ||
                    starts_with(t, "Problem:")) {
                    // What dnf said, from its first complaint on.
                    const std::vector<std::string> said(
                        all.begin() + static_cast<std::ptrdiff_t>(i),
                        all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + 12)));
                    return join(said, "\n");
                }
            }
        }
        const bool resolved = r.out.find("Transaction Summary") != std::string::npos ||
                              r.out.find("Nothing to do") != std::string::npos;
        return resolved ? std::string() : tail_lines(r.err.empty() ? r.out : r.err, 12);
    }

    // A private view of dnf's repositories: the system's .repo files as they are, with
    // gpuprov's from `req.repos` in place of (or beside) them, and a private metadata cache.
    static dnf_detail::ApiDirs make_view(System& sys, const SimulationRequest& req) {
        const auto repos = req.scratch_dir + "/yum.repos.d";
        const auto cache = req.scratch_dir + "/cache";
        sys.make_dirs(repos);
        sys.make_dirs(cache);
        for (const auto& old : sys.list_dir(repos)) {
            sys.remove_file(repos + "/" + old);
        }
        for (const auto& name : sys.list_dir(kRepoDir)) {
            const auto path = std::string(kRepoDir) + "/" + name;
            const bool replaced =
                std::any_of(req.repos.begin(), req.repos.end(),
                            [&](const auto& r) { return r.replaces_source == path; });
            if (!replaced && name.size() > 5 && name.substr(name.size() - 5) == ".repo") {
                sys.make_symlink(path, repos + "/" + name);
            }
        }
        for (std::size_t i = 0; i < req.repos.size(); ++i) {
            sys.write_file_atomic(fmt::format("{}/gpuprov-sim-{}.repo", repos, i),
                                  req.repos[i].source_text, 0644);
        }
        return {.reposdir = repos, .cachedir = cache, .persistdir = {}, .logdir = {}};
    }

    /// An rpm transaction. The bound is silence, as for dpkg (a DKMS build in %post can take
    /// minutes, a 3 GB toolkit longer), and a stop request lets it finish.
    static Command transaction(std::vector<std::string> argv, std::optional<std::string> in) {
        return {.argv = std::move(argv),
                .timeout = 6h,
                .stdin_data = std::move(in),
                .idle_timeout = 20min,
                .finish_on_stop = true};
    }
};

} // namespace

bool versionlocked(std::string_view list, const InstalledPackage& p) {
    // Entries are NEVRA globs, "nvidia-open-3:570.195.03-1.el9.*" as `dnf versionlock add`
    // writes them (tests/fixtures/cmd/dnf/versionlock-570-open.list), or globs such as
    // "*nvidia*580*" (NVIDIA's guide for RHEL 10). '!' entries are excludes, not locks.
    const auto evr = split_evr(p.version);
    const auto nevra =
        fmt::format("{}-{}:{}-{}.{}", p.name, evr.epoch, evr.version, evr.release, p.arch);
    for (const auto& raw : lines(list)) {
        const auto line = std::string(trim(raw));
        if (line.empty() || line.front() == '#' || line.front() == '!') {
            continue;
        }
        if (fnmatch(line.c_str(), nevra.c_str(), 0) == 0) {
            return true;
        }
    }
    return false;
}

bool versionlock_available(const PackageDb& db) {
    return !db.providers(kVersionlockCommand).empty();
}

std::vector<std::string> duplicate_packages(const PackageDb& db) {
    // Kernels and their devel/modules packages are installed side by side on purpose
    // (dnf's installonlypkgs); anything else twice under one name and arch was interrupted.
    const auto installonly = [](const InstalledPackage& p) {
        return starts_with(p.name, "kernel") ||
               std::any_of(p.provides.begin(), p.provides.end(),
                           [](const auto& c) { return starts_with(c, "installonlypkg("); });
    };
    std::vector<std::string> out;
    const auto& r = db.records();
    for (std::size_t i = 0; i < r.size(); ++i) {
        for (std::size_t j = i + 1; j < r.size(); ++j) {
            if (r[i].name == r[j].name && r[i].arch == r[j].arch && !installonly(r[i]) &&
                std::find(out.begin(), out.end(), r[i].name) == out.end()) {
                out.push_back(r[i].name);
            }
        }
    }
    return out;
}

void dnf_limit_repos(std::vector<std::string> globs,
                     std::vector<std::pair<std::string, std::string>> extra) {
    repo_limit() = std::move(globs);
    extra_repos() = std::move(extra);
}

namespace {
std::map<std::string, DnfPackageKey>& package_keys() {
    static std::map<std::string, DnfPackageKey> keys;
    return keys;
}
} // namespace

void dnf_use_package_keys(std::map<std::string, DnfPackageKey> keys) {
    package_keys() = std::move(keys);
}

const std::map<std::string, DnfPackageKey>& dnf_package_keys() {
    return package_keys();
}

std::vector<Command> dnf_download_commands(const SimulationRequest& req,
                                           const std::string& reposdir,
                                           const DnfDownloadPlace& place) {
    if (req.scratch_dir.empty() || reposdir.empty() || place.installroot.empty() ||
        place.destdir.empty() || place.releasever.empty()) {
        throw BugError("dnf_download needs the private view, an installroot, a destdir and the "
                       "release");
    }
    // The host's dnf.conf (dnf would read the installroot's first), the view's .repo files and
    // a cache of its own; $releasever and the module platform spelled out, as the installroot
    // has no release package or os-release to read them from (dnf(8) --installroot).
    std::vector<std::string> common{"dnf",
                                    "-y",
                                    "--installroot=" + place.installroot,
                                    "--config=/etc/dnf/dnf.conf",
                                    "--setopt=reposdir=" + reposdir,
                                    "--setopt=cachedir=" + req.scratch_dir + "/cache",
                                    "--releasever=" + place.releasever};
    if (!place.platform_id.empty()) {
        common.push_back("--setopt=module_platform_id=" + place.platform_id);
    }
    std::vector<Command> out;
    if (!req.modules.empty()) {
        // The streams the plan enables, enabled in the installroot only (its
        // /etc/dnf/modules.d), so the install resolves within them as on the host.
        auto argv = common;
        argv.insert(argv.end(), {"module", "enable"});
        for (const auto& m : req.modules) {
            check_spec(m.spec());
            argv.push_back(m.spec());
        }
        out.push_back({.argv = std::move(argv), .timeout = 900s, .idle_timeout = 300s});
    }
    // --downloadonly: dnf's downloader, which checks each file's checksum against the
    // repository's primary metadata; nothing is installed (dnf(8) --destdir).
    auto argv = common;
    argv.insert(argv.end(), {"install", "--downloadonly", "--destdir=" + place.destdir});
    for (const auto& p : req.installs) {
        check_spec(dnf_spec(p));
        argv.push_back(dnf_spec(p));
    }
    out.push_back({.argv = std::move(argv), .timeout = 6h, .idle_timeout = 15min});
    return out;
}

PackageTransaction dnf_download(System& sys, const SimulationRequest& req,
                                const DnfDownloadPlace& place) {
    PackageTransaction t;
    t.requested = req.installs;
    t.modules = req.modules;
    t.resolver = "dnf";
    t.resolved_by = "dnf itself, as root, in a private installroot";
    if (req.scratch_dir.empty()) {
        throw BugError("dnf_download needs the private view");
    }
    const auto dirs = Dnf::view(sys, req);
    for (const auto& cmd : dnf_download_commands(req, dirs.reposdir, place)) {
        t.simulated_with = display_argv(cmd.argv);
        const auto r = sys.run(cmd);
        if (!r.ok()) {
            t.error = fmt::format("`{}` exit {}: {}", t.simulated_with, r.exit_code,
                                  tail_lines(r.err.empty() ? r.out : r.err, 12));
            return t;
        }
    }
    return t;
}

std::vector<YumRepoSection> parse_yum_repo_file(std::string_view text) {
    std::vector<YumRepoSection> out;
    auto list = [](std::string_view v) {
        std::vector<std::string> items;
        std::string cur;
        for (const char c : v) {
            if (c == ' ' || c == '\t' || c == ',') {
                if (!cur.empty()) {
                    items.push_back(std::move(cur));
                    cur.clear();
                }
            } else {
                cur += c;
            }
        }
        if (!cur.empty()) {
            items.push_back(std::move(cur));
        }
        return items;
    };
    std::string last_key;
    for (const auto& raw : lines(text)) {
        const auto line = trim(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        if (line.front() == '[' && line.back() == ']') {
            out.push_back({.id = std::string(trim(line.substr(1, line.size() - 2)))});
            last_key.clear();
            continue;
        }
        if (out.empty()) {
            continue;
        }
        auto& s = out.back();
        const auto eq = line.find('=');
        const bool continuation = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
        if (continuation && eq == std::string_view::npos) {
            // An indented line continues a list value (baseurl, gpgkey over several lines).
            auto more = list(line);
            auto& target = last_key == "baseurl" ? s.baseurls : s.gpgkeys;
            if (last_key == "baseurl" || last_key == "gpgkey") {
                target.insert(target.end(), more.begin(), more.end());
            }
            continue;
        }
        if (eq == std::string_view::npos) {
            continue;
        }
        last_key = std::string(trim(line.substr(0, eq)));
        const auto value = trim(line.substr(eq + 1));
        if (last_key == "baseurl") {
            s.baseurls = list(value);
        } else if (last_key == "gpgkey") {
            s.gpgkeys = list(value);
        } else if (last_key == "enabled") {
            s.enabled = value == "1" || value == "True" || value == "true" || value == "yes";
        } else if (last_key == "mirrorlist" || last_key == "metalink") {
            s.has_mirrorlist = !value.empty();
        }
    }
    return out;
}

std::string expand_yum_vars(std::string_view value, const std::string& releasever,
                            const std::string& basearch) {
    std::string out(value);
    for (const auto& [name, with] : std::vector<std::pair<std::string, std::string>>{
             {"releasever", releasever}, {"basearch", basearch}, {"arch", basearch}}) {
        for (const auto& form : {"${" + name + "}", "$" + name}) {
            for (auto at = out.find(form); at != std::string::npos; at = out.find(form, at)) {
                out.replace(at, form.size(), with);
                at += with.size();
            }
        }
    }
    return out;
}

PackageTransaction dnf_upgrade_preview(const System& sys) {
    return Dnf::upgrade_preview(sys);
}

std::unique_ptr<PackageManager> make_dnf() {
    return std::make_unique<Dnf>();
}

} // namespace gpuprov
