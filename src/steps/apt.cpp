#include <fmt/format.h>
#include <gpuprov/facts.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>
#include <mutex>
#include <spdlog/spdlog.h>

namespace gpuprov {

namespace {

constexpr const char* kDpkgStatus = "/var/lib/dpkg/status";

// dpkg's status database is read directly: it is the source of truth apt itself reads, and a
// no-op run must not start apt or dpkg at all.
struct DpkgEntry {
    std::string version;
    std::string want;  ///< install | hold | deinstall | purge
    std::string state; ///< installed | half-configured | unpacked | ...
};

using DpkgDb = std::map<std::string, DpkgEntry, std::less<>>;

DpkgDb parse_dpkg_db(std::string_view status) {
    DpkgDb db;
    std::string name;
    DpkgEntry entry;
    const auto flush = [&] {
        if (!name.empty()) {
            db[name] = std::move(entry);
        }
        name.clear();
        entry = DpkgEntry{};
    };
    std::size_t pos = 0;
    while (pos < status.size()) {
        auto end = status.find('\n', pos);
        if (end == std::string_view::npos) {
            end = status.size();
        }
        const auto line = status.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty()) {
            flush();
        } else if (starts_with(line, "Package: ")) {
            name = std::string(trim(line.substr(9)));
        } else if (starts_with(line, "Version: ")) {
            entry.version = std::string(trim(line.substr(9)));
        } else if (starts_with(line, "Status: ")) {
            const auto words = split(trim(line.substr(8)), ' ');
            if (words.size() == 3) {
                entry.want = words[0];
                entry.state = words[2];
            }
        }
    }
    flush();
    return db;
}

// Every step asks about a few packages; re-reading a status file of several MiB each time cost
// more than the rest of `plan`. The parse is kept while the file's stamp is unchanged (dpkg
// replaces the file on every change).
const DpkgDb& dpkg_db(const System& sys) {
    static std::mutex mutex;
    static std::optional<FileStamp> cached_stamp;
    static DpkgDb cached;
    static const DpkgDb empty;
    const std::lock_guard lock(mutex);
    const auto stamp = sys.stamp(kDpkgStatus);
    if (!stamp) {
        return empty;
    }
    if (cached_stamp != stamp) {
        cached = parse_dpkg_db(sys.read_file(kDpkgStatus).value_or(""));
        cached_stamp = stamp;
    }
    return cached;
}

std::optional<DpkgEntry> dpkg_entry(const System& sys, std::string_view package) {
    const auto& db = dpkg_db(sys);
    const auto it = db.find(package);
    if (it == db.end()) {
        return std::nullopt;
    }
    return it->second;
}

class Apt final : public PackageManager {
public:
    [[nodiscard]] std::string_view name() const override { return "apt"; }

    [[nodiscard]] Command install(const std::vector<PackagePin>& pins) const override {
        std::vector<std::string> argv{"apt-get", "install",
                                      "--yes",   "--allow-downgrades",
                                      "-o",      "DPkg::Lock::Timeout=600",
                                      "-o",      "Dpkg::Options::=--force-confdef",
                                      "-o",      "Dpkg::Options::=--force-confold"};
        for (const auto& p : pins) {
            argv.push_back(p.spec());
        }
        return {.argv = argv, .timeout = 3600s, .env = noninteractive()};
    }

    [[nodiscard]] Command refresh_source(const std::string& source_file) const override {
        // Only this source: the main list is pointed at it and the parts directory disabled,
        // while list cleanup is off so other sources' indexes stay.
        return {.argv = {"apt-get", "update", "-o", "Dir::Etc::sourcelist=" + source_file, "-o",
                         "Dir::Etc::sourceparts=-", "-o", "APT::Get::List-Cleanup=0", "-o",
                         "DPkg::Lock::Timeout=600"},
                .timeout = 900s,
                .env = noninteractive()};
    }

    [[nodiscard]] Command hold(const std::vector<std::string>& packages) const override {
        std::vector<std::string> argv{"apt-mark", "hold"};
        argv.insert(argv.end(), packages.begin(), packages.end());
        return {.argv = argv, .timeout = 120s};
    }

    [[nodiscard]] Command repair() const override {
        return {.argv = {"dpkg", "--configure", "-a"}, .timeout = 3600s, .env = noninteractive()};
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
        const auto e = dpkg_entry(sys, package);
        if (!e || e->state != "installed") {
            return std::nullopt;
        }
        return e->version;
    }

    [[nodiscard]] bool held(const System& sys, std::string_view package) const override {
        const auto e = dpkg_entry(sys, package);
        return e && e->want == "hold";
    }

private:
    static std::map<std::string, std::string> noninteractive() {
        return {{"DEBIAN_FRONTEND", "noninteractive"}, {"NEEDRESTART_MODE", "a"}};
    }
};

} // namespace

std::unique_ptr<PackageManager> make_package_manager(const HostFacts& facts) {
    if (facts.os.family == "debian") {
        return std::make_unique<Apt>();
    }
    return nullptr;
}

bool wait_for_package_lock(const System& sys, const PackageManager& pm,
                           std::chrono::seconds deadline) {
    const auto until = sys.now() + deadline;
    bool said = false;
    for (;;) {
        std::optional<int> holder;
        std::string file;
        for (const auto& f : pm.lock_files()) {
            if ((holder = sys.lock_holder(f))) {
                file = f;
                break;
            }
        }
        if (!holder) {
            return true;
        }
        if (sys.now() >= until) {
            return false;
        }
        if (!said) {
            spdlog::warn("waiting up to {} s for {} (held by process {}, e.g. unattended-upgrades)",
                         deadline.count(), file, *holder);
            said = true;
        }
        sys.sleep(2s);
    }
}

} // namespace gpuprov
