#pragma once
// The shape most steps share: a set of packages pinned from a repository index, plus files and
// units to put in place after they are installed.
#include "common.hpp"

namespace gpuprov::steps {

/// Pins `names` to the newest index version starting with `prefix`; blocks `r` and returns
/// nullopt when one is missing.
[[nodiscard]] std::optional<std::vector<PackagePin>>
pin_with_prefix(const PackageIndex& index, const std::vector<std::string>& names,
                const std::string& prefix, CheckResult& r, std::string_view repo_label);

/// Marks `r` pending with the file's diff when it differs.
void require_file(const System& sys, const ManagedFile& f, CheckResult& r);
/// Marks `r` pending when `unit` is not enabled for `target`.
void require_unit(const System& sys, std::string_view unit, CheckResult& r,
                  std::string_view target = "multi-user.target");

} // namespace gpuprov::steps
