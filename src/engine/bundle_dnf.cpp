// The dnf half of `gpuprov bundle` (docs/air-gapped.md): dnf's own downloader in a private
// installroot, every .rpm checked against the primary.xml of a signed repomd.xml, repositories
// made by createrepo_c (with the profile repository's module streams) whose repomd.xml the
// bundle key signs. The writer around it (key, manifest, tar) is bundle_build.cpp's.
#include "bundle_internal.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/digest.hpp>
#include <gpuprov/dnf_download.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <map>
#include <set>

namespace gpuprov {

using bundle_detail::must;

namespace {

constexpr const char* kRepoDir = "/etc/yum.repos.d";

std::string os_release_value(const System& sys, std::string_view key) {
    for (const auto* path : {"/etc/os-release", "/usr/lib/os-release"}) {
        const auto text = sys.read_file(path);
        if (!text) {
            continue;
        }
        for (const auto& line : lines(*text)) {
            if (starts_with(line, key) && line.size() > key.size() && line[key.size()] == '=') {
                auto v = std::string(trim(std::string_view(line).substr(key.size() + 1)));
                if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) {
                    v = v.substr(1, v.size() - 2);
                }
                return v;
            }
        }
        return {};
    }
    return {};
}

// The distribution's enabled repositories (not gpuprov's own .repo files), each loaded as the
// profile's are: its gpgkey file's key, repomd.xml verified against its detached signature,
// primary.xml by the checksum repomd.xml lists. Those that cannot be verified are named.
struct DistroIndexes {
    std::vector<std::pair<std::string, IndexLoadResult>> loaded; ///< by repository id
    std::vector<std::string> unverified;                         ///< "id: why"
};

DistroIndexes distro_indexes(System& sys, const std::string& cache, const std::string& releasever,
                             const std::string& basearch) {
    DistroIndexes out;
    auto names = sys.list_dir(kRepoDir);
    std::sort(names.begin(), names.end());
    for (const auto& file : names) {
        if (!std::string_view(file).ends_with(".repo") || starts_with(file, "gpuprov-")) {
            continue;
        }
        for (const auto& s :
             parse_yum_repo_file(sys.read_file(std::string(kRepoDir) + "/" + file).value_or(""))) {
            if (!s.enabled) {
                continue;
            }
            if (s.baseurls.empty()) {
                out.unverified.push_back(
                    fmt::format("{}: no baseurl ({}; give it a baseurl to bundle from it)", s.id,
                                s.has_mirrorlist ? "a mirrorlist or metalink only" : "none set"));
                continue;
            }
            const auto key_url = s.gpgkeys.empty()
                                     ? std::string()
                                     : expand_yum_vars(s.gpgkeys.front(), releasever, basearch);
            if (!starts_with(key_url, "file:///")) {
                out.unverified.push_back(
                    fmt::format("{}: its gpgkey is not a local file:// key ({})", s.id,
                                key_url.empty() ? "none" : key_url));
                continue;
            }
            const auto parsed =
                parse_openpgp_key(sys.read_file(key_url.substr(7)).value_or(std::string()));
            if (!parsed.key) {
                out.unverified.push_back(
                    fmt::format("{}: its key {} is unusable: {}", s.id, key_url, parsed.error));
                continue;
            }
            ResolvedRepo repo;
            repo.name = "distribution-" + s.id;
            repo.url = expand_yum_vars(s.baseurls.front(), releasever, basearch);
            if (repo.url.back() != '/') {
                repo.url += '/';
            }
            repo.key_url = key_url;
            repo.key_fingerprint = parsed.key->fingerprint;
            repo.key_source = "the distribution's " + file;
            auto r = load_rpm_package_index(sys, repo, cache, std::chrono::seconds(0));
            if (!r.index) {
                out.unverified.push_back(fmt::format("{}: {}", s.id, r.error));
                continue;
            }
            out.loaded.emplace_back(s.id, std::move(r));
        }
    }
    return out;
}

// The installroot's rpm database: a copy of this host's, less every package a repository
// offers. A fresh host of the target has at least what no repository can give it (the
// installed base the image brought); everything a repository has is downloaded when the
// closure needs it, so the bundle does not rely on this builder's extras.
void fresh_rpmdb(System& sys, const std::string& root, const std::set<std::string>& offered) {
    auto dbpath = std::string(trim(
        sys.query({.argv = {"rpm", "--eval", "%{_dbpath}"}, .timeout = std::chrono::seconds(30)})
            .out));
    if (dbpath.empty() || dbpath.front() != '/' || dbpath.find("%{") != std::string::npos) {
        dbpath = "/var/lib/rpm";
    }
    sys.make_dirs(root + dbpath);
    (void)must(sys, {.argv = {"cp", "-a", "--", dbpath + "/.", root + dbpath + "/"}},
               "copying the rpm database into the bundle's installroot");
    std::vector<std::string> erase;
    for (const auto& p : rpm_database(sys).records()) {
        if (offered.count(p.name) != 0 &&
            std::find(erase.begin(), erase.end(), p.name) == erase.end()) {
            erase.push_back(p.name);
        }
    }
    if (erase.empty()) {
        return;
    }
    std::vector<std::string> argv{"rpm",         "--root",       root,
                                  "--erase",     "--justdb",     "--nodeps",
                                  "--noscripts", "--notriggers", "--allmatches"};
    argv.insert(argv.end(), erase.begin(), erase.end());
    (void)must(sys, {.argv = argv, .timeout = std::chrono::minutes(10)},
               "making the installroot's rpm database a fresh host's");
}

// The profile repository's module streams (repomd.xml's "modules" entry), fetched and checked
// against the SHA-256 and size the verified repomd.xml lists; empty when it has none.
std::string module_metadata(System& sys, const RepoState& state) {
    const auto entry = repomd_entry(state.inrelease, "modules");
    if (!entry) {
        return {};
    }
    const auto url = state.repo.url + entry->location;
    std::string body;
    if (starts_with(url, "file://")) {
        body = sys.read_file(url.substr(7)).value_or("");
    } else {
        auto r = sys.fetch({.url = url});
        if (!r.ok) {
            throw NetworkError(fmt::format("cannot fetch {}: {}", url, r.error));
        }
        body = std::move(r.body);
    }
    if (body.size() != entry->size || sha256_hex(body) != entry->sha256) {
        throw Error(fmt::format("{} does not match the SHA-256 and size its signed repomd.xml "
                                "lists; no bundle was written",
                                url));
    }
    if (std::string_view(entry->location).ends_with(".gz")) {
        auto plain = gunzip(body);
        if (!plain) {
            throw Error(fmt::format("{} is not a readable gzip file", url));
        }
        return *plain;
    }
    if (!std::string_view(entry->location).ends_with(".yaml")) {
        throw Error(fmt::format("{}: only plain or gzip module metadata is read", url));
    }
    return body;
}

} // namespace

