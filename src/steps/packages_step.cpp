#include "packages_step.hpp"

#include <fmt/format.h>

namespace gpuprov::steps {

std::optional<std::vector<PackagePin>> pin_with_prefix(const PackageIndex& index,
                                                       const std::vector<std::string>& names,
                                                       const std::string& prefix, CheckResult& r,
                                                       std::string_view repo_label) {
    std::vector<PackagePin> pins;
    for (const auto& name : names) {
        const auto* rec = index.newest_with_prefix(name, prefix);
        if (rec == nullptr) {
            r.status = StepStatus::blocked;
            const auto* any = index.newest(name);
            r.reason = fmt::format("the {} repository has no {} {}{}", repo_label, name,
                                   prefix.empty() ? "" : "version " + prefix + "*",
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
