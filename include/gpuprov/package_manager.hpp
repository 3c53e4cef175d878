#pragma once
// The host's package manager (apt on Debian/Ubuntu; dnf on RHEL-family hosts is planned only).
// It builds argv vectors, so plan can show exactly what apply would run.
#include <gpuprov/facts.hpp>
#include <gpuprov/step.hpp>
#include <gpuprov/system.hpp>
#include <memory>
#include <string>
#include <vector>

namespace gpuprov {

class PackageManager {
public:
    virtual ~PackageManager() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    /// One transaction installing exactly these versions.
    [[nodiscard]] virtual Command install(const std::vector<PackagePin>& pins) const = 0;
    /// Refreshes the index of one source file only (never the whole system's sources).
    [[nodiscard]] virtual Command refresh_source(const std::string& source_file) const = 0;
    [[nodiscard]] virtual Command hold(const std::vector<std::string>& packages) const = 0;
    /// Finishes an interrupted transaction (`dpkg --configure -a`).
    [[nodiscard]] virtual Command repair() const = 0;
    /// Whether a previous transaction was interrupted (dpkg left journal entries behind).
    [[nodiscard]] virtual bool interrupted(const System& sys) const = 0;
    /// The files whose fcntl locks mean another package manager is running.
    [[nodiscard]] virtual std::vector<std::string> lock_files() const = 0;
    /// Installed version of a package, from the package database (no command run).
    [[nodiscard]] virtual std::optional<std::string> installed(const System& sys,
                                                               std::string_view package) const = 0;
    /// Whether a package is held (apt-mark hold / dpkg selection "hold").
    [[nodiscard]] virtual bool held(const System& sys, std::string_view package) const = 0;
};

/// apt for the debian family; nullptr for anything else.
[[nodiscard]] std::unique_ptr<PackageManager> make_package_manager(const HostFacts& facts);

/// Waits (bounded) while another process holds the package manager's lock, logging who holds
/// it; returns false when the deadline passed with the lock still held.
bool wait_for_package_lock(const System& sys, const PackageManager& pm,
                           std::chrono::seconds deadline);

} // namespace gpuprov
