// apt for the debian family: transactions (apt-get install, its simulation in a private view of
// gpuprov's verified indexes), holds (apt-mark), refreshes of one source, dpkg's database.
#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <gpuprov/apt_download.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade_preview.hpp>

namespace gpuprov {

namespace {

constexpr const char* kDpkgStatus = "/var/lib/dpkg/status";
constexpr const char* kAptLists = "/var/lib/apt/lists";
constexpr const char* kSourceParts = "/etc/apt/sources.list.d";
constexpr const char* kPreferenceParts = "/etc/apt/preferences.d";

// dpkg's database comes from the one reader (gpuprov/package_db.hpp) that facts and doctor use:
// it is the source of truth apt itself reads, and a no-op run must not start apt or dpkg.
class Apt final : public PackageManager {
public:
    [[nodiscard]] std::string_view name() const override { return "apt"; }

    [[nodiscard]] Command install(const std::vector<PackagePin>& pins,
                                  const std::vector<std::string>& removals,
                                  const std::vector<ModuleStream>& modules) const override {
        if (!modules.empty()) {
            throw BugError("apt has no module streams (" + modules.front().spec() + ")");
        }
        // Status-Fd=1: apt's machine-readable progress (pmstatus:/dlstatus: lines) on stdout,
        // beside its normal output, for progress_reader().
        std::vector<std::string> argv{"apt-get", "install",
                                      "--yes",   "--allow-downgrades",
                                      "-o",      "DPkg::Lock::Timeout=600",
                                      "-o",      "Dpkg::Options::=--force-confdef",
                                      "-o",      "Dpkg::Options::=--force-confold",
                                      "-o",      "APT::Status-Fd=1"};
        append_targets(argv, pins, removals);
        return transaction(std::move(argv));
    }

    [[nodiscard]] PackageTransaction simulate(System& sys,
                                              const SimulationRequest& req) const override {
        if (!req.modules.empty()) {
            throw BugError("apt has no module streams (" + req.modules.front().spec() + ")");
        }
        PackageTransaction t;
        t.requested = req.installs;
        t.removals = req.removals;
        // The same targets as install(), so the simulation is of the command apply runs. Held
        // packages may change here: which of them gpuprov is allowed to move is decided by the
        // caller from the result, and the real install runs after the unhold.
        std::vector<std::string> argv{"apt-get",
                                      "install",
                                      "--simulate",
                                      "--allow-downgrades",
                                      "--allow-change-held-packages",
                                      "-o",
                                      "APT::Get::Show-Versions=1",
                                      "-o",
                                      "Debug::NoLocking=1"};
        if (!req.scratch_dir.empty()) {
            const auto view = make_view(sys, req);
            argv.insert(argv.end(), view.begin(), view.end());
        } else if (!req.preferences.empty()) {
            throw BugError("apt preferences for a simulation need its scratch directory");
        }
        append_targets(argv, req.installs, req.removals);
        t.simulated_with = display_argv(argv);
        // apt-get's simulation needs no root: one resolver for everyone.
        t.resolver = "apt-get";
        t.resolved_by = "apt itself";
        const auto r = sys.query({.argv = argv, .timeout = 300s, .env = noninteractive()});
        if (!r.ok()) {
            t.error = fmt::format("apt could not resolve the transaction (`{}` exit {}): {}",
                                  t.simulated_with, r.exit_code,
                                  tail_lines(r.err.empty() ? r.out : r.err, 12));
            return t;
        }
        t.actions = parse_apt_simulation(r.out);
        return t;
    }

    [[nodiscard]] static PackageTransaction upgrade_preview(const System& sys) {
        PackageTransaction t;
        t.resolver = "apt-get";
        t.resolved_by = "apt itself";
        // --with-new-pkgs: a kernel metapackage's upgrade installs the new ABI's image, as
        // `apt upgrade` and unattended-upgrades do; holds stay held.
        const std::vector<std::string> argv{"apt-get", "--simulate",
                                            "upgrade", "--with-new-pkgs",
                                            "-o",      "APT::Get::Show-Versions=1",
                                            "-o",      "Debug::NoLocking=1"};
        t.simulated_with = display_argv(argv);
        const auto r = sys.query({.argv = argv, .timeout = 300s, .env = noninteractive()});
        if (!r.ok()) {
            t.error = fmt::format("apt could not resolve the upgrade (`{}` exit {}): {}",
                                  t.simulated_with, r.exit_code,
                                  tail_lines(r.err.empty() ? r.out : r.err, 12));
            return t;
        }
        t.actions = parse_apt_simulation(r.out);
        return t;
    }

