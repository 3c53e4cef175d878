#include "packages_step.hpp"

#include <fmt/format.h>

namespace gpuprov::steps {

namespace {

const PackageRecord* find_exact(const PackageIndex& index, const std::string& name,
                                const std::string& version) {
    for (const auto* rec : index.versions(name)) {
        if (rec->version == version) {
            return rec;
        }
    }
    return nullptr;
}

} // namespace

std::optional<std::vector<PackagePin>> pin_with_prefix(const PackageIndex& index,
                                                       const std::vector<std::string>& names,
                                                       const std::string& version, CheckResult& r,
                                                       std::string_view repo_label,
                                                       VersionMatch match) {
    std::vector<PackagePin> pins;
    for (const auto& name : names) {
        const auto* rec = match == VersionMatch::exact ? find_exact(index, name, version)
                                                       : index.newest_with_prefix(name, version);
        if (rec == nullptr) {
            r.status = StepStatus::blocked;
            const auto* any = index.newest(name);
            std::string wanted = name;
            if (!version.empty()) {
                wanted += match == VersionMatch::exact ? " version " + version
                                                       : " version " + version + "*";
            }
            r.reason = fmt::format("the {} repository has no {}{}", repo_label, wanted,
                                   any ? fmt::format(" (newest there: {})", any->version) : "");
            return std::nullopt;
        }
        pins.push_back({name, rec->version});
    }
    return pins;
}

void require_file(const System& sys, const ManagedFile& f, CheckResult& r) {
    if (file_matches(sys, f)) {
        return;
    }
    r.changes.push_back(file_change(sys, f));
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
}

void require_unit(const System& sys, std::string_view unit, CheckResult& r,
                  std::string_view target) {
    if (unit_enabled(sys, unit, target)) {
        return;
    }
    r.changes.push_back(Change{
        .kind = Change::Kind::service, .target = std::string(unit), .detail = "enable and start"});
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
}

} // namespace gpuprov::steps
