#include "apt_repo.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

AptRepoFiles apt_repo_files(const std::string& repo_name) {
    if (repo_name == "cuda") {
        return {"/usr/share/keyrings/cuda-archive-keyring.gpg",
                "/etc/apt/sources.list.d/gpuprov-cuda.sources"};
    }
    if (repo_name == "container-toolkit") {
        return {"/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg",
                "/etc/apt/sources.list.d/gpuprov-container-toolkit.sources"};
    }
    return {"/usr/share/keyrings/gpuprov-" + repo_name + ".gpg",
            "/etc/apt/sources.list.d/gpuprov-" + repo_name + ".sources"};
}

std::string deb822_source(const ResolvedRepo& repo, const std::string& keyring,
                          const std::string& profile_name) {
    // NVIDIA's repositories are flat: suite "/" and no components.
    return fmt::format("# Managed by gpuprov (profile {}); local edits are replaced.\n"
                       "Types: deb\n"
                       "URIs: {}\n"
                       "Suites: /\n"
                       "Signed-By: {}\n",
                       profile_name, repo.url, keyring);
}

namespace {

bool keyring_ok(const System& sys, const std::string& path, const std::string& fingerprint) {
    const auto data = sys.read_file(path);
    if (!data) {
        return false;
    }
    const auto parsed = parse_openpgp_key(*data);
    return parsed.key && parsed.key->fingerprint == fingerprint;
}

ManagedFile source_file(const StepContext& ctx, const RepoState& state, const AptRepoFiles& files) {
    return {files.source, deb822_source(state.repo, files.keyring, ctx.profile.name)};
}

} // namespace

bool apt_repo_in_place(const StepContext& ctx, const System& sys, const std::string& repo_name) {
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        return false;
    }
    const auto files = apt_repo_files(repo_name);
    const auto resolved =
        resolve_repo(spec->second, ctx.facts.os.repo_slug, ctx.facts.repo_arch, ctx.facts.pkg_arch);
    return keyring_ok(sys, files.keyring, spec->second.key_fingerprint) &&
           file_matches(sys,
                        {files.source, deb822_source(resolved, files.keyring, ctx.profile.name)});
}

void check_apt_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r) {
    if (apt_repo_in_place(ctx, sys, repo_name)) {
        return;
    }
    const auto& state = ctx.repos.repo(repo_name);
    if (!state.key) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("repository '{}': {}", repo_name,
                               state.error.empty() ? "not defined in the profile" : state.error);
        return;
    }
    const auto files = apt_repo_files(repo_name);
    if (r.status == StepStatus::satisfied) {
        r.status = StepStatus::pending;
    }
    r.changes.push_back(Change{.kind = Change::Kind::file,
                               .target = files.keyring,
                               .detail = fmt::format("OpenPGP key {} from {} (fingerprint checked)",
                                                     state.key->fingerprint, state.repo.key_url)});
    r.changes.push_back(file_change(sys, source_file(ctx, state, files)));
    r.changes.push_back(
        command_change(make_package_manager(ctx.facts)->refresh_source(files.source),
                       "refresh this repository's index only"));
}

void apply_apt_repo(const StepContext& ctx, System& sys, const std::string& repo_name) {
    if (apt_repo_in_place(ctx, sys, repo_name)) {
        return;
    }
    const auto& state = ctx.repos.repo(repo_name);
    if (!state.key) {
        throw NetworkError(fmt::format("repository '{}': {}", repo_name, state.error));
    }
    const auto files = apt_repo_files(repo_name);
    const auto pm = make_package_manager(ctx.facts);
    const ManagedFile key{files.keyring, state.key->binary, 0644};
    const auto source = source_file(ctx, state, files);
    // Only what this run changes is put back on failure: write_managed leaves a file that is
    // already right untouched, so its backup marker may name an older run's backup.
    const bool key_changed = !file_matches(sys, key);
    const bool source_changed = !file_matches(sys, source);
    // Key first: a source without its key would break every later `apt-get update`.
    write_managed(sys, key);
    try {
        write_managed(sys, source);
        run_checked(sys, pm->refresh_source(files.source));
    } catch (const Error&) {
        if (source_changed) {
            restore_managed(sys, files.source);
        }
        if (key_changed) {
            restore_managed(sys, files.keyring);
        }
        throw;
    }
}

} // namespace gpuprov::steps
