#pragma once
// A dnf repository as gpuprov installs it on the rhel family: the fingerprint-checked key,
// ASCII-armored under /etc/pki/rpm-gpg/, and a .repo file whose one section (id = file stem)
// checks package signatures (gpgcheck=1) and the signed repodata (repo_gpgcheck=1) against
// only that key. Never --nogpgcheck. NVIDIA's own cuda-rhelN.repo (reference §2.1) enables
// gpgcheck only; gpuprov adds repo_gpgcheck because repomd.xml.asc is published.
#include "common.hpp"

#include <gpuprov/dnf_download.hpp>

namespace gpuprov::steps {

struct DnfRepoFiles {
    std::string key;  ///< /etc/pki/rpm-gpg/gpuprov-<name>.asc
    std::string repo; ///< /etc/yum.repos.d/gpuprov-<name>.repo, section [gpuprov-<name>]
    std::string id;   ///< gpuprov-<name>
    /// /etc/pki/rpm-gpg/gpuprov-<name>-packages.asc: an offline bundle's package key, when the
    /// run has one for the repository (dnf_bundle_package_key).
    std::string package_key;
};
[[nodiscard]] DnfRepoFiles dnf_repo_files(const std::string& repo_name);
/// The .repo text; `key_path` is the file gpgkey= names, and `package_key_path` a second one
/// when the repository's packages are signed by another key than its repodata (a bundle's).
[[nodiscard]] std::string dnf_repo_text(const ResolvedRepo& repo, const std::string& id,
                                        const std::string& key_path,
                                        const std::string& profile_name,
                                        const std::string& package_key_path = {});

/// The package key --from-bundle set for this repository (dnf_use_package_keys), or nullptr.
[[nodiscard]] const DnfPackageKey* dnf_bundle_package_key(const std::string& repo_name);
/// Where that key is written (DnfRepoFiles::package_key), empty without one: dnf_repo_text's
/// `package_key_path`.
[[nodiscard]] std::string dnf_package_key_path(const std::string& repo_name);

/// Whether dnf's metadata cache holds this repository as gpuprov knows it: the repomd.xml under
/// <cachedir>/<id>-<hash>/repodata/ (dnf_cache_dir_name) at least as new (its <revision>) as
/// the one gpuprov verified, or byte-identical when either has none. Reads files only.
struct DnfCacheState {
    bool current = false;
    std::string why;    ///< when not current: what is missing or stale, naming the file
    std::string repomd; ///< the file dnf keeps this repository's repomd.xml in
};
[[nodiscard]] DnfCacheState dnf_cache_state(const StepContext& ctx, const System& sys,
                                            const std::string& repo_name);

/// Key and .repo file in place with the pinned fingerprint and this profile's URL.
[[nodiscard]] bool dnf_repo_in_place(const StepContext& ctx, const System& sys,
                                     const std::string& repo_name);
/// Plans key, .repo file and `dnf makecache --repo <id>`; blocks when the key cannot be had.
void check_dnf_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r);
/// Writes key then .repo, refreshes only that repository; removes what it wrote on failure.
void apply_dnf_repo(const StepContext& ctx, System& sys, const std::string& repo_name);

} // namespace gpuprov::steps
