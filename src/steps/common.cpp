#include "common.hpp"

#include <ctime>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <gpuprov/diff.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

bool file_matches(const System& sys, const ManagedFile& f) {
    const auto now = sys.read_file(f.path);
    return now && *now == f.content;
}

Change file_change(const System& sys, const ManagedFile& f) {
    return Change{.kind = Change::Kind::file,
                  .target = f.path,
                  .detail = unified_diff(f.path, sys.read_file(f.path), f.content)};
}

unsigned restorable_mode(const System& sys, const std::string& path, unsigned fallback) {
    // stat, not lstat: a link's own mode is always 0777 and says nothing about the file.
    const auto info = sys.stat(path);
    return (info ? info->mode : fallback) & kMaxRestoredMode;
}

namespace {
std::string backup_path(const System& sys, const std::string& path) {
    const auto stamp = fmt::format("{:%Y%m%dT%H%M%S}",
                                   std::chrono::time_point_cast<std::chrono::seconds>(sys.now()));
    return std::string(kBackupDir) + path + "." + stamp;
}
std::string backup_marker(const std::string& path) {
    return std::string(kBackupDir) + path + ".latest";
}
} // namespace

void write_managed(System& sys, const ManagedFile& f) {
    const auto before = sys.read_file(f.path);
    if (before) {
        if (*before == f.content) {
            return;
        }
        const auto backup = backup_path(sys, f.path);
        sys.write_file_atomic(backup, *before, 0600);
        // The marker names the newest backup, so a failed step can put the old file back, and
        // the mode the file had, which the backup (0600, root's) does not keep.
        const unsigned mode = restorable_mode(sys, f.path, f.mode);
        sys.write_file_atomic(backup_marker(f.path), fmt::format("{}\nmode {:04o}\n", backup, mode),
                              0600);
    } else {
        sys.remove_file(backup_marker(f.path));
    }
    sys.write_file_atomic(f.path, f.content, f.mode);
}

void restore_managed(System& sys, const std::string& path) {
    const auto marker = sys.read_file(backup_marker(path));
    if (marker) {
        const auto marker_lines = lines(*marker);
        const auto backup =
            marker_lines.empty() ? std::string() : std::string(trim(marker_lines[0]));
        // Markers written before the mode was recorded restore the old default, 0644.
        unsigned mode = kMaxRestoredMode;
        if (marker_lines.size() > 1 && starts_with(marker_lines[1], "mode ")) {
            const auto octal = std::string(trim(std::string_view(marker_lines[1]).substr(5)));
            if (!octal.empty() && octal.size() <= 4 &&
                octal.find_first_not_of("01234567") == std::string::npos) {
                mode = static_cast<unsigned>(std::stoul(octal, nullptr, 8));
            }
        }
        if (const auto old = sys.read_file(backup)) {
            // write_file_atomic keeps the owner of the file it replaces (the one the original
            // was rewritten over, which kept the original's owner the same way). Clamped
            // again: a marker an older gpuprov wrote over a link says 0777.
            sys.write_file_atomic(path, *old, mode & kMaxRestoredMode);
            return;
        }
    }
    sys.remove_file(path);
}

Change command_change(const Command& cmd, std::string why) {
    return Change{
        .kind = Change::Kind::command, .target = display_argv(cmd.argv), .detail = std::move(why)};
}

Change note(std::string text) {
    return Change{.kind = Change::Kind::note, .detail = std::move(text)};
}

