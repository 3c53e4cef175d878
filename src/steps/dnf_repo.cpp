#include "dnf_repo.hpp"

#include <fmt/format.h>
#include <gpuprov/dnf_download.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

DnfRepoFiles dnf_repo_files(const std::string& repo_name) {
    const auto id = "gpuprov-" + repo_name;
    return {"/etc/pki/rpm-gpg/" + id + ".asc", "/etc/yum.repos.d/" + id + ".repo", id,
            "/etc/pki/rpm-gpg/" + id + "-packages.asc"};
}

std::string dnf_repo_text(const ResolvedRepo& repo, const std::string& id,
                          const std::string& key_path, const std::string& profile_name,
                          const std::string& package_key_path) {
    // yum.conf(5)/dnf.conf(5) repo options; baseurl as NVIDIA's cuda-rhel9.repo spells it.
    return fmt::format("# Managed by gpuprov (profile {}); local edits are replaced.\n"
                       "[{}]\n"
                       "name={}\n"
                       "baseurl={}\n"
                       "enabled=1\n"
                       "gpgcheck=1\n"
                       "repo_gpgcheck=1\n"
                       "gpgkey=file://{}{}\n",
                       profile_name, id, id, repo.url, key_path,
                       // dnf.conf(5): gpgkey is a list; repo_gpgcheck and gpgcheck both use it.
                       package_key_path.empty() ? std::string() : " file://" + package_key_path);
}

const DnfPackageKey* dnf_bundle_package_key(const std::string& repo_name) {
    const auto& keys = dnf_package_keys();
    const auto it = keys.find(repo_name);
    return it == keys.end() ? nullptr : &it->second;
}

std::string dnf_package_key_path(const std::string& repo_name) {
    return dnf_bundle_package_key(repo_name) ? dnf_repo_files(repo_name).package_key
                                             : std::string();
}

namespace {

std::optional<ResolvedRepo> resolved(const StepContext& ctx, const std::string& repo_name) {
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        return std::nullopt;
    }
    return resolve_host_repo(spec->second, ctx.facts, ctx.matrix);
}

bool key_ok(const System& sys, const std::string& path, const std::string& fingerprint) {
    const auto data = sys.read_file(path);
    if (!data) {
        return false;
    }
    const auto parsed = parse_openpgp_key(*data);
    return parsed.key && parsed.key->fingerprint == fingerprint;
}

/// dnf.conf's cachedir (dnf.conf(5); default /var/cache/dnf for root).
std::string dnf_cachedir(const System& sys) {
    if (const auto conf = sys.read_file("/etc/dnf/dnf.conf")) {
        for (const auto& raw : lines(*conf)) {
            const auto line = trim(raw);
            if (starts_with(line, "cachedir")) {
                const auto eq = line.find('=');
                if (eq != std::string_view::npos && trim(line.substr(0, eq)) == "cachedir") {
                    return std::string(trim(line.substr(eq + 1)));
                }
            }
        }
    }
    return "/var/cache/dnf";
}

} // namespace

DnfCacheState dnf_cache_state(const StepContext& ctx, const System& sys,
                              const std::string& repo_name) {
    DnfCacheState st;
    const auto repo = resolved(ctx, repo_name);
    if (!repo) {
        st.why = fmt::format("the profile defines no '{}' repository", repo_name);
        return st;
    }
    const auto files = dnf_repo_files(repo_name);
    st.repomd =
        dnf_cachedir(sys) + "/" + dnf_cache_dir_name(files.id, repo->url) + "/repodata/repomd.xml";
    const auto have = sys.read_file(st.repomd);
    if (!have) {
        st.why = "dnf has no metadata for this repository yet (no " + st.repomd + ")";
        return st;
    }
    const auto known = ctx.repos.known_inrelease(repo_name);
    if (!known || *known == *have) {
        // Nothing newer is known without a download: dnf's own verified copy stands.
        st.current = true;
        return st;
    }
    const auto have_rev = repomd_revision(*have);
    const auto want_rev = repomd_revision(*known);
    if (have_rev && want_rev && *have_rev >= *want_rev) {
        st.current = true;
        return st;
    }
    st.why = have_rev && want_rev
                 ? fmt::format("dnf's {} (revision {}) is older than the repomd.xml gpuprov "
                               "verified (revision {})",
                               st.repomd, *have_rev, *want_rev)
                 : fmt::format("dnf's {} differs from the repomd.xml gpuprov verified", st.repomd);
    return st;
}

