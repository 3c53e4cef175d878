#pragma once
// NVIDIA package repositories: signing keys (OpenPGP, fingerprint-checked) and package indexes
// (InRelease verified with gpgv, Packages checked against its SHA256), so plan knows the exact
// versions apply will install.
#include <chrono>
#include <cstdint>
#include <functional>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct HostFacts;
class Matrix;

/// An OpenPGP public key block as it arrives from key_url.
struct OpenPgpKey {
    std::string fingerprint; ///< primary key v4 fingerprint, 40 upper-case hex digits
    std::vector<std::string> user_ids;
    std::string binary; ///< the dearmored packets, as apt's Signed-By file wants them
};

struct KeyParseResult {
    std::optional<OpenPgpKey> key;
    std::string error; ///< why it was refused (not OpenPGP, bad CRC, several keys...)
};

/// Accepts ASCII-armored or binary keys. Exactly one primary key is allowed, so a key file can
/// never smuggle a second trusted key into the keyring.
[[nodiscard]] KeyParseResult parse_openpgp_key(std::string_view data);

/// The ASCII-armored form of a (binary) public key, as dnf's gpgkey=file:// reads it.
[[nodiscard]] std::string armor_public_key(std::string_view binary);

/// A profile repository with {distro} {arch} {pkgarch} filled in from the facts.
struct ResolvedRepo {
    std::string name;
    std::string url; ///< ends with '/'
    std::string key_url;
    std::string key_fingerprint;
    /// Where key_url and key_fingerprint come from: "pinned by the profile", or NVIDIA's key for
    /// the host's distro ("NVIDIA's D42D0685.pub (rhel9), from gpuprov's version matrix").
    std::string key_source;
    /// key_url and key_fingerprint are the matrix's (NVIDIA's or Docker's), not the profile's pin
    bool matrix_key = false;
    bool allow_insecure = false;
    /// apt's Suites and Components: empty for a flat repository (NVIDIA's: `Suites: /`), the
    /// release codename and "stable" for Docker's dists repository.
    std::string suite;
    std::string component;
    std::string pkgarch; ///< the package architecture of the dists index ("amd64")
};

/// Where an apt repository's InRelease sits: the URL of a flat repository, URL/dists/SUITE/ of
/// a dists one (apt fetches {url}/dists/{suite}/InRelease).
[[nodiscard]] std::string release_dir_url(const ResolvedRepo& repo);
/// The Packages file's name in the InRelease and relative to release_dir_url: "Packages" for a
/// flat repository, "stable/binary-amd64/Packages" for a dists one.
[[nodiscard]] std::string packages_entry(const ResolvedRepo& repo);

/// Fills the URL templates: {distro} (repo slug), {arch} (x86_64, sbsa), {pkgarch} (amd64 on
/// Debian, x86_64 on rpm), {pkgformat} ("deb" or "rpm": NVIDIA's container toolkit repository
/// is stable/deb/$(ARCH) for apt and stable/rpm/$basearch for dnf).
[[nodiscard]] ResolvedRepo resolve_repo(const RepositorySpec& spec, const std::string& distro,
                                        const std::string& arch, const std::string& pkgarch,
                                        const std::string& pkgformat);
/// The repository as this host uses it: resolve_repo with the host's distro and arches, and its
/// signing key. A profile that pins key_url and key_fingerprint gets exactly its pin; one that
/// pins neither (only allowed on NVIDIA's CUDA URL) gets the key NVIDIA documents for the host's
/// distro from the version matrix: <url><key_file> with its fingerprint (D42D0685 on rhel8/9,
/// 3bf863cc on Ubuntu/Debian). The repository named "docker" is Docker's dists repository:
/// suite from the matrix's `docker` entry for the distro, component stable, and, unpinned on
/// Docker's own URL, the matrix's URL and key for the distro. The one place a repository's key
/// is decided. When the matrix
/// knows no key for the distro, key_fingerprint stays empty (every key is then refused) and
/// key_source says why.
[[nodiscard]] ResolvedRepo resolve_host_repo(const RepositorySpec& spec, const HostFacts& facts,
                                             const Matrix& matrix);
/// "rpm" for the rhel family, "deb" otherwise.
[[nodiscard]] std::string package_format(const std::string& family);