    [[nodiscard]] std::function<void(std::string_view)>
    progress_reader(std::function<void(double, std::string_view)> report) const override {
        // apt writes whole lines, but a pipe read may end anywhere in one.
        return
            [report = std::move(report), partial = std::string()](std::string_view chunk) mutable {
                partial.append(chunk);
                std::size_t start = 0;
                for (auto nl = partial.find('\n'); nl != std::string::npos;
                     nl = partial.find('\n', start)) {
                    if (const auto st = parse_apt_status_line(
                            std::string_view(partial).substr(start, nl - start))) {
                        report(st->percent, st->text);
                    }
                    start = nl + 1;
                }
                partial.erase(0, start);
            };
    }

    [[nodiscard]] Command refresh_source(const std::string& source_file) const override {
        // Only this source: the main list is pointed at it and the parts directory disabled,
        // while list cleanup is off so other sources' indexes stay.
        return {.argv = {"apt-get", "update", "-o", "Dir::Etc::sourcelist=" + source_file, "-o",
                         "Dir::Etc::sourceparts=-", "-o", "APT::Get::List-Cleanup=0", "-o",
                         "DPkg::Lock::Timeout=600"},
                .timeout = 900s,
                .env = noninteractive(),
                .idle_timeout = 300s};
    }

    [[nodiscard]] Command hold(const std::vector<std::string>& packages) const override {
        std::vector<std::string> argv{"apt-mark", "hold"};
        argv.insert(argv.end(), packages.begin(), packages.end());
        return {.argv = argv, .timeout = 120s};
    }

    [[nodiscard]] Command unhold(const std::vector<std::string>& packages) const override {
        std::vector<std::string> argv{"apt-mark", "unhold"};
        argv.insert(argv.end(), packages.begin(), packages.end());
        return {.argv = argv, .timeout = 120s};
    }

    [[nodiscard]] Command repair() const override {
        return transaction({"dpkg", "--configure", "-a"});
    }