namespace bundle_detail {

void VerifiedRecords::add(const PackageIndex& index, const std::string& repo) {
    for (const auto& r : index.records()) {
        m_names.insert(r.name);
        const auto size = parse_int(r.size);
        const auto sha = to_lower(r.sha256);
        if (sha.size() == 64 && size && *size >= 0 && m_by_sha.count(sha) == 0) {
            m_by_sha.emplace(sha, Rec{repo, static_cast<std::uint64_t>(*size)});
        }
    }
}

std::string VerifiedRecords::check(const std::string& file, std::string_view data,
                                   const std::string& why_unverified) const {
    const auto sha = sha256_hex(data);
    const auto it = m_by_sha.find(sha);
    if (it == m_by_sha.end()) {
        throw Error(fmt::format(
            "{} (SHA-256 {}) matches no record of a verified index; no "
            "bundle was written{}",
            file, sha,
            why_unverified.empty() ? std::string() : " (not verified: " + why_unverified + ")"));
    }
    if (it->second.size != data.size()) {
        throw Error(fmt::format("{} is {} bytes, its signed index says {}; no bundle was written",
                                file, data.size(), it->second.size));
    }
    return it->second.repo;
}

void fill_dnf(System& sys, const StepContext& ctx, const Plan& plan, const BundleBuildOptions& opt,
              const BuildArea& area, BundleManifest& m, BundleBuildResult& result) {
    const auto& tree = area.tree;
    const auto& repos = area.repos;
    const auto root = area.work + "/installroot";
    const auto rpms = area.work + "/rpms";
    clear_dir(sys, root);
    clear_dir(sys, rpms);
    const auto releasever = ctx.facts.os.version_id.substr(0, ctx.facts.os.version_id.find('.'));
    const auto platform = os_release_value(sys, "PLATFORM_ID");

    // Every verified index the files may come from: the profile's (gpuprov verified them this
    // run) and the distribution's (verified here the same way), with their signed repomd.xml
    // and its signature kept as provenance.
    VerifiedRecords records;
    auto provenance = [&](const std::string& label, const std::string& rel_dir,
                          const std::string& repomd, const std::string& cache_dir) {
        sys.make_dirs(tree + "/" + rel_dir);
        sys.write_file_atomic(tree + "/" + rel_dir + "/repomd.xml", repomd, 0644);
        sys.write_file_atomic(tree + "/" + rel_dir + "/repomd.xml.asc",
                              sys.read_file(cache_dir + "/repomd.xml.asc").value_or(""), 0644);
        m.provenance.emplace_back(label, rel_dir + "/repomd.xml");
        m.provenance.emplace_back(label + ":signature", rel_dir + "/repomd.xml.asc");
    };
    for (const auto& name : repos) {
        const auto& state = ctx.repos.repo(name);
        records.add(*state.index, name);
        provenance(name, "provenance/" + name, state.inrelease,
                   opt.cache_dir + "/" + repo_cache_subdir(state.repo));
        // The key the packages are signed with, as the profile pinned it: rpm checks it on the
        // host (gpgcheck=1); the bundle key signs only the repodata.
        if (!state.key) {
            throw Error(fmt::format("repository {}: no verified key", name));
        }
        sys.make_dirs(tree + "/keys");
        sys.write_file_atomic(tree + "/keys/" + name + ".gpg", state.key->binary, 0644);
        m.package_keys.emplace_back(name, "keys/" + name + ".gpg");
    }
    const auto distro_cache = area.work + "/distribution-index";
    const auto distro = distro_indexes(sys, distro_cache, releasever, ctx.facts.arch);
    for (const auto& [id, r] : distro.loaded) {
        records.add(*r.index, "");
        ResolvedRepo named;
        named.name = "distribution-" + id;
        provenance("distribution:" + id, "provenance/distribution/" + id, r.inrelease,
                   distro_cache + "/" + repo_cache_subdir(named));
    }

    fresh_rpmdb(sys, root, records.names());
    SimulationRequest req;
    req.installs = bundle_requests(plan, opt.kernels, "rhel");
    for (const auto& t : plan.transactions) {
        for (const auto& mod : t.transaction.modules) {
            if (std::find(req.modules.begin(), req.modules.end(), mod) == req.modules.end()) {
                req.modules.push_back(mod);
            }
        }
    }
    req.scratch_dir = area.work + "/dnf-view";
    req.repos = simulated_repos(ctx, sys, opt.cache_dir);
    const auto t = dnf_download(
        sys, req,
        {.installroot = root, .destdir = rpms, .releasever = releasever, .platform_id = platform});
    if (!t.error.empty()) {
        throw Error("the closure could not be downloaded: " + t.error);
    }

    for (const auto& name : repos) {
        sys.make_dirs(tree + "/" + bundle_repo_dir(name));
    }
    auto files = sys.list_dir(rpms);
    std::sort(files.begin(), files.end());
    for (const auto& base : files) {
        if (!std::string_view(base).ends_with(".rpm")) {
            continue;
        }
        const auto data = sys.read_file(rpms + "/" + base);
        if (!data) {
            throw Error("cannot read the downloaded " + base);
        }
        const auto from = records.check(
            base, *data, distro.unverified.empty() ? std::string() : join(distro.unverified, "; "));
        // The distribution's packages travel in the first repository (cuda's), as on apt.
        const auto& repo = from.empty() ? repos.front() : from;
        sys.write_file_atomic(tree + "/" + bundle_repo_dir(repo) + base, *data, 0644);
        ++result.packages;
        result.bytes += data->size();
    }
    if (result.packages == 0) {
        throw Error("dnf downloaded nothing for the closure; no bundle was written");
    }

    for (const auto& name : repos) {
        const auto dir = tree + "/" + bundle_repo_dir(name);
        // --simple-md-filenames: names the manifest can list without the build's hashes in
        // them; no sqlite databases (dnf reads the XML).
        (void)must(
            sys,
            {.argv = {"createrepo_c", "--quiet", "--simple-md-filenames", "--no-database", dir},
             .timeout = std::chrono::minutes(30)},
            "writing " + name + "'s repository metadata");
        if (const auto modules = module_metadata(sys, ctx.repos.repo(name)); !modules.empty()) {
            const auto file = area.work + "/modules-" + name + "/modules.yaml";
            sys.make_dirs(area.work + "/modules-" + name);
            sys.write_file_atomic(file, modules, 0644);
            (void)must(sys,
                       {.argv = {"modifyrepo_c", "--mdtype=modules", "--simple-md-filenames",
                                 "--no-compress", file, dir + "repodata"}},
                       "adding " + name + "'s module streams");
        }
        detach_sign(sys, area.key_home, area.fingerprint, dir + "repodata/repomd.xml");
    }
}

} // namespace bundle_detail

} // namespace gpuprov
