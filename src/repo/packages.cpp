#include <algorithm>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/version.hpp>

namespace gpuprov {

namespace {

void assign_field(PackageRecord& r, const std::string& name, std::string value) {
    // deb822 field names are case-insensitive (Debian Policy 5.1).
    const auto key = to_lower(name);
    if (key == "package") {
        r.name = std::move(value);
    } else if (key == "version") {
        r.version = std::move(value);
    } else if (key == "architecture") {
        r.architecture = std::move(value);
    } else if (key == "depends") {
        r.depends = std::move(value);
    } else if (key == "provides") {
        r.provides = std::move(value);
    } else if (key == "filename") {
        r.filename = std::move(value);
    } else if (key == "sha256") {
        r.sha256 = std::move(value);
    }
}

/// Version without its epoch ("1:2.3-1" → "2.3-1").
std::string_view without_epoch(std::string_view v) {
    const auto colon = v.find(':');
    return colon == std::string_view::npos ? v : v.substr(colon + 1);
}

} // namespace

std::vector<PackageRecord> parse_packages_file(std::string_view content) {
    std::vector<PackageRecord> out;
    PackageRecord current;
    std::string field;
    std::string value;
    const auto flush_field = [&] {
        if (!field.empty()) {
            assign_field(current, field, std::move(value));
        }
        field.clear();
        value.clear();
    };
    const auto flush_record = [&] {
        flush_field();
        if (!current.name.empty() && !current.version.empty()) {
            out.push_back(std::move(current));
        }
        current = PackageRecord{};
    };
    for (const auto& line : lines(content)) {
        if (trim(line).empty()) {
            flush_record();
            continue;
        }
        if (line.front() == ' ' || line.front() == '\t') {
            // Continuation: only multi-line fields (Description) use it; kept for completeness.
            if (!field.empty()) {
                value += '\n';
                value += trim(line);
            }
            continue;
        }
        if (line.front() == '#') {
            continue;
        }
        flush_field();
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        field = std::string(trim(std::string_view(line).substr(0, colon)));
        value = std::string(trim(std::string_view(line).substr(colon + 1)));
    }
    flush_record();
    return out;
}

PackageIndex::PackageIndex(std::vector<PackageRecord> records) : m_records(std::move(records)) {
    for (std::size_t i = 0; i < m_records.size(); ++i) {
        m_by_name[m_records[i].name].push_back(i);
    }
    for (auto& [name, indexes] : m_by_name) {
        std::stable_sort(indexes.begin(), indexes.end(), [this](std::size_t a, std::size_t b) {
            return compare_deb_versions(m_records[a].version, m_records[b].version) > 0;
        });
    }
}

std::vector<const PackageRecord*> PackageIndex::versions(std::string_view name) const {
    std::vector<const PackageRecord*> out;
    if (const auto it = m_by_name.find(name); it != m_by_name.end()) {
        for (const auto i : it->second) {
            out.push_back(&m_records[i]);
        }
    }
    return out;
}

const PackageRecord* PackageIndex::newest(std::string_view name) const {
    const auto it = m_by_name.find(name);
    return it == m_by_name.end() ? nullptr : &m_records[it->second.front()];
}

const PackageRecord* PackageIndex::newest_with_prefix(std::string_view name,
                                                      std::string_view prefix) const {
    const auto it = m_by_name.find(name);
    if (it == m_by_name.end()) {
        return nullptr;
    }
    // A profile says "550.", not "1:550.": an epoch is packaging history, not the version asked
    // for, so it is skipped unless the prefix names one itself.
    const bool prefix_has_epoch = prefix.find(':') != std::string_view::npos;
    for (const auto i : it->second) {
        const std::string_view v = m_records[i].version;
        if (starts_with(prefix_has_epoch ? v : without_epoch(v), prefix)) {
            return &m_records[i];
        }
    }
    return nullptr;
}

std::vector<std::string> PackageIndex::names_with_prefix(std::string_view prefix) const {
    std::vector<std::string> out;
    for (auto it = m_by_name.lower_bound(prefix); it != m_by_name.end(); ++it) {
        if (!starts_with(it->first, prefix)) {
            break;
        }
        out.push_back(it->first);
    }
    return out;
}

} // namespace gpuprov
