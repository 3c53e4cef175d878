#pragma once
// The host's installed-package database, read one way for everybody: facts, steps (installed
// versions, holds, dependency closures) and doctor. One reader per database format:
//   - dpkg: /var/lib/dpkg/status, read as a file (no process starts);
//   - rpm:  `rpm -qa --qf <kRpmQueryFormat>` (the rpm database is SQLite on EL9 and Berkeley DB
//     on EL8; rpm itself is the only stable reader of both).
// "Installed" has one meaning: the package's files are on disk and configured (dpkg state
// "installed" with the "ok" error flag, any selection; every rpm in the database).
#include <gpuprov/system.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct InstalledPackage {
    std::string name;
    std::string arch;    ///< amd64 / all (dpkg); x86_64 / noarch (rpm)
    std::string version; ///< dpkg "1:2.3-4"; rpm "[epoch:]version-release" ("3:580.1-1.el9")
    bool installed = false;
    /// dpkg selection "hold" (apt-mark hold). On rpm, holds live in dnf's versionlock list,
    /// which PackageManager::held() reads; always false here.
    bool hold = false;
    std::string status;                ///< dpkg's Status field / "installed" for rpm
    std::vector<std::string> depends;  ///< names only: dpkg Depends+Pre-Depends (every
                                       ///< alternative); rpm REQUIRENAME
    std::vector<std::string> provides; ///< names only (virtual names, rpm capabilities)
};

class PackageDb {
public:
    PackageDb() = default;
    explicit PackageDb(std::vector<InstalledPackage> records);
    /// The installed record of `name` (the first architecture listed when several are), else
    /// any record of it (dpkg keeps removed packages' config-files entries), else nullptr.
    [[nodiscard]] const InstalledPackage* find(std::string_view name) const;
    /// Installed version of `name`, or nullopt.
    [[nodiscard]] std::optional<std::string> installed_version(std::string_view name) const;
    [[nodiscard]] const std::vector<InstalledPackage>& records() const { return m_records; }
    /// Installed packages that provide `capability` (by Provides, not by name).
    [[nodiscard]] std::vector<std::string> providers(std::string_view capability) const;
    [[nodiscard]] bool empty() const { return m_records.empty(); }

private:
    std::vector<InstalledPackage> m_records;
    std::map<std::string, std::vector<std::size_t>, std::less<>> m_by_name;
};

/// Installed packages an installed `package` depends on: each dependency by its own name when
/// that is installed, else every installed package that provides it (virtual names, sonames,
/// rpm capabilities). Empty when `package` is not installed.
[[nodiscard]] std::vector<std::string> installed_requires(const PackageDb& db,
                                                          std::string_view package);

/// Parses /var/lib/dpkg/status (deb822 stanzas; continuation lines, CRLF, any field order).
[[nodiscard]] PackageDb parse_dpkg_db(std::string_view status);

/// The query format gpuprov gives `rpm -qa --qf`: a header line per package, then one line per
/// provided and required name. Names, versions, releases and arches cannot hold whitespace in
/// rpm; capabilities can hold anything but a newline, so each sits alone on its line.
inline constexpr std::string_view kRpmQueryFormat =
    "@@\\t%{NAME}\\t%{EPOCH}\\t%{VERSION}\\t%{RELEASE}\\t%{ARCH}\\n"
    "[P\\t%{PROVIDENAME}\\n][R\\t%{REQUIRENAME}\\n]";
/// The query itself (read-only; `rpm -qa` takes no write lock).
[[nodiscard]] Command rpm_query_command();
/// Parses the output of rpm_query_command(). gpg-pubkey entries (imported keys, not packages)
/// are skipped; lines of any other shape are ignored.
[[nodiscard]] PackageDb parse_rpm_query(std::string_view out);

/// The files whose change means the rpm database changed: rpmdb.sqlite (EL9), Packages (EL8
/// Berkeley DB).
[[nodiscard]] std::vector<std::string> rpm_db_files();

/// dpkg's database, parsed once per version of the status file (dpkg renames a new file into
/// place on every change, so its stamp changes). Empty when the file is missing.
[[nodiscard]] const PackageDb& dpkg_database(const System& sys);
/// rpm's database via rpm_query_command(), run again only when one of rpm_db_files() changed.
/// Empty (and no command run) when no rpm database exists.
[[nodiscard]] const PackageDb& rpm_database(const System& sys);
/// The database of a package family: "debian" → dpkg, "rhel" → rpm, anything else empty.
[[nodiscard]] const PackageDb& package_database(const System& sys, std::string_view family);

/// Splits an rpm "[epoch:]version-release" into its parts; epoch "0" when absent.
struct Evr {
    std::string epoch = "0";
    std::string version;
    std::string release;
};
[[nodiscard]] Evr split_evr(std::string_view evr);

} // namespace gpuprov
