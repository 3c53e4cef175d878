#pragma once
// dnf's side of `gpuprov bundle` (docs/air-gapped.md): the closure downloaded by dnf itself into a
// private installroot, and the .repo files of the distribution whose signed metadata the
// downloads are checked against.
#include <gpuprov/package_manager.hpp>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuprov {

/// Where dnf_download resolves and writes.
struct DnfDownloadPlace {
    /// A private root whose rpm database stands for a fresh host's (--installroot): dnf
    /// downloads everything the closure needs that this database lacks.
    std::string installroot;
    std::string destdir;     ///< where the .rpm files go (--destdir)
    std::string releasever;  ///< $releasever (the installroot has no release package): "9"
    std::string platform_id; ///< os-release PLATFORM_ID ("platform:el9"): module streams need it
};

/// The commands: `dnf module enable` of req.modules in the installroot (when any), then
/// `dnf install --downloadonly --destdir` of req.installs, both on the private view of `req`
/// (req.scratch_dir, req.repos: the same view the plan's simulation uses) with the host's
/// /etc/dnf/dnf.conf. dnf's downloader checks every file against the repository metadata it
/// came from. Throws BugError without a view or place.
[[nodiscard]] std::vector<Command> dnf_download_commands(const SimulationRequest& req,
                                                         const std::string& reposdir,
                                                         const DnfDownloadPlace& place);
/// Makes the view and runs dnf_download_commands; `error` is set when dnf refuses or fails.
[[nodiscard]] PackageTransaction dnf_download(System& sys, const SimulationRequest& req,
                                              const DnfDownloadPlace& place);

/// Limits every dnf command gpuprov runs from here on to repositories whose id matches one of
/// `globs` (`--repo=GLOB`): an offline bundle's host reads gpuprov's repositories only, never
/// the distribution's (docs/air-gapped.md). Empty: every enabled repository, as dnf would.
/// `extra` (id, URL) are added to every command (--repofrompath), for transactions that run
/// before gpuprov's .repo files exist: the bundle's repositories, already verified.
void dnf_limit_repos(std::vector<std::string> globs,
                     std::vector<std::pair<std::string, std::string>> extra = {});

/// An offline bundle's package key for one profile repository (docs/air-gapped.md, EL): the
/// key rpm checks its packages' signatures with, beside the bundle key that signs the repodata.
struct DnfPackageKey {
    std::string file;        ///< the key inside the opened bundle
    std::string fingerprint; ///< checked against the profile's pin when the bundle was opened
};
/// Set by --from-bundle for the run (by profile repository name); the dnf repository step
/// writes each as /etc/pki/rpm-gpg/gpuprov-<name>-packages.asc and names it in gpgkey=.
void dnf_use_package_keys(std::map<std::string, DnfPackageKey> keys);
[[nodiscard]] const std::map<std::string, DnfPackageKey>& dnf_package_keys();

/// One section of a .repo file (dnf.conf(5), "REPO OPTIONS"), the options a bundle reads.
struct YumRepoSection {
    std::string id;
    std::vector<std::string> baseurls;
    std::vector<std::string> gpgkeys; ///< as written: "file:///etc/pki/rpm-gpg/RPM-GPG-KEY-..."
    bool enabled = true;
    bool has_mirrorlist = false; ///< mirrorlist= or metalink=
};
/// Sections of a .repo file; values split on whitespace and commas as dnf does for lists.
[[nodiscard]] std::vector<YumRepoSection> parse_yum_repo_file(std::string_view text);
/// `value` with $releasever, $basearch and $arch (also as ${...}) replaced.
[[nodiscard]] std::string expand_yum_vars(std::string_view value, const std::string& releasever,
                                          const std::string& basearch);

} // namespace gpuprov
