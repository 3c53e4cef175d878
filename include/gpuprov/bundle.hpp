#pragma once
// Offline bundles for air-gapped hosts (docs/air-gapped.md): `gpuprov bundle` writes the exact
// package closure a profile installs on a fresh host of one target as flat repositories signed
// by a bundle key, plus a signed manifest; `plan|apply|verify --from-bundle` checks it against
// the key's fingerprint and points the profile's repositories at it.
#include <cstdint>
#include <gpuprov/engine.hpp>
#include <gpuprov/facts.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

/// Every profile repository whose verified index gpuprov holds under `cache_dir`, as apt's (or
/// dnf's) private view offers it to a simulation (resolve_transactions, gpuprov bundle).
[[nodiscard]] std::vector<SimulatedRepo> simulated_repos(const StepContext& ctx, const System& sys,
                                                         const std::string& cache_dir);

/// `--for debian-12[/x86_64]`: the profile's spelling of the OS (OsInfo::profile_os) and uname's
/// arch.
struct BundleTarget {
    std::string os;   ///< "debian-12"
    std::string arch; ///< "x86_64"
    [[nodiscard]] std::string text() const { return os + "/" + arch; }
};
/// Throws UsageError on anything but OS[/ARCH]; the arch defaults to `default_arch`. EL
/// rebuilds are spelled as profiles spell them: rocky-9, almalinux-9, alma-9, ol-9 → rhel-9.
[[nodiscard]] BundleTarget parse_bundle_target(std::string_view text,
                                               const std::string& default_arch);

struct BundleFile {
    std::string path; ///< relative to the bundle's top directory
    std::string sha256;
    std::uint64_t size = 0;
};

/// manifest.json, carried clear-signed by the bundle key as manifest.json.asc.
struct BundleManifest {
    int format_version = 1;
    std::string profile;        ///< the profile's name
    std::string profile_digest; ///< "sha256:..." as saved plans compute it (seal_plan)
    BundleTarget target;
    std::vector<std::string> kernels;      ///< kernel releases whose headers are inside
    std::vector<std::string> repositories; ///< profile repositories, one flat repo each
    std::string key_fingerprint;
    std::vector<BundleFile> files; ///< every file but the manifest and the key
    /// The signed indexes the packages were checked against (provenance/...), by repository.
    std::vector<std::pair<std::string, std::string>> provenance;
    /// dnf bundles: the key each profile repository's packages are signed with, as the
    /// profile pinned it (keys/NAME.gpg), by repository. rpm checks package signatures
    /// (gpgcheck=1) against it on the host, the bundle key covers only the repodata.
    std::vector<std::pair<std::string, std::string>> package_keys;
};

[[nodiscard]] std::string manifest_to_json(const BundleManifest& m);
/// Throws Error naming what is wrong (not JSON, a field missing, a path leaving the bundle).
[[nodiscard]] BundleManifest parse_manifest(std::string_view text);

/// The bundle's layout.
inline constexpr const char* kBundleManifest = "manifest.json.asc";
inline constexpr const char* kBundleKey = "bundle-key.gpg";
/// The flat repository of profile repository `name`: "repos/NAME/".
[[nodiscard]] std::string bundle_repo_dir(const std::string& name);

/// A bundle that passed every check: its directory (a tar extracted into gpuprov's cache) and
/// its manifest as the bundle key signed it.
struct OpenedBundle {
    std::string dir; ///< the bundle's directory (a FILE.tar's extracted copy)
    BundleManifest manifest;
    /// The package keys (manifest.package_keys) as read and hashed, by repository.
    std::vector<std::pair<std::string, std::string>> package_key_data;
    std::string fingerprint; ///< the key that signed it: 40 upper-case hex digits
};

/// Checks, before anything changes: the key file holds exactly the key `fingerprint` names, the
/// manifest is clear-signed by it (gpgv), every file it lists has its SHA-256 and size, and the
/// repositories hold no file it does not list. A FILE.tar is extracted first (tar argv) into
/// `cache_dir`/bundles/. Throws Error naming the first failure.
[[nodiscard]] OpenedBundle open_bundle(System& sys, const std::string& path,
                                       const std::string& fingerprint,
                                       const std::string& cache_dir);

/// The fingerprint a bundle must be signed with: `--bundle-key` (as typed: spaces or colons
/// and lower case allowed), the profile's bundle.key_fingerprint, or both when they name the
/// same key. Throws UsageError when neither gives one, ProfileError (at the profile's key)
/// when they differ.
[[nodiscard]] std::string bundle_key_for(const Profile& profile, std::string_view cli_key);

/// What this host needs that the bundle lacks: another OS or arch, the headers of the running
/// kernel ("linux-headers-6.1.0-31-amd64", on EL "kernel-devel-5.14.0-...x86_64"). Empty when
/// it fits.
[[nodiscard]] std::vector<std::string> bundle_gaps(const BundleManifest& m, const HostFacts& facts);

/// The profile with each repository pointed at the bundle's flat repository of that name
/// (file:// URL, key_url the bundle key, pinned to its fingerprint). Throws Error when the
/// profile names a repository the bundle does not carry.
[[nodiscard]] Profile profile_from_bundle(Profile profile, const OpenedBundle& bundle);

/// A dnf bundle's package key for one profile repository (manifest.package_keys).
struct BundlePackageKey {
    std::string repo;
    std::string file; ///< inside the opened bundle
    std::string fingerprint;
};
/// The package keys of `bundle` for the repositories `profile` (as loaded, before
/// profile_from_bundle) uses, each checked against the profile's own pin when it has one.
/// Throws Error naming both keys when a bundle's key is not the pinned one.
[[nodiscard]] std::vector<BundlePackageKey> bundle_package_keys(const Profile& profile,
                                                                const OpenedBundle& bundle);

/// `gpuprov bundle`'s inputs besides the plan.
struct BundleBuildOptions {
    BundleTarget target;
    std::vector<std::string> kernels;
    std::string output;   ///< a directory, or FILE.tar
    std::string key_home; ///< gpg home holding the bundle key (made when it has none)
    std::string cache_dir;
    std::string profile_digest;
};

struct BundleBuildResult {
    std::string output;
    std::string key_fingerprint;
    std::size_t packages = 0;
    std::uint64_t bytes = 0;
};

/// The fresh-host package database the closure is resolved against: the stanzas of `status`
/// (dpkg's) that a minimal install of the distribution has too (Essential: yes, Priority:
/// required), so everything else the profile needs is downloaded.
[[nodiscard]] std::string fresh_host_status(std::string_view status);

/// The package a DKMS build for `kernel` needs: "linux-headers-K" (debian family) or
/// "kernel-devel-K" (rhel family).
[[nodiscard]] std::string kernel_headers_package(const std::string& family,
                                                 const std::string& kernel);

/// The package requests of a plan's transactions (every step's pins, pinning packages first),
/// plus the headers of each kernel (kernel_headers_package): what the bundle must hold.
[[nodiscard]] std::vector<PackagePin> bundle_requests(const Plan& plan,
                                                      const std::vector<std::string>& kernels,
                                                      const std::string& family = "debian");

/// Downloads the closure with the package manager's own downloader on the plan's private view,
/// rechecks each file against the signed index it came from (SHA-256 and size), writes one flat
/// repository per profile repository (distribution packages go with the first, `cuda`), signs
/// them and the manifest with the bundle key. Throws Error on the first failure.
[[nodiscard]] BundleBuildResult build_bundle(System& sys, const StepContext& ctx, const Plan& plan,
                                             const BundleBuildOptions& opt);

} // namespace gpuprov