struct PackageRecord {
    std::string name;
    std::string version;
    std::string architecture;
    std::string depends;
    std::string provides;
    std::string filename;
    std::string sha256;
    std::string size; ///< the package file's size in bytes, as the index gives it
};

/// Where fetch_package_file put a package file, or why it could not.
struct PackageFileResult {
    std::string path;  ///< under the cache directory; empty on error
    std::string error; ///< the URL and what went wrong
};
/// Downloads a package file named by a verified index record into
/// `cache_dir/<repo_cache_subdir>/pool/` and checks it against the record's SHA-256 (and size):
/// trust comes from the signed index, as for apt. A copy already there that checks out is used
/// without network. Only flat repositories (NVIDIA's: Filename relative to the URL).
[[nodiscard]] PackageFileResult fetch_package_file(System& sys, const ResolvedRepo& repo,
                                                   const PackageRecord& record,
                                                   const std::string& cache_dir);

/// Whether a package version starts with `prefix`; the epoch is skipped unless the prefix names
/// one ("550." matches "3:550.90.07-1.el9": a profile asks for a version, an epoch is packaging
/// history).
[[nodiscard]] bool version_has_prefix(std::string_view version, std::string_view prefix);
/// The upstream part of a package version: "580.95.05" from "3:580.95.05-1.el9" or "580.95.05-1".
[[nodiscard]] std::string upstream_version(std::string_view version);

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
    /// Every record, in the index's order (for walks over Provides, which no lookup above
    /// answers).
    [[nodiscard]] const std::vector<PackageRecord>& records() const { return m_records; }
    /// Names starting with `prefix` (e.g. "cuda-toolkit-"), sorted, unique.
    [[nodiscard]] std::vector<std::string> names_with_prefix(std::string_view prefix) const;

private:
    std::vector<PackageRecord> m_records;
    /// Indexes into m_records per package name, newest version first.
    std::map<std::string, std::vector<std::size_t>, std::less<>> m_by_name;
};

/// Parses a Debian Packages file (deb822 paragraphs). Paragraphs without Package or Version are
/// skipped: they cannot be installed by name anyway.
[[nodiscard]] std::vector<PackageRecord> parse_packages_file(std::string_view content);

/// The signed text of a clear-signed message (InRelease), dash-escaping undone; nullopt unless the
/// whole input is exactly one clear-signed message, so nothing unsigned can ride along with it.
[[nodiscard]] std::optional<std::string> clearsigned_text(std::string_view message);

/// From a (clear-signed) InRelease, the SHA256 and size for a file listed in it ("Packages").
struct ReleaseEntry {
    std::string sha256; ///< lower-case hex
    std::uint64_t size = 0;
};
/// Reads the signed text when `release` is clear-signed, else `release` as a plain Release file.
/// Does not check the signature: load_package_index does that with gpgv.
[[nodiscard]] std::optional<ReleaseEntry> release_entry(std::string_view release,
                                                        std::string_view file);

/// How far a Release's Date may be ahead of this host's clock: apt's Acquire::Max-FutureTime
/// default (10 s, apt.conf(5)).
inline constexpr std::chrono::seconds kReleaseMaxFutureTime{10};

/// A Release date as apt writes and reads it ("Tue, 01 Dec 2026 00:00:00 UTC"; the zone UTC,
/// GMT, Z or +hhmm); nullopt when it is anything else.
[[nodiscard]] std::optional<std::chrono::system_clock::time_point>
parse_release_date(std::string_view text);

/// The `Date:` of a Release, or of the signed text of a clear-signed InRelease (not verified:
/// for comparing two copies' ages); nullopt when absent or unreadable.
[[nodiscard]] std::optional<std::chrono::system_clock::time_point>
release_date(std::string_view release);

/// Why apt would refuse this (signed) Release text at `now`, as apt words it: "is expired"
/// (Valid-Until in the past) or "is not valid yet" (Date more than kReleaseMaxFutureTime
/// ahead), or an unreadable date; empty when neither applies (both fields are optional).
[[nodiscard]] std::string release_date_problem(std::string_view release,
                                               std::chrono::system_clock::time_point now);

