#pragma once
// What `gpuprov bundle`'s shared writer (bundle_build.cpp: key, manifest, tar) and its package
// manager halves (bundle_apt.cpp, bundle_dnf.cpp) share. Each half downloads the closure with its
// own package manager, rechecks every file against the signed index it came from, and writes
// the flat repositories signed by the bundle key; the writer does everything else, once.
#include <cstdint>
#include <gpuprov/bundle.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/system.hpp>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov::bundle_detail {

/// A command that must succeed; throws HostError/CommandError naming `what`.
CommandResult must(System& sys, Command cmd, const std::string& what);
/// gpg's argv on the bundle key's home (batch, no tty).
[[nodiscard]] std::vector<std::string> gpg(const std::string& home, std::vector<std::string> args);
/// `text` clear-signed by the bundle key (SHA512), for an InRelease or the manifest.
[[nodiscard]] std::string clearsign(System& sys, const std::string& home, const std::string& fpr,
                                    const std::string& text, const std::string& what);
/// `file` detach-signed, ASCII-armored, by the bundle key into `file`.asc (repomd.xml.asc).
void detach_sign(System& sys, const std::string& home, const std::string& fpr,
                 const std::string& file);
/// Empties `dir` (made when absent), keeping the names in `keep`.
void clear_dir(System& sys, const std::string& dir, const std::vector<std::string>& keep = {});

/// Every file under `top`/`rel_dir` (recursively: rpm-md keeps repodata/ inside the
/// repository), as paths relative to `top`, sorted.
[[nodiscard]] std::vector<std::string> files_under(const System& sys, const std::string& top,
                                                   const std::string& rel_dir);

/// The package files a bundle may carry: every record of the verified indexes it was built from,
/// by SHA-256. A file is taken only when its SHA-256 and size are a record's.
class VerifiedRecords {
public:
    /// The records of one verified index (a profile repository's, or the distribution's when
    /// `repo` is empty); the first index to list a SHA-256 keeps it.
    void add(const PackageIndex& index, const std::string& repo);
    /// The profile repository the file belongs to ("" for the distribution's); throws Error
    /// naming the file when no record matches, or when its size is not the record's.
    [[nodiscard]] std::string check(const std::string& file, std::string_view data,
                                    const std::string& why_unverified = {}) const;
    /// Every package name a verified index offers.
    [[nodiscard]] const std::set<std::string>& names() const { return m_names; }

private:
    struct Rec {
        std::string repo;
        std::uint64_t size = 0;
    };
    std::map<std::string, Rec> m_by_sha;
    std::set<std::string> m_names;
};

/// One build: where it writes and with which key.
struct BuildArea {
    std::string work;               ///< private work directory in gpuprov's cache
    std::string tree;               ///< the bundle's top directory
    std::vector<std::string> repos; ///< profile repositories, cuda first
    std::string key_home;
    std::string fingerprint; ///< the bundle key's
};

/// The apt half: apt-get --download-only on a fresh dpkg status, each .deb checked against the
/// Packages of a signed InRelease, flat repositories with a clear-signed InRelease.
void fill_apt(System& sys, const StepContext& ctx, const Plan& plan, const BundleBuildOptions& opt,
              const BuildArea& area, BundleManifest& m, BundleBuildResult& result);
/// The dnf half: dnf install --downloadonly into a private installroot, each .rpm checked
/// against the primary.xml of a signed repomd.xml, createrepo_c repositories whose repomd.xml
/// is detach-signed.
void fill_dnf(System& sys, const StepContext& ctx, const Plan& plan, const BundleBuildOptions& opt,
              const BuildArea& area, BundleManifest& m, BundleBuildResult& result);

} // namespace gpuprov::bundle_detail