bool dnf_repo_in_place(const StepContext& ctx, const System& sys, const std::string& repo_name) {
    const auto repo = resolved(ctx, repo_name);
    if (!repo) {
        return false;
    }
    const auto files = dnf_repo_files(repo_name);
    const auto* pkey = dnf_bundle_package_key(repo_name);
    return key_ok(sys, files.key, repo->key_fingerprint) &&
           (pkey == nullptr || key_ok(sys, files.package_key, pkey->fingerprint)) &&
           file_matches(sys,
                        {files.repo, dnf_repo_text(*repo, files.id, files.key, ctx.profile.name,
                                                   dnf_package_key_path(repo_name))});
}

void check_dnf_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r) {
    const auto files = dnf_repo_files(repo_name);
    if (dnf_repo_in_place(ctx, sys, repo_name)) {
        const auto cache = dnf_cache_state(ctx, sys, repo_name);
        if (cache.current) {
            return;
        }
        // Key and .repo are right but dnf never read them (a run killed before its makecache,
        // or `dnf clean all`): the refresh alone makes it so.
        plan_source_refresh(ctx, files.repo, cache.why, r);
        return;
    }
    plan_repository_write(
        ctx, sys, repo_name, files.key,
        [&](const RepoState& state) {
            return ManagedFile{files.repo,
                               dnf_repo_text(state.repo, files.id, files.key, ctx.profile.name,
                                             dnf_package_key_path(repo_name))};
        },
        "refresh this repository's metadata only", r);
    if (const auto* pkey = dnf_bundle_package_key(repo_name);
        pkey != nullptr && r.status != StepStatus::blocked) {
        r.changes.push_back(Change{.kind = Change::Kind::file,
                                   .target = files.package_key,
                                   .detail = fmt::format("OpenPGP key {} the packages are signed "
                                                         "with, from {} (fingerprint checked)",
                                                         pkey->fingerprint, pkey->file)});
    }
}

void apply_dnf_repo(const StepContext& ctx, System& sys, const std::string& repo_name) {
    if (dnf_repo_in_place(ctx, sys, repo_name)) {
        if (!dnf_cache_state(ctx, sys, repo_name).current) {
            run_checked(sys, make_package_manager(ctx.facts)->refresh_source(
                                 dnf_repo_files(repo_name).repo));
        }
        return;
    }
    const auto& state = ctx.repos.repo(repo_name);
    if (!state.key) {
        throw NetworkError(fmt::format("repository '{}': {}", repo_name, state.error));
    }
    const auto files = dnf_repo_files(repo_name);
    const ManagedFile key{files.key, armor_public_key(state.key->binary), 0644};
    const ManagedFile repo{files.repo,
                           dnf_repo_text(state.repo, files.id, files.key, ctx.profile.name,
                                         dnf_package_key_path(repo_name)),
                           0644};
    const bool key_changed = !file_matches(sys, key);
    const bool repo_changed = !file_matches(sys, repo);
    std::optional<ManagedFile> package_key;
    if (const auto* pkey = dnf_bundle_package_key(repo_name)) {
        // An offline bundle's: the key rpm checks the packages' signatures with (gpgcheck=1),
        // the profile's pin, carried in the bundle and checked again here.
        const auto data = sys.read_file(pkey->file);
        const auto parsed = data ? parse_openpgp_key(*data) : KeyParseResult{};
        if (!parsed.key || parsed.key->fingerprint != pkey->fingerprint) {
            throw Error(fmt::format("repository '{}': the package key {} is not {}", repo_name,
                                    pkey->file, pkey->fingerprint));
        }
        package_key = ManagedFile{files.package_key, armor_public_key(parsed.key->binary), 0644};
    }
    const bool package_key_changed = package_key && !file_matches(sys, *package_key);
    // Keys first: a .repo whose gpgkey is missing fails every later dnf command.
    write_managed(sys, key);
    if (package_key) {
        write_managed(sys, *package_key);
    }
    try {
        write_managed(sys, repo);
        run_checked(sys, make_package_manager(ctx.facts)->refresh_source(files.repo));
    } catch (const Error&) {
        if (repo_changed) {
            restore_managed(sys, files.repo);
        }
        if (key_changed) {
            restore_managed(sys, files.key);
        }
        if (package_key_changed) {
            restore_managed(sys, files.package_key);
        }
        throw;
    }
}

} // namespace gpuprov::steps
