// PackageDb lookups and the per-file caches for dpkg's and rpm's databases.
#include <algorithm>
#include <gpuprov/package_db.hpp>
#include <mutex>

namespace gpuprov {

PackageDb::PackageDb(std::vector<InstalledPackage> records) : m_records(std::move(records)) {
    for (std::size_t i = 0; i < m_records.size(); ++i) {
        m_by_name[m_records[i].name].push_back(i);
    }
}

const InstalledPackage* PackageDb::find(std::string_view name) const {
    const auto it = m_by_name.find(name);
    if (it == m_by_name.end()) {
        return nullptr;
    }
    for (const auto i : it->second) {
        if (m_records[i].installed) {
            return &m_records[i];
        }
    }
    return &m_records[it->second.front()];
}

std::optional<std::string> PackageDb::installed_version(std::string_view name) const {
    const auto* p = find(name);
    if (p == nullptr || !p->installed) {
        return std::nullopt;
    }
    return p->version;
}

std::vector<std::string> PackageDb::providers(std::string_view capability) const {
    std::vector<std::string> out;
    for (const auto& r : m_records) {
        if (r.installed &&
            std::find(r.provides.begin(), r.provides.end(), capability) != r.provides.end() &&
            std::find(out.begin(), out.end(), r.name) == out.end()) {
            out.push_back(r.name);
        }
    }
    return out;
}

std::vector<std::string> installed_requires(const PackageDb& db, std::string_view package) {
    const auto* p = db.find(package);
    if (p == nullptr || !p->installed) {
        return {};
    }
    std::vector<std::string> out;
    const auto add = [&](const std::string& name) {
        if (name != p->name && std::find(out.begin(), out.end(), name) == out.end()) {
            out.push_back(name);
        }
    };
    for (const auto& dep : p->depends) {
        if (db.installed_version(dep)) {
            add(dep);
            continue;
        }
        for (const auto& other : db.providers(dep)) {
            add(other);
        }
    }
    return out;
}

namespace {

// One cache per database file set: every step asks about a few packages, and re-reading a
// status file of several MiB (or starting rpm) each time cost more than the rest of `plan`.
// FakeSystem stamps are unique across fakes, so tests never share an entry by accident.
struct Cache {
    std::mutex mutex;
    std::vector<std::optional<FileStamp>> stamps;
    bool filled = false;
    PackageDb db;
};

std::vector<std::optional<FileStamp>> stamps_of(const System& sys,
                                                const std::vector<std::string>& files) {
    std::vector<std::optional<FileStamp>> out;
    out.reserve(files.size());
    for (const auto& f : files) {
        out.push_back(sys.stamp(f));
    }
    return out;
}

} // namespace

const PackageDb& dpkg_database(const System& sys) {
    static Cache cache;
    static const PackageDb empty;
    static const std::vector<std::string> files{"/var/lib/dpkg/status"};
    const std::lock_guard lock(cache.mutex);
    auto stamps = stamps_of(sys, files);
    if (!stamps.front()) {
        return empty;
    }
    if (!cache.filled || cache.stamps != stamps) {
        cache.db = parse_dpkg_db(sys.read_file(files.front()).value_or(""));
        cache.stamps = std::move(stamps);
        cache.filled = true;
    }
    return cache.db;
}

std::vector<std::string> rpm_db_files() {
    // rpm ≥ 4.16 (EL9) keeps the database in SQLite; EL8's rpm 4.14 in Berkeley DB's Packages.
    // SQLite in WAL mode may leave a write in the -wal file until a checkpoint.
    return {"/var/lib/rpm/rpmdb.sqlite", "/var/lib/rpm/rpmdb.sqlite-wal", "/var/lib/rpm/Packages"};
}

const PackageDb& rpm_database(const System& sys) {
    static Cache cache;
    static const PackageDb empty;
    const std::lock_guard lock(cache.mutex);
    auto stamps = stamps_of(sys, rpm_db_files());
    if (std::none_of(stamps.begin(), stamps.end(), [](const auto& s) { return s.has_value(); })) {
        return empty;
    }
    if (!cache.filled || cache.stamps != stamps) {
        const auto r = sys.query(rpm_query_command());
        cache.db = r.ok() ? parse_rpm_query(r.out) : PackageDb{};
        cache.stamps = std::move(stamps);
        // A failed query is not cached as "no packages": the next caller asks rpm again.
        cache.filled = r.ok();
    }
    return cache.db;
}

const PackageDb& package_database(const System& sys, std::string_view family) {
    static const PackageDb empty;
    if (family == "debian") {
        return dpkg_database(sys);
    }
    if (family == "rhel") {
        return rpm_database(sys);
    }
    return empty;
}

} // namespace gpuprov
