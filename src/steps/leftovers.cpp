#include <gpuprov/leftovers.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

constexpr std::string_view kTempMarker = ".gpuprov-tmp-";
constexpr std::size_t kMkstempChars = 6;
// A write_file_atomic takes milliseconds; a temp file this old has no writer left.
constexpr std::chrono::minutes kSharedMinAge{10};

bool mkstemp_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

struct Sweep {
    System& sys;
    std::vector<std::string> removed;

    [[nodiscard]] bool old_enough(const std::string& path) const {
        const auto st = sys.stamp(path);
        if (!st) {
            return false;
        }
        const auto now_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(sys.now().time_since_epoch())
                .count();
        return now_ns - st->mtime_ns >=
               std::chrono::duration_cast<std::chrono::nanoseconds>(kSharedMinAge).count();
    }

    /// `depth` levels of subdirectories below `dir` are swept too.
    void dir(const std::string& d, int depth, bool shared) {
        for (const auto& name : sys.list_dir(d)) {
            const auto path = d + "/" + name;
            if (sys.read_link(path)) {
                continue; // a link is never ours to follow or remove
            }
            if (sys.is_dir(path)) {
                if (depth > 0) {
                    dir(path, depth - 1, shared);
                }
                continue;
            }
            if (is_leftover_temp_name(name) && (!shared || old_enough(path))) {
                sys.remove_file(path);
                removed.push_back(path);
            }
        }
    }
};

} // namespace

bool is_leftover_temp_name(std::string_view name) {
    const auto at = name.rfind(kTempMarker);
    if (at == std::string_view::npos || at == 0) {
        return false;
    }
    const auto suffix = name.substr(at + kTempMarker.size());
    if (suffix.size() != kMkstempChars) {
        return false;
    }
    for (const char c : suffix) {
        if (!mkstemp_char(c)) {
            return false;
        }
    }
    return true;
}

std::vector<std::string> clean_leftover_temp_files(System& sys,
                                                   const std::vector<std::string>& extra_dirs) {
    Sweep sweep{sys, {}};
    // Written by apply only, which holds the run lock.
    for (const char* d : {"/etc/apt/sources.list.d", "/usr/share/keyrings", "/etc/modprobe.d",
                          "/etc/profile.d", "/usr/local/bin", "/etc/logrotate.d"}) {
        sweep.dir(d, 0, false);
    }
    sweep.dir("/etc/systemd/system", 1, false); // units, drop-in *.d and *.wants directories
    sweep.dir("/etc/gpuprov", 2, false);
    // The journal, and backups mirroring the host's paths (/var/lib/gpuprov/backup/etc/...).
    sweep.dir("/var/lib/gpuprov", 8, false);
    // Also written outside apply.
    sweep.dir("/var/cache/gpuprov", 3, true);
    sweep.dir("/var/lib/prometheus/node-exporter", 0, true);
    for (const auto& d : extra_dirs) {
        sweep.dir(d, 0, true);
    }
    return sweep.removed;
}

} // namespace gpuprov
