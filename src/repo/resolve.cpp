#include <algorithm>
#include <cctype>
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::string fill(std::string s, const std::string& distro, const std::string& arch,
                 const std::string& pkgarch, const std::string& pkgformat) {
    s = replace_all(std::move(s), "{pkgformat}", pkgformat);
    s = replace_all(std::move(s), "{distro}", distro);
    s = replace_all(std::move(s), "{arch}", arch);
    return replace_all(std::move(s), "{pkgarch}", pkgarch);
}

/// "eb69 3b30 ..." as printed by gpg → "EB693B30...", so a pin copied from gpg output matches.
std::string normalise_fingerprint(std::string_view fpr) {
    std::string out;
    for (const char c : fpr) {
        if (std::isspace(static_cast<unsigned char>(c)) == 0) {
            out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

} // namespace

std::string package_format(const std::string& family) {
    return family == "rhel" ? "rpm" : "deb";
}

ResolvedRepo resolve_repo(const RepositorySpec& spec, const std::string& distro,
                          const std::string& arch, const std::string& pkgarch,
                          const std::string& pkgformat) {
    ResolvedRepo r;
    r.name = spec.name;
    r.url = fill(spec.url, distro, arch, pkgarch, pkgformat);
    // A flat repository's files sit beside the URL; without the slash "<url>InRelease" would
    // name a sibling path.
    if (r.url.empty() || r.url.back() != '/') {
        r.url += '/';
    }
    r.key_url = fill(spec.key_url, distro, arch, pkgarch, pkgformat);
    r.key_fingerprint = normalise_fingerprint(spec.key_fingerprint);
    r.allow_insecure = spec.allow_insecure;
    return r;
}

std::string release_dir_url(const ResolvedRepo& repo) {
    return repo.suite.empty() ? repo.url : repo.url + "dists/" + repo.suite + "/";
}

std::string packages_entry(const ResolvedRepo& repo) {
    return repo.suite.empty() ? std::string("Packages")
                              : repo.component + "/binary-" + repo.pkgarch + "/Packages";
}

namespace {

/// Docker's repository (profile repository "docker"): a dists repository on apt (Docker's
/// install docs: Suites: <codename>, Components: stable), a baseurl on dnf; unpinned on
/// Docker's own URL, its URL and key for this distro from the matrix.
ResolvedRepo resolve_docker_repo(const RepositorySpec& spec, const HostFacts& facts,
                                 const Matrix& matrix, ResolvedRepo r) {
    const auto* distro = matrix.distro(facts.os.repo_slug);
    const auto* docker = distro != nullptr && distro->docker ? &*distro->docker : nullptr;
    const auto where = facts.os.repo_slug.empty() ? std::string("this OS") : facts.os.repo_slug;
    if (docker == nullptr) {
        r.key_fingerprint.clear();
        r.key_source = distro != nullptr && !distro->docker_unpublished.empty()
                           ? "none: " + distro->docker_unpublished
                           : "none: gpuprov's version matrix has no Docker repository for " + where;
        return r;
    }
    if (facts.os.family != "rhel") {
        r.suite = docker->suite;
        r.component = "stable";
        r.pkgarch = facts.pkg_arch;
    }
    if (!spec.key_fingerprint.empty()) {
        r.key_source = "pinned by the profile";
        return r;
    }
    const auto own = resolve_repo({.name = spec.name, .url = docker->url}, facts.os.repo_slug,
                                  facts.repo_arch, facts.pkg_arch, package_format(facts.os.family));
    // Unpinned is only allowed on Docker's own host (profile validation): its root
    // (https://download.docker.com/linux/) means this distro's repository.
    if (spec.url != kDockerRepoRoot && r.url != own.url) {
        r.key_source = "none: the profile pins no key and " + r.url +
                       " is not Docker's repository for " + where + " (" + own.url +
                       "); pin the key that signs it";
        return r;
    }
    r.url = own.url;
    r.key_url = docker->key_url;
    r.key_fingerprint = docker->key_fingerprint;
    r.matrix_key = true;
    r.key_source = "Docker's key for " + where + ", from gpuprov's version matrix";
    return r;
}

} // namespace

ResolvedRepo resolve_host_repo(const RepositorySpec& spec, const HostFacts& facts,
                               const Matrix& matrix) {
    auto r = resolve_repo(spec, facts.os.repo_slug, facts.repo_arch, facts.pkg_arch,
                          package_format(facts.os.family));
    if (spec.name == kDockerRepoName) {
        return resolve_docker_repo(spec, facts, matrix, std::move(r));
    }
    if (!spec.key_fingerprint.empty()) {
        r.key_source = "pinned by the profile";
        return r;
    }
    // Only NVIDIA's CUDA repositories have a key per distro in the matrix.
    const auto* distro =
        Matrix::is_nvidia_cuda_repo(spec.url) ? matrix.distro(facts.os.repo_slug) : nullptr;
    if (distro == nullptr) {
        r.key_source = "none: the profile pins no key and gpuprov's version matrix has no NVIDIA "
                       "key for " +
                       r.url + " on " +
                       (facts.os.repo_slug.empty() ? "this OS" : facts.os.repo_slug);
        return r;
    }
    // NVIDIA's .repo file and install guides fetch the key from beside the repository
    // (nvidia-facts.md §2.1: gpgkey=.../repos/rhel9/x86_64/D42D0685.pub).
    if (distro->key_fingerprint.empty()) {
        // NVIDIA names this key by its file only (rhel10's CDF6BA43.pub); its fingerprint is not
        // confirmed in gpuprov's version matrix, and a key nobody vouched for is no trust anchor.
        r.key_source = "none: the profile pins no key, and NVIDIA's " + distro->key_file + " (" +
                       distro->slug +
                       ") is known to gpuprov's version matrix by its file name only; check that "
                       "key (gpg --show-keys " +
                       r.url + distro->key_file +
                       " after downloading it) and pin it: repositories." + spec.name +
                       ".key_url and .key_fingerprint, with host.os naming " + distro->os;
        return r;
    }
    r.key_url = r.url + distro->key_file;
    r.key_fingerprint = distro->key_fingerprint;
    r.matrix_key = true;
    r.key_source =
        "NVIDIA's " + distro->key_file + " (" + distro->slug + "), from gpuprov's version matrix";
    return r;
}

std::string default_repo_cache_dir(const System& sys) {
    if (sys.effective_uid() == 0) {
        return "/var/cache/gpuprov/repos";
    }
    if (auto xdg = sys.env("XDG_CACHE_HOME"); xdg && !xdg->empty() && xdg->front() == '/') {
        return *xdg + "/gpuprov/repos";
    }
    if (auto home = sys.env("HOME"); home && !home->empty()) {
        return *home + "/.cache/gpuprov/repos";
    }
    // No home at all (a stripped-down service account): a per-user path under /tmp would be
    // shared and guessable, so fail loudly at the first write instead of picking one.
    return "";
}

std::string repo_cache_subdir(const ResolvedRepo& repo) {
    std::string out;
    for (const char c : repo.name) {
        const bool safe =
            std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
        out += safe ? c : '_';
    }
    if (out.empty() || out == "." || out == "..") {
        out = "repo" + out;
    }
    return out;
}

} // namespace gpuprov
