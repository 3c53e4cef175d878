// Fetching and checking one repository's index. Trust flows from the pinned fingerprint only:
// key (fingerprint) → InRelease (gpgv against that key alone) → Packages (SHA256 and size from
// the signed InRelease). The cache is a convenience, never a trust anchor: everything read from
// it is checked again the same way.
#include "internal.hpp"
#include "parsed_index.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/clearsigned.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/key_policy.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <map>
#include <optional>

namespace gpuprov {

namespace {

namespace fs = std::filesystem;
using repo_detail::sha256_hex;

struct CachePaths {
    fs::path dir;
    fs::path key;
    fs::path inrelease;
    fs::path packages;
    fs::path stamp;
};

CachePaths cache_paths(const std::string& cache_dir, const ResolvedRepo& repo) {
    const auto dir = fs::path(cache_dir) / repo_cache_subdir(repo);
    return {dir, dir / "key.gpg", dir / "InRelease", dir / "Packages", dir / "stamp"};
}

/// A value or the reason there is none; every reason names the URL it is about.
template <typename T> struct Checked {
    std::optional<T> value;
    std::string error;
};

Checked<std::string> fetch_body(const System& sys, const std::string& url,
                                std::size_t max_bytes = FetchRequest{}.max_bytes) {
    FetchRequest req;
    req.url = url;
    req.max_bytes = max_bytes;
    auto r = repo_detail::fetch_url(sys, req);
    if (r.ok) {
        return {std::move(r.body), {}};
    }
    auto why = !r.error.empty()     ? r.error
               : r.http_status != 0 ? fmt::format("HTTP {}", r.http_status)
                                    : std::string("no answer");
    return {std::nullopt, fmt::format("cannot fetch {}: {} ({} attempt{})", url, why, r.attempts,
                                      r.attempts == 1 ? "" : "s")};
}

Checked<OpenPgpKey> checked_key(const System& sys, std::string_view data, const ResolvedRepo& repo,
                                const std::string& where) {
    auto parsed = parse_openpgp_key(data);
    if (!parsed.key) {
        return {std::nullopt, fmt::format("key at {} refused: {}", where, parsed.error)};
    }
    if (parsed.key->fingerprint != repo.key_fingerprint) {
        return {std::nullopt,
                fmt::format("key at {} has fingerprint {}, {}", where, parsed.key->fingerprint,
                            repo.matrix_key ? fmt::format("expected {} ({})", repo.key_fingerprint,
                                                          repo.key_source)
                                            : "profile pins " + repo.key_fingerprint)};
    }
    // The host's apt must accept the key too, or the plan promises what apt-get update refuses
    // (apt 3's sqv rejects SHA-1 bindings from 2026-02-01; docs/security.md "Key policy").
    if (auto problem = key_policy_problem(*parsed.key, detect_key_policy(sys),
                                          policy_date(sys.now()), repo.name);
        !problem.empty()) {
        return {std::nullopt, fmt::format("{} (key from {})", problem, where)};
    }
    return {std::move(parsed.key), {}};
}

/// The key at `repo.key_url`, downloaded and checked against the pinned fingerprint.
Checked<OpenPgpKey> fetch_pinned_key(const System& sys, const ResolvedRepo& repo) {
    auto body = fetch_body(sys, repo.key_url);
    if (!body.value) {
        return {std::nullopt, body.error};
    }
    return checked_key(sys, *body.value, repo, repo.key_url);
}

/// gpgv's answer: `error` empty when the pinned key made a valid signature with a digest apt
/// trusts; `out` is gpgv's stdout (the signed bytes, when it was asked for them with --output -).
struct GpgvVerdict {
    std::string error;
    std::string out;
};

GpgvVerdict gpgv_verdict(const System& sys, std::vector<std::string> argv, const std::string& data,
                         const std::string& pinned, std::string_view what, const std::string& url,
                         bool status_on_stderr);

/// Runs gpgv on `inrelease` (fed on stdin, so an unverified file never lands in the cache) with
/// `keyring` as the only keyring, and reads its machine-readable status lines rather than its
/// exit code: a second signature from some unrelated key must neither break nor satisfy the check.
/// Returns the signed text exactly as gpgv extracted it (`--output -`), which is all that is
/// parsed afterwards, like apt does; the status lines then come on stderr.
Checked<std::string> verify_inrelease(const System& sys, const fs::path& keyring,
                                      const std::string& inrelease, const std::string& pinned,
                                      const std::string& url) {
    // apt refuses anything but exactly one clear-signed message; so does gpuprov, before gpgv
    // (which would verify the first message and pass trailing junk through).
    if (!clearsigned_text(inrelease)) {
        return {std::nullopt,
                fmt::format("InRelease at {} is not a single clear-signed message", url)};
    }
    auto verdict = gpgv_verdict(
        sys, {"gpgv", "--keyring", keyring.string(), "--status-fd", "2", "--output", "-", "-"},
        inrelease, pinned, "InRelease", url, true);
    if (!verdict.error.empty()) {
        return {std::nullopt, verdict.error};
    }
    if (verdict.out.empty()) {
        return {std::nullopt, fmt::format("gpgv verified InRelease at {} but gave back no signed "
                                          "text",
                                          url)};
    }
    if (const auto problem = release_date_problem(verdict.out, sys.now()); !problem.empty()) {
        return {std::nullopt, fmt::format("InRelease at {} {}", url, problem)};
    }
    return {std::move(verdict.out), {}};
}

/// The name apt gives an OpenPGP hash algorithm id (RFC 4880 9.4), and whether apt trusts
/// signatures made with it: MD5, SHA-1 and RIPEMD-160 are refused (apt's methods/gpgv.cc marks
/// them Untrusted), like any id apt does not know.
std::pair<std::string, bool> digest_name(std::string_view id) {
    static const std::map<std::string_view, std::pair<std::string, bool>> known = {
        {"1", {"MD5", false}},   {"2", {"SHA1", false}},  {"3", {"RIPEMD160", false}},
        {"8", {"SHA256", true}}, {"9", {"SHA384", true}}, {"10", {"SHA512", true}},
        {"11", {"SHA224", true}}};
    const auto it = known.find(id);
    return it == known.end()
               ? std::pair<std::string, bool>{"unknown digest " + std::string(id), false}
               : it->second;
}

/// gpgv's verdict from its status lines, with `keyring` the only keyring: empty when the pinned
/// key made a valid signature over `data` (fed on stdin), else why not.
GpgvVerdict gpgv_verdict(const System& sys, std::vector<std::string> argv, const std::string& data,
                         const std::string& pinned, std::string_view what, const std::string& url,
                         bool status_on_stderr) {
    Command cmd;
    cmd.argv = std::move(argv);
    cmd.timeout = std::chrono::seconds(60);
    cmd.stdin_data = data;
    auto r = sys.query(cmd);
    if (r.not_found) {
        return {fmt::format("cannot verify {}: gpgv is not installed (Debian and Ubuntu package "
                            "'gpgv', EL package 'gnupg2')",
                            url),
                {}};
    }
    if (r.timed_out) {
        return {fmt::format("cannot verify {}: gpgv timed out", url), {}};
    }
    bool valid = false;
    std::string bad;
    std::string other_signer;
    const auto& status = status_on_stderr ? r.err : r.out;
    for (const auto& line : lines(status)) {
        if (!starts_with(line, "[GNUPG:] ")) {
            continue;
        }
        std::vector<std::string> w;
        for (auto& word : split(line.substr(9), ' ')) {
            if (!word.empty()) {
                w.push_back(std::move(word));
            }
        }
        if (w.empty()) {
            continue;
        }
        if (w[0] == "VALIDSIG" && w.size() >= 2) {
            // The last field is the primary key's fingerprint, so a signing subkey of the
            // pinned key counts; older gpgv without it report the signing key itself.
            const auto primary = to_upper(w.size() >= 11 ? w.back() : w[1]);
            if (primary != pinned) {
                other_signer = primary;
                continue;
            }
            // VALIDSIG <fpr> <date> <time> <expire> <version> <reserved> <pk-algo> <hash-algo>:
            // apt reads the hash algorithm there and refuses weak ones, so does gpuprov.
            const auto [digest, trusted] = digest_name(w.size() >= 9 ? w[8] : "");
            if (trusted) {
                valid = true;
            } else {
                bad = fmt::format("a signature made with the weak digest {} (apt refuses MD5, "
                                  "SHA-1 and RIPEMD-160 signatures; the repository must be "
                                  "re-signed with SHA-256 or better)",
                                  digest);
            }
        } else if (w[0] == "BADSIG") {
            bad = "a BAD signature (the file was altered after signing)";
        } else if (w[0] == "EXPKEYSIG") {
            bad = "a signature by an expired key";
        } else if (w[0] == "REVKEYSIG") {
            bad = "a signature by a revoked key";
        } else if (w[0] == "EXPSIG") {
            bad = "an expired signature";
        } else if ((w[0] == "ERRSIG" || w[0] == "NO_PUBKEY") && w.size() >= 2 &&
                   other_signer.empty()) {
            other_signer = w[1];
        }
    }
    if (!bad.empty()) {
        return {fmt::format("{} at {} has {}", what, url, bad), {}};
    }
    if (!valid) {
        if (!other_signer.empty()) {
            return {fmt::format("{} at {} is not signed by the pinned key {} (signed by {})", what,
                                url, pinned, other_signer),
                    {}};
        }
        return {fmt::format("gpgv found no valid signature on {}: {}", url,
                            tail_lines(r.err.empty() ? r.out : r.err, 3)),
                {}};
    }
    return {{}, std::move(r.out)};
}

Checked<std::vector<PackageRecord>>
checked_packages(const std::string& signed_text, const std::string& body, const std::string& name,
                 const std::string& inrelease_url, const std::string& packages_url) {
    const auto entry = release_entry(signed_text, name);
    if (!entry) {
        return {std::nullopt, fmt::format("InRelease at {} lists no SHA256 for an uncompressed "
                                          "'{}' file",
                                          inrelease_url, name)};
    }
    if (body.size() != entry->size) {
        return {std::nullopt, fmt::format("Packages at {} is {} bytes, InRelease says {} (a "
                                          "truncated download or a mirror in mid-sync)",
                                          packages_url, body.size(), entry->size)};
    }
    const auto sha = sha256_hex(body);
    if (sha != entry->sha256) {
        return {std::nullopt, fmt::format("Packages at {} has SHA256 {}, InRelease says {} (a "
                                          "mirror in mid-sync or a tampered file)",
                                          packages_url, sha, entry->sha256)};
    }
    return {parse_packages_file(body), {}};
}

std::string stamp_text(std::chrono::system_clock::time_point when, const ResolvedRepo& repo) {
    const auto secs =
        std::chrono::duration_cast<std::chrono::seconds>(when.time_since_epoch()).count();
    // A dists repository's stamp also names its index, so another suite is another repository.
    const auto index = repo.suite.empty()
                           ? std::string()
                           : "index " + release_dir_url(repo) + packages_entry(repo) + "\n";
    return fmt::format("fetched {}\nurl {}\nkey_url {}\nkey_fingerprint {}\n{}", secs, repo.url,
                       repo.key_url, repo.key_fingerprint, index);
}

/// Whether the cache's stamp belongs to this URL and pin and is younger than `max_age`.
bool fresh_stamp(const System& sys, const ResolvedRepo& repo, const CachePaths& paths,
                 std::chrono::seconds max_age) {
    const auto stamp = sys.read_file(paths.stamp);
    if (!stamp) {
        return false;
    }
    const auto stamp_lines = lines(*stamp);
    if (stamp_lines.empty() || !starts_with(stamp_lines[0], "fetched ")) {
        return false;
    }
    const auto fetched = parse_int(std::string_view(stamp_lines[0]).substr(8));
    if (!fetched) {
        return false;
    }
    // The stamp records what was fetched: a changed mirror URL or re-pinned key is a different
    // repository as far as trust goes, whatever the directory is called.
    const auto when = std::chrono::system_clock::time_point(std::chrono::seconds(*fetched));
    if (*stamp != stamp_text(when, repo)) {
        return false;
    }
    const auto age = sys.now() - when;
    return age >= std::chrono::seconds(0) && age < max_age; // a future stamp: a clock jump
}

/// An index read back from gpuprov's cache; `signed_doc` is its InRelease or repomd.xml.
IndexLoadResult cached_result(PackageIndex index, OpenPgpKey key, std::string signed_doc) {
    IndexLoadResult out;
    out.index = std::move(index);
    out.key = std::move(key);
    out.from_cache = true;
    out.inrelease = std::move(signed_doc);
    return out;
}

/// The cached copy, when it is fresh, belongs to this URL and pin, and still checks out.
std::optional<IndexLoadResult> from_cache(System& sys, const ResolvedRepo& repo,
                                          const CachePaths& paths, std::chrono::seconds max_age) {
    const auto key = sys.read_file(paths.key);
    const auto inrelease = sys.read_file(paths.inrelease);
    if (!key || !inrelease || !fresh_stamp(sys, repo, paths, max_age)) {
        return std::nullopt;
    }
    auto k = checked_key(sys, *key, repo, paths.key.string());
    if (!k.value) {
        return std::nullopt;
    }
    auto text = verify_inrelease(sys, paths.key, *inrelease, repo.key_fingerprint,
                                 paths.inrelease.string());
    if (!text.value) {
        return std::nullopt;
    }
    // The parsed copy saved with this very Packages file spares reading, hashing and parsing it.
    const auto name = packages_entry(repo);
    const auto entry = release_entry(*text.value, name);
    auto records =
        entry ? repo_detail::load_parsed_index(sys, paths.packages, entry->sha256) : std::nullopt;
    if (!records) {
        const auto packages = sys.read_file(paths.packages);
        if (!packages) {
            return std::nullopt;
        }
        auto checked = checked_packages(*text.value, *packages, name, paths.inrelease.string(),
                                        paths.packages.string());
        if (!checked.value) {
            return std::nullopt;
        }
        repo_detail::save_parsed_index(sys, paths.packages, entry->sha256, *checked.value);
        records = std::move(checked.value);
    }
    return cached_result(PackageIndex(std::move(*records)), std::move(*k.value), *inrelease);
}

bool is_insecure(const std::string& url) {
    // file:// is read from this host's disk: nothing travels, so nothing to protect in transit.
    const auto lower = to_lower(url);
    return !starts_with(lower, "https://") && !starts_with(lower, "file://");
}

bool ends_with_gz(const std::string& s) {
    return s.size() > 3 && s.compare(s.size() - 3, 3, ".gz") == 0;
}

IndexLoadResult failed(std::string error) {
    IndexLoadResult r;
    r.error = std::move(error);
    return r;
}

/// What stops a repository before anything is downloaded, apt's or dnf's alike: nowhere to
/// keep the verified copy, or a plain-http URL the profile did not allow.
std::optional<std::string> refuse_before_download(const ResolvedRepo& repo,
                                                  const std::string& cache_dir) {
    if (cache_dir.empty()) {
        return fmt::format("repository '{}': no cache directory (set HOME or XDG_CACHE_HOME)",
                           repo.name);
    }
    for (const auto* url : {&repo.url, &repo.key_url}) {
        if (is_insecure(*url) && !repo.allow_insecure) {
            return fmt::format("repository '{}': {} is not https:// (set allow_insecure: true on "
                               "this repository to permit it)",
                               repo.name, *url);
        }
    }
    return std::nullopt;
}

} // namespace

ClearsignedCheck verify_clearsigned(const System& sys, const std::string& keyring,
                                    const std::string& message, const std::string& pinned,
                                    const std::string& where) {
    auto checked = verify_inrelease(sys, keyring, message, pinned, where);
    return {std::move(checked.value), std::move(checked.error)};
}

IndexLoadResult load_package_index(System& sys, const ResolvedRepo& pinned_repo,
                                   const std::string& cache_dir, std::chrono::seconds max_age) {
    // gpg prints fingerprints with spaces and tools differ in case; the pin must compare equal
    // to what gpgv reports however it was written.
    ResolvedRepo repo = pinned_repo;
    repo.key_fingerprint = to_upper(replace_all(repo.key_fingerprint, " ", ""));
    if (auto refused = refuse_before_download(repo, cache_dir)) {
        return failed(*refused);
    }
    const auto paths = cache_paths(cache_dir, repo);
    if (auto cached = from_cache(sys, repo, paths, max_age)) {
        return std::move(*cached);
    }

    auto key = fetch_pinned_key(sys, repo);
    if (!key.value) {
        return failed(key.error);
    }
    // Flat: URL/InRelease and URL/Packages; dists: URL/dists/SUITE/InRelease and
    // URL/dists/SUITE/COMPONENT/binary-ARCH/Packages, listed under that name in the InRelease.
    const auto name = packages_entry(repo);
    const auto inrelease_url = release_dir_url(repo) + "InRelease";
    const auto packages_url = release_dir_url(repo) + name;
    try {
        // The stamp goes first, so a run killed half-way leaves a cache that is never trusted.
        sys.remove_file(paths.stamp);
        // gpgv reads keyrings only from files. This key already matches the pin, so writing it
        // before the InRelease check gives it no trust it did not have.
        sys.write_file_atomic(paths.key, key.value->binary, 0644);
    } catch (const Error& e) {
        return failed(
            fmt::format("cannot write gpuprov's cache {}: {}", paths.dir.string(), e.what()));
    }

    auto inrelease = fetch_body(sys, inrelease_url);
    if (!inrelease.value) {
        return failed(inrelease.error);
    }
    auto text =
        verify_inrelease(sys, paths.key, *inrelease.value, repo.key_fingerprint, inrelease_url);
    if (!text.value) {
        return failed(text.error);
    }
    const auto entry = release_entry(*text.value, name);
    auto packages =
        fetch_body(sys, packages_url,
                   std::max<std::size_t>(FetchRequest{}.max_bytes, entry ? entry->size : 0));
    if (!packages.value) {
        return failed(packages.error);
    }
    auto index = checked_packages(*text.value, *packages.value, name, inrelease_url, packages_url);
    if (!index.value) {
        return failed(index.error);
    }
    try {
        sys.write_file_atomic(paths.inrelease, *inrelease.value, 0644);
        sys.write_file_atomic(paths.packages, *packages.value, 0644);
        repo_detail::save_parsed_index(sys, paths.packages, entry->sha256, *index.value);
        sys.write_file_atomic(paths.stamp, stamp_text(sys.now(), repo), 0644);
    } catch (const Error& e) {
        return failed(
            fmt::format("cannot write gpuprov's cache {}: {}", paths.dir.string(), e.what()));
    }
    IndexLoadResult out;
    out.index = PackageIndex(std::move(*index.value));
    out.key = std::move(key.value);
    out.inrelease = std::move(*inrelease.value);
    return out;
}

namespace {

fs::path rpm_repomd_path(const CachePaths& paths) {
    return paths.dir / "repomd.xml";
}

/// gpgv over repomd.xml with the pinned key (paths.key) and the detached signature already in
/// the cache directory; empty when it is good.
std::string verify_repomd(const System& sys, const ResolvedRepo& repo, const CachePaths& paths,
                          const std::string& repomd, const std::string& where) {
    return gpgv_verdict(sys,
                        {"gpgv", "--keyring", paths.key.string(), "--status-fd", "1",
                         (paths.dir / "repomd.xml.asc").string(), "-"},
                        repomd, repo.key_fingerprint, "repomd.xml", where, false)
        .error;
}

/// The primary file repomd.xml lists, checked by its SHA-256 and size, gunzipped and parsed.
Checked<PackageIndex> primary_index(const std::string& primary, const RepomdEntry& entry,
                                    const std::string& where) {
    if (primary.size() != entry.size || sha256_hex(primary) != entry.sha256) {
        return {std::nullopt,
                fmt::format("{} does not match the size and SHA-256 repomd.xml lists (a "
                            "truncated download, a mirror in mid-sync or a tampered file)",
                            where)};
    }
    const auto xml =
        ends_with_gz(entry.location) ? gunzip(primary) : std::optional<std::string>(primary);
    if (!xml) {
        return {std::nullopt, fmt::format("{} is not a readable gzip file", where)};
    }
    return {PackageIndex(parse_primary_xml(*xml)), {}};
}

/// The verified rpm-md copy of an earlier run, when its stamp is fresh and it still checks out
/// (the same gpgv and SHA-256 checks as a download): plan and apply in one sitting, or a
/// converged host's re-run, read the repository once.
std::optional<IndexLoadResult> rpm_from_cache(const System& sys, const ResolvedRepo& repo,
                                              const CachePaths& paths,
                                              std::chrono::seconds max_age) {
    const auto key = sys.read_file(paths.key);
    const auto repomd = sys.read_file(rpm_repomd_path(paths));
    const auto primary = sys.read_file(paths.packages);
    if (!key || !repomd || !primary || !fresh_stamp(sys, repo, paths, max_age)) {
        return std::nullopt;
    }
    auto k = checked_key(sys, *key, repo, paths.key.string());
    const auto entry = repomd_entry(*repomd, "primary");
    if (!k.value || !entry ||
        !verify_repomd(sys, repo, paths, *repomd, rpm_repomd_path(paths).string()).empty()) {
        return std::nullopt;
    }
    auto index = primary_index(*primary, *entry, paths.packages.string());
    if (!index.value) {
        return std::nullopt;
    }
    return cached_result(std::move(*index.value), std::move(*k.value), *repomd);
}

} // namespace

IndexLoadResult load_rpm_package_index(System& sys, const ResolvedRepo& pinned_repo,
                                       const std::string& cache_dir, std::chrono::seconds max_age) {
    // The same trust chain as apt's, in rpm-md's shape: pinned key → repodata/repomd.xml with
    // its detached repomd.xml.asc (gpgv against that key alone; dnf's repo_gpgcheck=1 checks the
    // same signature) → primary.xml.gz by the SHA-256 and size repomd.xml lists. The verified
    // copy is kept (key.gpg, repomd.xml, repomd.xml.asc, Packages = the primary as fetched,
    // stamp last) and reused while fresh, as on apt.
    ResolvedRepo repo = pinned_repo;
    repo.key_fingerprint = to_upper(replace_all(repo.key_fingerprint, " ", ""));
    if (auto refused = refuse_before_download(repo, cache_dir)) {
        return failed(*refused);
    }
    const auto paths = cache_paths(cache_dir, repo);
    if (auto cached = rpm_from_cache(sys, repo, paths, max_age)) {
        return std::move(*cached);
    }
    auto key = fetch_pinned_key(sys, repo);
    if (!key.value) {
        return failed(key.error);
    }
    const auto repomd_url = repo.url + "repodata/repomd.xml";
    auto repomd = fetch_body(sys, repomd_url);
    if (!repomd.value) {
        return failed(repomd.error);
    }
    auto signature = fetch_body(sys, repomd_url + ".asc");
    if (!signature.value) {
        return failed(signature.error);
    }
    try {
        // The stamp goes first, so a run killed half-way leaves a cache that is never trusted.
        sys.remove_file(paths.stamp);
        // gpgv reads keyrings and detached signatures only from files; neither gains trust by
        // being written (the key matches the pin, the signature is checked next).
        sys.write_file_atomic(paths.key, key.value->binary, 0644);
        sys.write_file_atomic(paths.dir / "repomd.xml.asc", *signature.value, 0644);
        // dnf's view for plan reads the key armored (gpgkey=file://.../key.asc).
        sys.write_file_atomic(paths.dir / "key.asc", armor_public_key(key.value->binary), 0644);
    } catch (const Error& e) {
        return failed(
            fmt::format("cannot write gpuprov's cache {}: {}", paths.dir.string(), e.what()));
    }
    if (const auto error = verify_repomd(sys, repo, paths, *repomd.value, repomd_url);
        !error.empty()) {
        return failed(error);
    }
    const auto entry = repomd_entry(*repomd.value, "primary");
    if (!entry) {
        return failed(fmt::format("repomd.xml at {} lists no SHA-256 'primary' file inside the "
                                  "repository",
                                  repomd_url));
    }
    const auto primary_url = repo.url + entry->location;
    auto primary =
        fetch_body(sys, primary_url, std::max<std::size_t>(FetchRequest{}.max_bytes, entry->size));
    if (!primary.value) {
        return failed(primary.error);
    }
    auto index = primary_index(*primary.value, *entry, primary_url);
    if (!index.value) {
        return failed(index.error);
    }
    try {
        sys.write_file_atomic(rpm_repomd_path(paths), *repomd.value, 0644);
        sys.write_file_atomic(paths.packages, *primary.value, 0644);
        sys.write_file_atomic(paths.stamp, stamp_text(sys.now(), repo), 0644);
    } catch (const Error& e) {
        return failed(
            fmt::format("cannot write gpuprov's cache {}: {}", paths.dir.string(), e.what()));
    }
    IndexLoadResult out;
    out.index = std::move(index.value);
    out.key = std::move(key.value);
    out.inrelease = std::move(*repomd.value); // the signed document, for comparisons
    return out;
}

std::optional<std::string> cached_inrelease(const System& sys, const ResolvedRepo& pinned_repo,
                                            const std::string& cache_dir) {
    if (cache_dir.empty()) {
        return std::nullopt;
    }
    ResolvedRepo repo = pinned_repo;
    repo.key_fingerprint = to_upper(replace_all(repo.key_fingerprint, " ", ""));
    const auto paths = cache_paths(cache_dir, repo);
    const auto stamp = sys.read_file(paths.stamp);
    if (!stamp) {
        return std::nullopt;
    }
    const auto stamp_lines = lines(*stamp);
    if (stamp_lines.empty() || !starts_with(stamp_lines[0], "fetched ")) {
        return std::nullopt;
    }
    const auto fetched = parse_int(std::string_view(stamp_lines[0]).substr(8));
    if (!fetched ||
        *stamp != stamp_text(std::chrono::system_clock::time_point(std::chrono::seconds(*fetched)),
                             repo)) {
        return std::nullopt;
    }
    if (auto inrelease = sys.read_file(paths.inrelease)) {
        return inrelease;
    }
    return sys.read_file(rpm_repomd_path(paths)); // an rpm-md repository's signed document
}

} // namespace gpuprov