std::string year_month(std::chrono::system_clock::time_point when) {
    const auto t = std::chrono::system_clock::to_time_t(when);
    std::tm tm{};
    gmtime_r(&t, &tm);
    return fmt::format("{:04}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1);
}

void plan_source_refresh(const StepContext& ctx, const std::string& source_file,
                         const std::string& why, CheckResult& r) {
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
    if (r.reason.empty()) {
        r.reason = why;
    }
    r.changes.push_back(command_change(make_package_manager(ctx.facts)->refresh_source(source_file),
                                       "refresh this repository's index only: " + why));
}

std::unique_ptr<PackageManager> package_manager_or_block(const StepContext& ctx, CheckResult& r) {
    auto pm = make_package_manager(ctx.facts);
    if (!pm) {
        r.status = StepStatus::blocked;
        r.reason =
            fmt::format("package installs need apt (Debian, Ubuntu) or dnf (the RHEL family); "
                        "this host is {}",
                        ctx.facts.os.pretty_name.empty() ? "unknown" : ctx.facts.os.pretty_name);
    }
    return pm;
}

const PackageIndex* index_or_block(const StepContext& ctx, const std::string& repo,
                                   CheckResult& r) {
    const auto& state = ctx.repos.repo(repo);
    if (!state.index) {
        r.status = StepStatus::blocked;
        // The repository step itself carries the full error (URL, status); here, point at it.
        r.reason = state.error.empty()
                       ? fmt::format("repository '{}' is not defined in the profile", repo)
                       : fmt::format("needs the '{}' repository, which is unavailable (see {})",
                                     repo, repo == "cuda" ? "cuda-repo" : repo);
        return nullptr;
    }
    return &*state.index;
}

bool all_installed(const System& sys, const PackageManager& pm,
                   const std::vector<std::string>& packages, std::string_view version,
                   VersionMatch match) {
    for (const auto& p : packages) {
        const auto v = pm.installed(sys, p);
        if (!v ||
            (match == VersionMatch::exact ? *v != version : !version_has_prefix(*v, version))) {
            return false;
        }
    }
    return true;
}

void plan_installs(CheckResult& r, const System& sys, const PackageManager& pm,
                   const std::vector<PackagePin>& pins) {
    bool any = false;
    for (const auto& pin : pins) {
        const auto now = pm.installed(sys, pin.name);
        if (now && !pin.version.empty() && *now == pin.version) {
            continue; // already at the pinned version: nothing to show or install
        }
        any = true;
        r.changes.push_back(Change{
            .kind = Change::Kind::package,
            .target = pin.name,
            .detail = now ? fmt::format("{} -> {}", *now, pin.version)
                          : fmt::format("install {}",
                                        pin.version.empty() ? "(distro version)" : pin.version)});
        r.installs.push_back(pin);
    }
    if (any && r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
}

namespace {
std::string wants_dir(std::string_view target) {
    return "/etc/systemd/system/" + std::string(target) + ".wants/";
}
} // namespace

bool have_systemctl(const System& sys) {
    return sys.exists("/usr/bin/systemctl") || sys.exists("/bin/systemctl");
}

bool unit_enabled(const System& sys, std::string_view unit, std::string_view target) {
    const auto link = wants_dir(target) + std::string(unit);
    return sys.read_link(link).has_value() || sys.exists(link);
}

void enable_unit(System& sys, std::string_view unit, bool start, std::string_view target) {
    if (have_systemctl(sys)) {
        std::vector<std::string> argv{"systemctl", "enable"};
        if (start) {
            argv.emplace_back("--now");
        }
        argv.emplace_back(unit);
        run_checked(sys, {.argv = argv, .timeout = 120s});
        return;
    }
    sys.make_dirs(wants_dir(target));
    const auto local = "/etc/systemd/system/" + std::string(unit);
    const auto unit_file = sys.exists(local) ? local : "/lib/systemd/system/" + std::string(unit);
    run_checked(sys, {.argv = {"ln", "-sfn", unit_file, wants_dir(target) + std::string(unit)},
                      .timeout = 10s});
}

void disable_unit(System& sys, std::string_view unit, std::string_view target) {
    if (have_systemctl(sys)) {
        (void)sys.run({.argv = {"systemctl", "disable", std::string(unit)}, .timeout = 120s});
    }
    sys.remove_file(wants_dir(target) + std::string(unit));
}

const PackageNames* package_names_or_block(const StepContext& ctx, CheckResult& r) {
    const auto* names = ctx.matrix.package_names(ctx.facts.os.family);
    if (names == nullptr) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("gpuprov's version matrix names no packages for the '{}' family",
                               ctx.facts.os.family);
    }
    return names;
}

void plan_repository_write(const StepContext& ctx, const System& sys, const std::string& repo_name,
                           const std::string& key_path,
                           const std::function<ManagedFile(const RepoState&)>& config,
                           const std::string& refresh_why, CheckResult& r) {
    const auto& state = ctx.repos.repo(repo_name);
    if (!state.key) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("repository '{}': {}", repo_name,
                               state.error.empty() ? "not defined in the profile" : state.error);
        return;
    }
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
    r.changes.push_back(Change{
        .kind = Change::Kind::file,
        .target = key_path,
        .detail = fmt::format("OpenPGP key {} from {} (fingerprint checked; {})",
                              state.key->fingerprint, state.repo.key_url, state.repo.key_source)});
    const auto file = config(state);
    r.changes.push_back(file_change(sys, file));
    r.changes.push_back(
        command_change(make_package_manager(ctx.facts)->refresh_source(file.path), refresh_why));
}

} // namespace gpuprov::steps
