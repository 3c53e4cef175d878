#pragma once
// The host's package manager: apt on Debian/Ubuntu, dnf on the rhel family.
// It builds argv vectors, so plan can show exactly what apply would run.
#include <functional>
#include <gpuprov/facts.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/step.hpp>
#include <gpuprov/system.hpp>
#include <gpuprov/transaction.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {

/// A repository offered to the simulation from gpuprov's verified cache, so that plan resolves
/// a fresh host (whose apt lists do not hold NVIDIA's repositories yet) exactly as apt will.
struct SimulatedRepo {
    std::string url;             ///< as the .sources file will name it
    std::string replaces_source; ///< the system source file it stands for, left out of the view
    std::string source_text;     ///< the deb822 stanza to use instead
    std::string inrelease_file;  ///< verified copies in gpuprov's cache
    std::string packages_file;
    /// Where apt fetches them from (its lists name each copy after this URL): URL/InRelease,
    /// or URL/dists/SUITE/InRelease and .../COMPONENT/binary-ARCH/Packages (repo.hpp).
    std::string inrelease_url;
    std::string packages_url;
};

struct SimulationRequest {
    std::vector<PackagePin> installs;
    std::vector<std::string> removals;
    std::vector<ModuleStream> modules; ///< dnf module streams enabled in the transaction
    /// Empty: simulate against the system's own sources and lists (apply, after the sources
    /// are in place). Otherwise a private directory for the view of `repos` (plan).
    std::string scratch_dir;
    std::vector<SimulatedRepo> repos;
    /// apt preferences.d files for this simulation only (name -> content), in place of the
    /// system's file of that name: the pin a package of an earlier transaction will install.
    /// Needs scratch_dir.
    std::map<std::string, std::string> preferences;
};

class PackageManager {
public:
    virtual ~PackageManager() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    /// One transaction installing exactly these versions (and enabling `modules` first; only
    /// dnf has module streams, apt refuses any).
    [[nodiscard]] virtual Command install(const std::vector<PackagePin>& pins,
                                          const std::vector<std::string>& removals = {},
                                          const std::vector<ModuleStream>& modules = {}) const = 0;
    /// Throws CommandError when install()'s command failed although it exited 0: `dnf shell`
    /// exits 0 whatever its commands did (a refused module switch, a package it cannot find).
    virtual void check_install(const Command& cmd, const CommandResult& result) const {
        (void)cmd;
        (void)result;
    }
    /// What the package manager itself would do for `req`, without changing anything (apt's
    /// simulation, unprivileged). `error` is set when it refuses.
    [[nodiscard]] virtual PackageTransaction simulate(System& sys,
                                                      const SimulationRequest& req) const = 0;
    /// Refreshes the index of one source file only (never the whole system's sources).
    [[nodiscard]] virtual Command refresh_source(const std::string& source_file) const = 0;
    [[nodiscard]] virtual Command hold(const std::vector<std::string>& packages) const = 0;
    [[nodiscard]] virtual Command unhold(const std::vector<std::string>& packages) const = 0;
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
    /// Names an installed package depends on (Depends, Pre-Depends; every alternative), with
    /// virtual names resolved to the installed packages that provide them.
    [[nodiscard]] virtual std::vector<std::string>
    installed_depends(const System& sys, std::string_view package) const = 0;
    /// Every installed package's name.
    [[nodiscard]] virtual std::vector<std::string> installed_names(const System& sys) const = 0;
    /// The version the package manager would move each package to on an upgrade (apt's
    /// candidate, pins and priorities applied): what `apt-get dist-upgrade` and
    /// unattended-upgrades would install. Empty value: no candidate. Empty map: this package
    /// manager has no such notion (dnf keeps branches with versionlock, read by held()).
    [[nodiscard]] virtual std::map<std::string, std::string>
    candidates(const System& sys, const std::vector<std::string>& packages) const {
        (void)sys;
        (void)packages;
        return {};
    }
    /// Whether an enabled repository carries `package` (a name, or dnf's name-version-
    /// release.arch), asked of the package manager itself: apt's candidate, dnf's repoquery.
    /// nullopt when it cannot tell (its query failed): the transaction's simulation answers.
    [[nodiscard]] virtual std::optional<bool> available(const System& sys,
                                                        const std::string& package) const {
        (void)sys;
        (void)package;
        return std::nullopt;
    }
    /// A reader for install()'s stdout that calls `report` with each progress update the
    /// package manager prints (percent 0-100, what it is doing); empty when it prints none.
    /// (By value: the overrides move `report` into the reader they return.)
    [[nodiscard]] virtual std::function<void(std::string_view)>
    progress_reader(std::function<void(double percent, std::string_view what)>
                        report) // NOLINT(performance-unnecessary-value-param)
        const {
        (void)report;
        return {};
    }
};

/// One progress update of apt's status channel (`-o APT::Status-Fd=1`, apt-pkg's
/// install-progress.cc): `pmstatus:PACKAGE:PERCENT:TEXT` while dpkg works, `dlstatus:N:PERCENT:
/// TEXT` while downloading. PACKAGE may carry `:arch`, TEXT may hold colons.
struct AptStatus {
    bool download = false;
    std::string package;
    double percent = 0;
    std::string text;
};
/// nullopt for any other line (apt's normal output shares the stream).
[[nodiscard]] std::optional<AptStatus> parse_apt_status_line(std::string_view line);

/// `apt-cache policy NAME...` (with LC_ALL=C) read into name -> candidate version ("" for
/// "(none)"); names apt does not know are absent.
[[nodiscard]] std::map<std::string, std::string> parse_apt_policy(std::string_view output);

/// The file-name prefix apt gives a repository's lists under /var/lib/apt/lists/ (apt-pkg's
/// URItoFileName): "https://127.0.0.1:8443/cuda/x86_64/" → "127.0.0.1:8443_cuda_x86%5f64_";
/// append "InRelease" or "Packages".
[[nodiscard]] std::string apt_list_name(std::string_view uri);

/// Whether dnf's versionlock list (/etc/dnf/plugins/versionlock.list) locks this installed rpm.
[[nodiscard]] bool versionlocked(std::string_view list, const InstalledPackage& p);
/// The capability dnf finds its versionlock command by (`dnf install 'dnf-command(versionlock)'`,
/// NVIDIA's rhel10/install.sh); python3-dnf-plugin-versionlock provides it.
inline constexpr std::string_view kVersionlockCommand = "dnf-command(versionlock)";
/// Whether an installed rpm provides dnf's versionlock command: without it the versionlock list
/// is read by nobody, so nothing in it is locked.
[[nodiscard]] bool versionlock_available(const PackageDb& db);
/// Names installed twice with one arch (not kernels): what a killed rpm transaction leaves.
[[nodiscard]] std::vector<std::string> duplicate_packages(const PackageDb& db);
/// dnf, whatever the host (tests and the rhel family).
[[nodiscard]] std::unique_ptr<PackageManager> make_dnf();
/// apt, whatever the host (tests and the debian family).
[[nodiscard]] std::unique_ptr<PackageManager> make_apt();

/// apt for the debian family, dnf for the rhel family; nullptr for anything else.
[[nodiscard]] std::unique_ptr<PackageManager> make_package_manager(const HostFacts& facts);

/// Waits (bounded) while another process holds the package manager's lock, logging who holds
/// it; returns false when the deadline passed with the lock still held, or when a stop was
/// requested (gpuprov/interrupt.hpp) while waiting.
bool wait_for_package_lock(const System& sys, const PackageManager& pm,
                           std::chrono::seconds deadline);

} // namespace gpuprov
