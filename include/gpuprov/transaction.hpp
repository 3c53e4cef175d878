#pragma once
// A package transaction as the package manager itself resolves it (apt-get's simulation, dnf's
// test transaction): what the plan shows and what apply carries out, nothing guessed.
#include <functional>
#include <gpuprov/step.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct PackageAction {
    enum class Kind { install, upgrade, downgrade, reinstall, remove };
    Kind kind = Kind::install;
    std::string name;
    std::string from;  ///< installed version (upgrade, downgrade, reinstall, remove)
    std::string to;    ///< version apt installs (install, upgrade, downgrade, reinstall)
    bool owned = true; ///< remove: the profile (or an earlier gpuprov run) owns this package
    bool hold = false; ///< held after the install (the driver's closure with driver.hold)
    friend bool operator==(const PackageAction& a, const PackageAction& b) {
        // `owned` and `hold` are gpuprov's annotations, not part of what apt does.
        return a.kind == b.kind && a.name == b.name && a.from == b.from && a.to == b.to;
    }
};
[[nodiscard]] std::string_view to_string(PackageAction::Kind kind);

struct PackageTransaction {
    std::vector<PackagePin> requested; ///< what gpuprov asked for (the steps' pins)
    std::vector<std::string> removals; ///< packages gpuprov asked to remove (a branch change)
    std::vector<ModuleStream> modules; ///< module streams gpuprov asked to enable (dnf)
    /// What the package manager does to module streams, as it says it: "enable nvidia-driver
    /// 580-open", "switch nvidia-driver 570-open -> 580-open".
    std::vector<std::string> module_changes;
    std::vector<PackageAction> actions; ///< what the package manager would do, in its order
    std::string simulated_with;         ///< the simulation's argv, for the change review
    /// Which resolver answered, in words for the plan ("dnf itself, as root"; "dnf 4.14.0's own
    /// solver through its Python API, as uid 1000 on a private cache"). Empty: the package
    /// manager itself (apt-get's simulation).
    std::string resolved_by;
    /// The same as an identifier for scripts: "apt-get", "dnf" (the CLI, root) or
    /// "dnf-python-api" (unprivileged).
    std::string resolver;
    std::string error; ///< the package manager refused (unmet dependencies...)
    [[nodiscard]] std::vector<const PackageAction*> unowned_removals() const;
    /// The argv suffix that carries out exactly `actions`: every install at its version, every
    /// removal by name, so apt has nothing left to choose.
    [[nodiscard]] std::vector<PackagePin> exact_installs() const;
    [[nodiscard]] std::vector<std::string> exact_removals() const;
    /// Held packages (the `hold` annotation) with the versions they are held at.
    [[nodiscard]] std::vector<PackagePin> holds() const;
};

/// Parses `apt-get install -s` output: `Inst name [old] (new release [arch])`,
/// `Remv name [old]`, `Purg name [old]`; everything else (Conf lines, messages) is ignored.
[[nodiscard]] std::vector<PackageAction> parse_apt_simulation(std::string_view output);

/// Parses dnf's transaction table (`dnf --assumeno install ...`): every package group dnf
/// prints, long names wrapped onto their own line. `from` of upgrades and downgrades is not in
/// dnf's table: the caller fills it from the rpm database.
[[nodiscard]] std::vector<PackageAction> parse_dnf_transaction(std::string_view output);

/// What gpuprov's unprivileged dnf resolver (src/pkg/dnf/gpuprov_dnf_resolve.py, dnf's Python
/// API) printed: tab-separated records, "resolver", "warning", "module", "package", "error" and
/// a final "done N".
struct DnfApiOutput {
    std::string dnf_version;                 ///< "4.14.0"
    std::vector<std::string> module_changes; ///< as parse_dnf_module_changes spells them
    std::vector<PackageAction> actions;      ///< in the order dnf's table lists them
    std::vector<std::string> warnings;
    std::string error; ///< dnf refused (its message)
    bool done = false; ///< the closing record came, with as many package records as it counts
};
[[nodiscard]] DnfApiOutput parse_dnf_api_output(std::string_view output);

/// The module stream rows of dnf's table ("Enabling module streams:", "Switching module
/// streams:", "Resetting modules:"), one line each: "enable nvidia-driver 580-dkms".
[[nodiscard]] std::vector<std::string> parse_dnf_module_changes(std::string_view output);

/// What differs between two transactions, one line per action ("+ install x 1.0",
/// "- remove y 2.0"); empty when apt would do the same.
[[nodiscard]] std::vector<std::string> transaction_diff(const std::vector<PackageAction>& planned,
                                                        const std::vector<PackageAction>& now);

/// Package names in a Depends/Provides field: "a (>= 1), b | c:any" → a, b, c.
[[nodiscard]] std::vector<std::string> dependency_names(std::string_view field);

/// Names reachable from `roots` through `depends_of`, following and keeping only names `keep`
/// accepts (roots are kept as given). Sorted, unique.
[[nodiscard]] std::vector<std::string>
dependency_closure(const std::vector<std::string>& roots,
                   const std::function<std::vector<std::string>(const std::string&)>& depends_of,
                   const std::function<bool(std::string_view)>& keep);

/// Whether a package belongs to the NVIDIA driver's own packaging (what a driver hold must
/// cover so apt cannot move the userspace under a loaded module): cuda-drivers*, nvidia-*,
/// libnvidia-*, xserver-xorg-video-nvidia-*, and the Debian-style libcuda1/libnvcuvid1/... The
/// container toolkit's libnvidia-container* is not part of the driver.
[[nodiscard]] bool is_driver_package(std::string_view name);

/// The driver branch a package version belongs to: "595" from "595.91.07-1ubuntu1",
/// "3:580.95.05-1.el9" or a branch pinning package's "610-2ubuntu1"; empty when the version is
/// not a driver's (a container toolkit's 1.17.3, nvlsm's 2025.10.12, nvidia-fs 2.26).
[[nodiscard]] std::string driver_branch_of(std::string_view version);

/// Packages an earlier gpuprov run installed (the journal's per-step versions): removing them
/// is part of a planned change, not a surprise.
[[nodiscard]] std::set<std::string> gpuprov_installed_packages(const System& sys);

/// One line for an action: "install   nvidia-driver-550  550.90.07-1".
[[nodiscard]] std::string describe(const PackageAction& action);

} // namespace gpuprov
