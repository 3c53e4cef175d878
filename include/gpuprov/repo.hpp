#pragma once
// NVIDIA package repositories: signing keys (OpenPGP, fingerprint-checked) and package indexes
// (InRelease verified with gpgv, Packages checked against its SHA256), so plan knows the exact
// versions apply will install.
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprov {

/// An OpenPGP public key block as it arrives from key_url.
struct OpenPgpKey {
    std::string fingerprint;      ///< primary key v4 fingerprint, 40 upper-case hex digits
    std::vector<std::string> user_ids;
    std::string binary;           ///< the dearmored packets, as apt's Signed-By file wants them
};

struct KeyParseResult {
    std::optional<OpenPgpKey> key;
    std::string error;            ///< why it was refused (not OpenPGP, bad CRC, several keys...)
};

/// Accepts ASCII-armored or binary keys. Exactly one primary key is allowed, so a key file can
/// never smuggle a second trusted key into the keyring.
[[nodiscard]] KeyParseResult parse_openpgp_key(std::string_view data);

/// A profile repository with {distro} {arch} {pkgarch} filled in from the facts.
struct ResolvedRepo {
    std::string name;
    std::string url;              ///< ends with '/'
    std::string key_url;
    std::string key_fingerprint;
    bool allow_insecure = false;
};

[[nodiscard]] ResolvedRepo resolve_repo(const RepositorySpec& spec, const std::string& distro,
                                        const std::string& arch, const std::string& pkgarch);

struct PackageRecord {
    std::string name;
    std::string version;
    std::string architecture;
    std::string depends;
    std::string provides;
    std::string filename;
    std::string sha256;
};

/// One repository's Packages index.
class PackageIndex {
public:
    PackageIndex() = default;
    explicit PackageIndex(std::vector<PackageRecord> records);
    /// All versions of `name`, newest first.
    [[nodiscard]] std::vector<const PackageRecord*> versions(std::string_view name) const;
    [[nodiscard]] const PackageRecord* newest(std::string_view name) const;
    /// Newest version of `name` whose version starts with `prefix` (e.g. "550." or
    /// "8.9.7.29-1+cuda12.2").
    [[nodiscard]] const PackageRecord* newest_with_prefix(std::string_view name,
                                                          std::string_view prefix) const;
    [[nodiscard]] bool has(std::string_view name) const { return newest(name) != nullptr; }
    [[nodiscard]] std::size_t size() const { return m_records.size(); }
    /// Names starting with `prefix` (e.g. "cuda-toolkit-"), sorted, unique.
    [[nodiscard]] std::vector<std::string> names_with_prefix(std::string_view prefix) const;

private:
    std::vector<PackageRecord> m_records;
};

/// Parses a Debian Packages file (deb822 paragraphs).
[[nodiscard]] std::vector<PackageRecord> parse_packages_file(std::string_view content);
/// From a (clear-signed) InRelease, the SHA256 and size for a file listed in it ("Packages").
struct ReleaseEntry {
    std::string sha256;
    std::uint64_t size = 0;
};
[[nodiscard]] std::optional<ReleaseEntry> release_entry(std::string_view inrelease,
                                                        std::string_view file);

struct IndexLoadResult {
    std::optional<PackageIndex> index;
    std::optional<OpenPgpKey> key;   ///< the fetched, fingerprint-checked key
    std::string error;               ///< URL and HTTP status / verification failure
    bool from_cache = false;
    /// Files downloaded this time (cache path → content). Plan never writes, so the caller saves
    /// them (apply does) through a mutable System.
    std::map<std::string, std::string> to_cache;
};

/// Fetches the key (checks its fingerprint), InRelease (verified with gpgv against that key
/// alone) and Packages (checked against InRelease's SHA256), never touching apt's lists. A copy
/// under `cache_dir` younger than `max_age` is used without network.
[[nodiscard]] IndexLoadResult load_package_index(const System& sys, const ResolvedRepo& repo,
                                                 const std::string& cache_dir,
                                                 std::chrono::seconds max_age);

} // namespace gpuprov
