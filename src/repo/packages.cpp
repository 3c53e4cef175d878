#include <algorithm>
#include <cctype>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/version.hpp>

namespace gpuprov {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

/// The record member a field goes to, or nullptr for fields gpuprov does not keep (most of a
/// Packages file is Description text, so skipping it without copying matters for plan time).
std::string* field_slot(PackageRecord& r, std::string_view name) {
    // deb822 field names are case-insensitive (Debian Policy 5.1).
    if (iequals(name, "package")) {
        return &r.name;
    }
    if (iequals(name, "version")) {
        return &r.version;
    }
    if (iequals(name, "architecture")) {
        return &r.architecture;
    }
    if (iequals(name, "depends")) {
        return &r.depends;
    }
    if (iequals(name, "provides")) {
        return &r.provides;
    }
    if (iequals(name, "filename")) {
        return &r.filename;
    }
    if (iequals(name, "sha256")) {
        return &r.sha256;
    }
    if (iequals(name, "size")) {
        return &r.size;
    }
    return nullptr;
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
    std::string* slot = nullptr; // where continuation lines of the current field go
    const auto flush_record = [&] {
        if (!current.name.empty() && !current.version.empty()) {
            out.push_back(std::move(current));
        }
        current = PackageRecord{};
        slot = nullptr;
    };
    std::size_t pos = 0;
    while (pos <= content.size()) {
        auto end = content.find('\n', pos);
        if (end == std::string_view::npos) {
            end = content.size();
        }
        auto line = content.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (trim(line).empty()) {
            flush_record();
            if (end == content.size()) {
                break;
            }
            continue;
        }
        if (line.front() == ' ' || line.front() == '\t') {
            if (slot != nullptr) {
                *slot += '\n';
                *slot += trim(line);
            }
            continue;
        }
        if (line.front() == '#') {
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            slot = nullptr;
            continue;
        }
        slot = field_slot(current, trim(line.substr(0, colon)));
        if (slot != nullptr) {
            *slot = std::string(trim(line.substr(colon + 1)));
        }
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

bool version_has_prefix(std::string_view version, std::string_view prefix) {
    // A profile says "550.", not "1:550.": an epoch is packaging history, not the version asked
    // for, so it is skipped unless the prefix names one itself.
    const bool prefix_has_epoch = prefix.find(':') != std::string_view::npos;
    return starts_with(prefix_has_epoch ? version : without_epoch(version), prefix);
}

std::string upstream_version(std::string_view version) {
    const auto v = without_epoch(version);
    return std::string(v.substr(0, v.find('-')));
}

const PackageRecord* PackageIndex::newest_with_prefix(std::string_view name,
                                                      std::string_view prefix) const {
    const auto it = m_by_name.find(name);
    if (it == m_by_name.end()) {
        return nullptr;
    }
    for (const auto i : it->second) {
        if (version_has_prefix(m_records[i].version, prefix)) {
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
