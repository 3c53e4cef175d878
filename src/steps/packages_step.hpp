#pragma once
// The shape most steps share: a set of packages pinned from a repository index, plus files and
// units to put in place after they are installed.
#include "common.hpp"

namespace gpuprov::steps {

/// Pins `names` to a version from the index; blocks `r` and returns nullopt when one is
/// missing.
[[nodiscard]] std::optional<std::vector<PackagePin>>
pin_with_prefix(const PackageIndex& index, const std::vector<std::string>& names,
                const std::string& version, CheckResult& r, std::string_view repo_label,
                VersionMatch match = VersionMatch::prefix);

/// Marks `r` pending with the file's diff when it differs.
void require_file(const System& sys, const ManagedFile& f, CheckResult& r);
/// Marks `r` pending when `unit` is not enabled for `target`.
void require_unit(const System& sys, std::string_view unit, CheckResult& r,
                  std::string_view target = "multi-user.target");

} // namespace gpuprov::steps