/// One metadata file named by an rpm repository's repodata/repomd.xml.
struct RepomdEntry {
    std::string location; ///< relative to the repository URL: "repodata/<sha>-primary.xml.gz"
    std::string sha256;   ///< of the file as stored (compressed), lower-case hex
    std::uint64_t size = 0;
};
/// The <data type="..."> entry ("primary"); nullopt when missing, not SHA-256, or its location
/// leaves the repository (absolute, "..").
[[nodiscard]] std::optional<RepomdEntry> repomd_entry(std::string_view repomd,
                                                      std::string_view type);
/// The <revision> of a repomd.xml (createrepo_c writes the generation time, in seconds);
/// nullopt when it has none.
[[nodiscard]] std::optional<std::uint64_t> repomd_revision(std::string_view repomd);
/// The directory dnf 4 (libdnf) keeps a repository's metadata in under its cachedir:
/// "<repo id>-<first 16 hex digits of SHA-256(baseurl)>" (gpuprov-cuda-d4b14c84397bcb90).
[[nodiscard]] std::string dnf_cache_dir_name(std::string_view repo_id, std::string_view baseurl);
/// Packages of a primary.xml: name, arch, version as rpm's "[epoch:]version-release" (no epoch
/// when 0), requires and provides names joined like a Debian field, location and SHA-256.
/// Source rpms and packages cut short are skipped.
[[nodiscard]] std::vector<PackageRecord> parse_primary_xml(std::string_view xml);
/// Decompresses a gzip file (primary.xml.gz); nullopt when corrupt, truncated or larger than
/// max_bytes.
[[nodiscard]] std::optional<std::string> gunzip(std::string_view data,
                                                std::size_t max_bytes = 512u << 20);

struct IndexLoadResult {
    std::optional<PackageIndex> index;
    std::optional<OpenPgpKey> key; ///< the fingerprint-checked key the InRelease was verified with
    std::string error;             ///< URL and HTTP status / verification failure
    bool from_cache = false;
    std::string inrelease; ///< the InRelease exactly as verified (for comparing apt's lists)
};

/// gpuprov's private cache: /var/cache/gpuprov/repos for root, else
/// $XDG_CACHE_HOME/gpuprov/repos or $HOME/.cache/gpuprov/repos. Never apt's lists.
[[nodiscard]] std::string default_repo_cache_dir(const System& sys);

/// The directory under `cache_dir` that holds one repository's files (key.gpg, InRelease,
/// Packages, stamp): the repository name with anything but [A-Za-z0-9._-] replaced.
[[nodiscard]] std::string repo_cache_subdir(const ResolvedRepo& repo);

/// The rpm-md form of load_package_index for the rhel family: the pinned key, repomd.xml
/// verified with gpgv against its detached repomd.xml.asc, primary.xml.gz checked against the
/// SHA-256 and size repomd.xml lists. `inrelease` of the result holds the verified repomd.xml.
/// The verified copy (key.gpg, repomd.xml and its signature, the primary as fetched, stamp
/// written last) is reused while younger than `max_age` and still checking out, as on apt.
[[nodiscard]] IndexLoadResult load_rpm_package_index(System& sys, const ResolvedRepo& repo,
                                                     const std::string& cache_dir,
                                                     std::chrono::seconds max_age);

/// The InRelease (on rpm-md: the repomd.xml) gpuprov last verified for `repo`, read from
/// `cache_dir` whatever its age, with
/// no download and no signature check; nullopt unless the cache's stamp names this URL and pin.
/// For comparisons only (are apt's lists as new as what gpuprov planned with?), never trust.
[[nodiscard]] std::optional<std::string>
cached_inrelease(const System& sys, const ResolvedRepo& repo, const std::string& cache_dir);

/// Fetches the key (checks its fingerprint), InRelease (verified with gpgv against that key
/// alone) and Packages (checked against InRelease's SHA256 and size), never touching apt's
/// lists. A copy under `cache_dir` younger than `max_age`, fetched from the same URL for the same
/// pinned fingerprint, is used without network, but its key, signature and checksum are checked
/// again. Writes only under `cache_dir` (gpgv reads its keyring from a file there), so plan may
/// call it unprivileged; that is why `sys` is not const.
[[nodiscard]] IndexLoadResult load_package_index(System& sys, const ResolvedRepo& repo,
                                                 const std::string& cache_dir,
                                                 std::chrono::seconds max_age);

} // namespace gpuprov
