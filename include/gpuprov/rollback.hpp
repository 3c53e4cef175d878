#pragma once
// `gpuprov rollback`: which verified closure to go back to, and how the reinstall is kept to
// exactly its versions (docs/rollback.md).
#include <gpuprov/engine.hpp>
#include <gpuprov/journal.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// The steps whose packages make up a verified closure: the driver, fabric manager, the
/// toolkit and the libraries. Repositories, container tooling and monitoring are not rolled
/// back (their packages are not tied to the driver's branch).
[[nodiscard]] const std::vector<std::string>& closure_steps();

/// Adds `closure` as the newest verified one, unless it holds the same packages as the newest
/// already there (a converged re-run is not a change); keeps kVerifiedHistory.
void record_verified_closure(Journal& journal, VerifiedClosure closure);

struct RollbackTarget {
    /// The closure to reinstall; nullopt with `refusal` when there is none.
    std::optional<VerifiedClosure> closure;
    std::string refusal;
    /// The closure is installed and verified already (the newest verified entry): nothing to do.
    bool already_current = false;
    /// The closure the change being undone introduced (what the host is rolled back from).
    std::optional<VerifiedClosure> from;
};

/// The rollback target: the closure verified before the newest change an *apply* made (an
/// entry whose packages differ from the entry below it); a rollback's own entries are never
/// undone. `profile_name` non-empty: only closures verified with a profile of that name count.
/// `installed` holds the installed version of each package of the candidate closures (absent:
/// not installed). already_current when the target is installed at its versions and is the
/// newest verified entry.
[[nodiscard]] RollbackTarget
rollback_target(const Journal& journal, const std::string& profile_name,
                const std::map<std::string, std::optional<std::string>>& installed);

/// Every package name of the closures rollback_target() may look at (to ask the package
/// manager for their installed versions first).
[[nodiscard]] std::vector<std::string> rollback_candidate_packages(const Journal& journal);

/// "name installed -> target" for each package of `target` whose installed version differs.
[[nodiscard]] std::vector<std::string>
closure_differences(const std::map<std::string, std::string>& target,
                    const std::map<std::string, std::optional<std::string>>& installed);

/// Whether `version` (an index's or the package manager's) is the closure's `pinned` one; rpm's
/// database spells a zero epoch ("0:1.2-1") that the index leaves out.
[[nodiscard]] bool closure_version_matches(std::string_view pinned, std::string_view version);

/// The plan's transactions must install each pinned package, if at all, at its pinned version:
/// a dependency the steps did not name that apt or dnf would take at another build blocks the
/// transaction (blocked set), naming package, pinned and resolved versions. Returns the lines.
std::vector<std::string> block_unpinned_versions(Plan& plan,
                                                 const std::map<std::string, std::string>& pins);

} // namespace gpuprov
