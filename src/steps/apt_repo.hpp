#pragma once
// An apt repository as gpuprov installs it: a fingerprint-checked, dearmored key under
// /usr/share/keyrings/ and a deb822 .sources file whose Signed-By names only that key.
#include "common.hpp"

namespace gpuprov::steps {

struct AptRepoFiles {
    std::string keyring;
    std::string source;
};

/// The paths for a profile repository name. The keyring names match NVIDIA's own packages
/// (cuda-keyring, the container toolkit guide), so apt never sees two Signed-By values.
[[nodiscard]] AptRepoFiles apt_repo_files(const std::string& repo_name);
[[nodiscard]] std::string deb822_source(const ResolvedRepo& repo, const std::string& keyring,
                                        const std::string& profile_name);

/// Adds the repository's changes to `r` (pending), or leaves `r` alone when key and source
/// are in place, or blocks `r` when the key cannot be fetched or does not match.
void check_apt_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r);
/// Writes key then source, refreshes only that source's index; on any failure removes what it
/// wrote, so a source never exists without its key. No-op when already in place.
void apply_apt_repo(const StepContext& ctx, System& sys, const std::string& repo_name);
/// Whether key and source are in place.
[[nodiscard]] bool apt_repo_in_place(const StepContext& ctx, const System& sys,
                                     const std::string& repo_name);

} // namespace gpuprov::steps
