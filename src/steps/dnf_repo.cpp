#include "dnf_repo.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>

namespace gpuprov::steps {

DnfRepoFiles dnf_repo_files(const std::string& repo_name) {
    const auto id = "gpuprov-" + repo_name;
    return {"/etc/pki/rpm-gpg/" + id + ".asc", "/etc/yum.repos.d/" + id + ".repo", id};
}

std::string dnf_repo_text(const ResolvedRepo& repo, const std::string& id,
                          const std::string& key_path, const std::string& profile_name) {
    // yum.conf(5)/dnf.conf(5) repo options; baseurl as NVIDIA's cuda-rhel9.repo spells it.
    return fmt::format("# Managed by gpuprov (profile {}); local edits are replaced.\n"
                       "[{}]\n"
                       "name={}\n"
                       "baseurl={}\n"
                       "enabled=1\n"
                       "gpgcheck=1\n"
                       "repo_gpgcheck=1\n"
                       "gpgkey=file://{}\n",
                       profile_name, id, id, repo.url, key_path);
}

namespace {

std::optional<ResolvedRepo> resolved(const StepContext& ctx, const std::string& repo_name) {
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        return std::nullopt;
    }
    return resolve_repo(spec->second, ctx.facts.os.repo_slug, ctx.facts.repo_arch,
                        ctx.facts.pkg_arch);
}

bool key_ok(const System& sys, const std::string& path, const std::string& fingerprint) {
    const auto data = sys.read_file(path);
    if (!data) {
        return false;
    }
    const auto parsed = parse_openpgp_key(*data);
    return parsed.key && parsed.key->fingerprint == fingerprint;
}

} // namespace

bool dnf_repo_in_place(const StepContext& ctx, const System& sys, const std::string& repo_name) {
    const auto repo = resolved(ctx, repo_name);
    if (!repo) {
        return false;
    }
    const auto files = dnf_repo_files(repo_name);
    return key_ok(sys, files.key, repo->key_fingerprint) &&
           file_matches(sys,
                        {files.repo, dnf_repo_text(*repo, files.id, files.key, ctx.profile.name)});
}

void check_dnf_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r) {
    if (dnf_repo_in_place(ctx, sys, repo_name)) {
        return;
    }
    const auto files = dnf_repo_files(repo_name);
    plan_repository_write(
        ctx, sys, repo_name, files.key,
        [&](const RepoState& state) {
            return ManagedFile{files.repo,
                               dnf_repo_text(state.repo, files.id, files.key, ctx.profile.name)};
        },
        "refresh this repository's metadata only", r);
}

void apply_dnf_repo(const StepContext& ctx, System& sys, const std::string& repo_name) {
    if (dnf_repo_in_place(ctx, sys, repo_name)) {
        return;
    }
    const auto& state = ctx.repos.repo(repo_name);
    if (!state.key) {
        throw NetworkError(fmt::format("repository '{}': {}", repo_name, state.error));
    }
    const auto files = dnf_repo_files(repo_name);
    const ManagedFile key{files.key, armor_public_key(state.key->binary), 0644};
    const ManagedFile repo{files.repo,
                           dnf_repo_text(state.repo, files.id, files.key, ctx.profile.name), 0644};
    const bool key_changed = !file_matches(sys, key);
    const bool repo_changed = !file_matches(sys, repo);
    // Key first: a .repo whose gpgkey is missing fails every later dnf command.
    write_managed(sys, key);
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
        throw;
    }
}

} // namespace gpuprov::steps
