#pragma once
// An apt repository as gpuprov installs it: a fingerprint-checked, dearmored key under
// /usr/share/keyrings/ and a deb822 .sources file whose Signed-By names only that key.
#include "common.hpp"

namespace gpuprov::steps {

struct AptRepoFiles {
    std::string keyring;
    std::string source;
};

/// The paths gpuprov writes for a profile repository name: /usr/share/keyrings/gpuprov-<name>.gpg
/// (never cuda-keyring's cuda-archive-keyring.gpg) and .../sources.list.d/gpuprov-<name>.sources;
/// container-toolkit's keyring is the name NVIDIA's install guide uses.
[[nodiscard]] AptRepoFiles apt_repo_files(const std::string& repo_name);

/// Where this repository lives on this host. Normally gpuprov's own files. When another
/// source names the same URL (NVIDIA's cuda-keyring package, foreign_apt_source) and its
/// Signed-By keyring holds exactly the pinned key, that source and keyring are adopted: gpuprov
/// writes neither, removes its own entry (apt refuses two Signed-By values for one URL) and
/// refreshes through that file. Any other foreign entry is a conflict: `conflict` says which
/// file and line and the fix, and the step blocks.
struct AptRepoPlacement {
    AptRepoFiles files;
    bool adopted = false;
    std::string conflict;
};
[[nodiscard]] AptRepoPlacement apt_repo_placement(const StepContext& ctx, const System& sys,
                                                  const std::string& repo_name);
[[nodiscard]] std::string deb822_source(const ResolvedRepo& repo, const std::string& keyring,
                                        const std::string& profile_name);
/// The stanza alone (Types, URIs, Suites, Components when the repository has them, Signed-By):
/// what apt reads, also for plan's private view of the repository.
[[nodiscard]] std::string deb822_stanza(const ResolvedRepo& repo, const std::string& keyring);

/// Whether apt's lists hold this source's index as gpuprov knows the repository: an InRelease
/// at least as new (its Date) as the one gpuprov verified, or byte-identical when either has no
/// Date, and the Packages file that InRelease lists. Reads files only: the reference InRelease
/// comes from RepoProvider::known_inrelease, never from a download.
struct AptListsState {
    bool current = false;
    std::string why;       ///< when not current: what is missing or stale, naming the file
    std::string inrelease; ///< the lists file apt keeps this source's InRelease in
};
[[nodiscard]] AptListsState apt_lists_state(const StepContext& ctx, const System& sys,
                                            const std::string& repo_name);

/// Adds the repository's changes to `r` (pending), or leaves `r` alone when key and source
/// are in place and apt's lists hold the index (apt_lists_state), or plans the index refresh
/// alone when only the lists are missing or stale (a run killed before `apt-get update`), or
/// blocks `r` when the key cannot be fetched or does not match.
void check_apt_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r);
/// Writes key then source, refreshes only that source's index; on any failure removes what it
/// wrote, so a source never exists without its key. With key and source already in place it
/// only refreshes, and only when apt's lists are not current. Throws when apt's lists still do
/// not match after the refresh (a mirror serving an older InRelease), rather than leave a
/// step that plans the same refresh forever. No-op when everything is in place.
void apply_apt_repo(const StepContext& ctx, System& sys, const std::string& repo_name);
/// Whether key and source are in place.
[[nodiscard]] bool apt_repo_in_place(const StepContext& ctx, const System& sys,
                                     const std::string& repo_name);

} // namespace gpuprov::steps