    [[nodiscard]] bool interrupted(const System& sys) const override {
        // dpkg records each step of a transaction under updates/ and clears it on completion.
        for (const auto& name : sys.list_dir("/var/lib/dpkg/updates")) {
            if (name != "tmp.i") {
                return true;
            }
        }
        const auto status = sys.read_file(kDpkgStatus);
        if (!status) {
            return false;
        }
        for (const char* bad : {" half-configured\n", " unpacked\n", " half-installed\n",
                                " triggers-awaited\n", " triggers-pending\n"}) {
            if (status->find(bad) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    [[nodiscard]] std::vector<std::string> lock_files() const override {
        return {"/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock"};
    }

    [[nodiscard]] std::optional<std::string> installed(const System& sys,
                                                       std::string_view package) const override {
        return dpkg_database(sys).installed_version(package);
    }

    [[nodiscard]] bool held(const System& sys, std::string_view package) const override {
        const auto* e = dpkg_database(sys).find(package);
        return e != nullptr && e->hold;
    }

    [[nodiscard]] std::vector<std::string>
    installed_depends(const System& sys, std::string_view package) const override {
        return installed_requires(dpkg_database(sys), package);
    }

    [[nodiscard]] std::map<std::string, std::string>
    candidates(const System& sys, const std::vector<std::string>& packages) const override {
        if (packages.empty()) {
            return {};
        }
        std::vector<std::string> argv{"apt-cache", "policy"};
        argv.insert(argv.end(), packages.begin(), packages.end());
        // C locale: the field names are translated otherwise ("Kandidat:").
        const auto r = sys.query({.argv = argv, .timeout = 120s, .env = {{"LC_ALL", "C"}}});
        if (!r.ok()) {
            throw CommandError(fmt::format("`{}` failed (exit {}): {}", display_argv(argv),
                                           r.exit_code, std::string(trim(tail_lines(r.err, 4)))));
        }
        return parse_apt_policy(r.out);
    }

    [[nodiscard]] std::optional<bool> available(const System& sys,
                                                const std::string& package) const override {
        try {
            // apt-cache policy prints nothing for a name no source knows, and "Candidate:
            // (none)" for one no enabled source offers: both read as an empty candidate.
            const auto c = candidates(sys, {package});
            const auto it = c.find(package);
            return it != c.end() && !it->second.empty();
        } catch (const CommandError&) {
            return std::nullopt;
        }
    }

    [[nodiscard]] std::vector<std::string> installed_names(const System& sys) const override {
        std::vector<std::string> out;
        for (const auto& e : dpkg_database(sys).records()) {
            if (e.installed && std::find(out.begin(), out.end(), e.name) == out.end()) {
                out.push_back(e.name);
            }
        }
        return out;
    }

    static void append_targets(std::vector<std::string>& argv, const std::vector<PackagePin>& pins,
                               const std::vector<std::string>& removals) {
        for (const auto& p : pins) {
            argv.push_back(p.spec());
        }
        for (const auto& name : removals) {
            argv.push_back(name + "-"); // apt-get install's "remove this one" suffix
        }
    }

    // A private view of apt's configuration: the system's sources and lists as they are, with
    // gpuprov's repositories from its verified cache in place of (or beside) the system's copy.
    // Only links and small files under scratch_dir are written; apt reads the rest in place.
    static std::vector<std::string> make_view(System& sys, const SimulationRequest& req) {
        const auto dir = req.scratch_dir;
        const auto lists = dir + "/lists";
        const auto parts = dir + "/sources.list.d";
        const auto cache = dir + "/cache";
        for (const auto& d : {lists, parts, cache}) {
            sys.make_dirs(d);
            for (const auto& old : sys.list_dir(d)) {
                // apt itself leaves directories here (lists/auxfiles, cache/archives after a
                // bundle's download); only the links and files of the last view go.
                if (!sys.is_dir(d + "/" + old)) {
                    sys.remove_file(d + "/" + old);
                }
            }
        }
        for (const auto& name : sys.list_dir(kAptLists)) {
            const auto path = std::string(kAptLists) + "/" + name;
            if (name != "lock" && name != "partial" && !sys.is_dir(path)) {
                sys.make_symlink(path, lists + "/" + name);
            }
        }
        for (const auto& name : sys.list_dir(kSourceParts)) {
            const auto path = std::string(kSourceParts) + "/" + name;
            const bool replaced =
                std::any_of(req.repos.begin(), req.repos.end(),
                            [&](const auto& r) { return r.replaces_source == path; });
            if (!replaced && (ends_with(name, ".list") || ends_with(name, ".sources"))) {
                sys.make_symlink(path, parts + "/" + name);
            }
        }
        for (std::size_t i = 0; i < req.repos.size(); ++i) {
            const auto& r = req.repos[i];
            sys.write_file_atomic(fmt::format("{}/gpuprov-sim-{}.sources", parts, i), r.source_text,
                                  0644);
            sys.make_symlink(r.inrelease_file, lists + "/" + apt_list_name(r.inrelease_url));
            sys.make_symlink(r.packages_file, lists + "/" + apt_list_name(r.packages_url));
        }
        std::vector<std::string> out{"-o", "Dir::Etc::sourceparts=" + parts,
                                     "-o", "Dir::State::Lists=" + lists,
                                     "-o", "Dir::Cache=" + cache,
                                     "-o", "Dir::Cache::pkgcache=",
                                     "-o", "Dir::Cache::srcpkgcache="};
        if (!req.preferences.empty()) {
            // The system's preferences.d as it is, with the files a pinning package will
            // install in place of their namesakes (apt reads every file there; preferences(5)).
            const auto prefs = dir + "/preferences.d";
            sys.make_dirs(prefs);
            for (const auto& old : sys.list_dir(prefs)) {
                sys.remove_file(prefs + "/" + old);
            }
            for (const auto& name : sys.list_dir(kPreferenceParts)) {
                if (req.preferences.count(name) == 0) {
                    sys.make_symlink(std::string(kPreferenceParts) + "/" + name,
                                     prefs + "/" + name);
                }
            }
            for (const auto& [name, content] : req.preferences) {
                sys.write_file_atomic(prefs + "/" + name, content, 0644);
            }
            out.insert(out.end(), {"-o", "Dir::Etc::PreferencesParts=" + prefs});
        }
        return out;
    }

    static std::map<std::string, std::string> environment() { return noninteractive(); }

private:
    static bool ends_with(std::string_view s, std::string_view suffix) {
        return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
    }

    static std::map<std::string, std::string> noninteractive() {
        return {{"DEBIAN_FRONTEND", "noninteractive"}, {"NEEDRESTART_MODE", "a"}};
    }

    /// A dpkg transaction. How long a driver + CUDA install takes nobody can say (a 3 GB
    /// toolkit unpack on a slow disk, a DKMS build per kernel), so the bound is silence, not
    /// total time: 20 minutes without a line means a hang (a postinst waiting on a prompt, a
    /// stuck DKMS make). A stop request lets it finish: dpkg half-way leaves packages
    /// half-configured, which is worse than waiting.
    static Command transaction(std::vector<std::string> argv) {
        return {.argv = std::move(argv),
                .timeout = 6h,
                .env = noninteractive(),
                .idle_timeout = 20min,
                .finish_on_stop = true};
    }
};

} // namespace

PackageTransaction apt_upgrade_preview(const System& sys) {
    return Apt::upgrade_preview(sys);
}

PackageTransaction apt_download(System& sys, const SimulationRequest& req,
                                const std::string& download_dir, const std::string& status_file) {
    if (req.scratch_dir.empty() || download_dir.empty() || status_file.empty()) {
        throw BugError("apt_download needs the private view, a download directory and a status");
    }
    PackageTransaction t;
    t.requested = req.installs;
    // --download-only: apt's own downloader, which checks every file against the signed index
    // it came from; the status file stands for a fresh host's database.
    std::vector<std::string> argv{"apt-get",
                                  "install",
                                  "--download-only",
                                  "--yes",
                                  "-o",
                                  "Debug::NoLocking=1",
                                  "-o",
                                  "Dir::Cache::archives=" + download_dir,
                                  "-o",
                                  "Dir::State::status=" + status_file};
    const auto view = Apt::make_view(sys, req);
    argv.insert(argv.end(), view.begin(), view.end());
    Apt::append_targets(argv, req.installs, {});
    t.simulated_with = display_argv(argv);
    t.resolver = "apt-get";
    t.resolved_by = "apt itself";
    const auto r =
        sys.run({.argv = argv, .timeout = 6h, .env = Apt::environment(), .idle_timeout = 15min});
    if (!r.ok()) {
        t.error = fmt::format("`{}` exit {}: {}", t.simulated_with, r.exit_code,
                              tail_lines(r.err.empty() ? r.out : r.err, 12));
    }
    return t;
}

std::unique_ptr<PackageManager> make_apt() {
    return std::make_unique<Apt>();
}

std::optional<AptStatus> parse_apt_status_line(std::string_view line) {
    AptStatus st;
    if (starts_with(line, "pmstatus:")) {
        line.remove_prefix(9);
    } else if (starts_with(line, "dlstatus:")) {
        line.remove_prefix(9);
        st.download = true;
    } else {
        return std::nullopt;
    }
    // PACKAGE may be "libssl3:amd64": the percent is the first field after the first one that
    // reads as a number; TEXT is everything after it, colons and all.
    const auto fields = split(line, ':');
    for (std::size_t i = 1; i < fields.size(); ++i) {
        const auto& f = fields[i];
        char* end = nullptr;
        const double percent = f.empty() ? -1 : std::strtod(f.c_str(), &end);
        if (end == nullptr || *end != '\0' || percent < 0 || percent > 100) {
            continue;
        }
        st.percent = percent;
        for (std::size_t k = 0; k < i; ++k) {
            st.package += (k == 0 ? "" : ":") + fields[k];
        }
        for (std::size_t k = i + 1; k < fields.size(); ++k) {
            st.text += (k == i + 1 ? "" : ":") + fields[k];
        }
        return st;
    }
    return std::nullopt;
}

std::map<std::string, std::string> parse_apt_policy(std::string_view output) {
    // apt-private/private-cacheset.cc (policy): "NAME:" at the start of a line, then indented
    // "Installed: V", "Candidate: V" and the version table.
    std::map<std::string, std::string> out;
    std::string current;
    for (const auto& raw : lines(output)) {
        std::string_view line = raw;
        if (!line.empty() && line.front() != ' ' && line.back() == ':') {
            current = std::string(line.substr(0, line.size() - 1));
            continue;
        }
        const auto t = trim(line);
        if (!current.empty() && starts_with(t, "Candidate:")) {
            const auto v = trim(t.substr(10));
            out[current] = v == "(none)" ? std::string() : std::string(v);
            current.clear();
        }
    }
    return out;
}

std::string apt_list_name(std::string_view uri) {
    // strutl.cc URItoFileName: drop the scheme and any user:password@, %-quote the characters
    // below (and controls, space, bytes >= 0x7f) as lower-case hex, then '/' becomes '_'.
    if (const auto scheme = uri.find("://"); scheme != std::string_view::npos) {
        uri.remove_prefix(scheme + 3);
    }
    const auto slash = uri.find('/');
    if (const auto at = uri.substr(0, slash).rfind('@'); at != std::string_view::npos) {
        uri.remove_prefix(at + 1);
    }
    static constexpr std::string_view kQuoted = "\\|{}[]<>\"^~_=!@#$%^&*";
    std::string out;
    for (const char ch : uri) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c >= 0x7f || kQuoted.find(ch) != std::string_view::npos) {
            out += fmt::format("%{:02x}", c);
        } else {
            out += ch == '/' ? '_' : ch;
        }
    }
    return out;
}

} // namespace gpuprov
