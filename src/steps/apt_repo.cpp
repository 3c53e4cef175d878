#include "apt_repo.hpp"

#include "../pkg/apt/sources.hpp"
#include "dnf_repo.hpp"

#include <cstring>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

AptRepoFiles apt_repo_files(const std::string& repo_name) {
    // Never /usr/share/keyrings/cuda-archive-keyring.gpg: NVIDIA's cuda-keyring package owns
    // that path (nvidia-facts.md §2.3); when it is installed its source is adopted instead
    // (apt_repo_placement).
    if (repo_name == "container-toolkit") {
        return {"/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg",
                "/etc/apt/sources.list.d/gpuprov-container-toolkit.sources"};
    }
    return {"/usr/share/keyrings/gpuprov-" + repo_name + ".gpg",
            "/etc/apt/sources.list.d/gpuprov-" + repo_name + ".sources"};
}

std::string deb822_stanza(const ResolvedRepo& repo, const std::string& keyring) {
    // NVIDIA's repositories are flat: suite "/" and no components. Docker's is a dists
    // repository: Suites: <codename>, Components: stable (Docker's install docs).
    if (repo.suite.empty()) {
        return fmt::format("Types: deb\nURIs: {}\nSuites: /\nSigned-By: {}\n", repo.url, keyring);
    }
    return fmt::format("Types: deb\nURIs: {}\nSuites: {}\nComponents: {}\nSigned-By: {}\n",
                       repo.url, repo.suite, repo.component, keyring);
}

std::string deb822_source(const ResolvedRepo& repo, const std::string& keyring,
                          const std::string& profile_name) {
    return fmt::format("# Managed by gpuprov (profile {}); local edits are replaced.\n{}",
                       profile_name, deb822_stanza(repo, keyring));
}

namespace {

constexpr const char* kAptLists = "/var/lib/apt/lists/";

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

AptRepoPlacement apt_repo_placement(const StepContext& ctx, const System& sys,
                                    const std::string& repo_name) {
    AptRepoPlacement out{apt_repo_files(repo_name), false, {}};
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        return out;
    }
    const auto repo = resolve_host_repo(spec->second, ctx.facts, ctx.matrix);
    const auto& url = repo.url;
    const auto foreign = pkg::foreign_apt_source(sys, url, out.files.source);
    if (!foreign) {
        return out;
    }
    const auto where = fmt::format("{}:{}", foreign->file, foreign->line);
    if (!foreign->weakening.empty()) {
        // apt would not check this source's signatures (or their age) at all: adopting it
        // would let plan and verify say the pinned key guards what nothing guards.
        out.conflict = fmt::format(
            "{} also configures {} with {}, which turns off apt's checks of it: the pinned key "
            "{} would guard nothing. Fix: remove {} from that entry (or delete {})",
            where, url, join(foreign->weakening, ", "), repo.key_fingerprint,
            join(foreign->weakening, ", "), foreign->file);
        return out;
    }
    if (!foreign->signed_by.empty() && foreign->signed_by.front() == '/' &&
        keyring_ok(sys, foreign->signed_by, repo.key_fingerprint)) {
        // Another package (NVIDIA's cuda-keyring) already trusts exactly the pinned key for
        // this URL: use its source and key rather than write a second entry apt would refuse.
        out.files = {foreign->signed_by, foreign->file};
        out.adopted = true;
        return out;
    }
    out.conflict = fmt::format(
        "{} (another package's source, e.g. NVIDIA's cuda-keyring) also configures {} with {}, "
        "which does not hold exactly the pinned key {}; apt refuses two Signed-By values for one "
        "source (\"Conflicting values set for option Signed-By\"). Fix: remove that source "
        "(apt-get purge cuda-keyring, or delete {}), or pin the key it holds",
        where, url,
        foreign->signed_by.empty() ? std::string("no Signed-By")
                                   : "Signed-By " + foreign->signed_by,
        repo.key_fingerprint, foreign->file);
    return out;
}

bool apt_repo_in_place(const StepContext& ctx, const System& sys, const std::string& repo_name) {
    if (ctx.facts.os.family == "rhel") {
        return dnf_repo_in_place(ctx, sys, repo_name);
    }
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        return false;
    }
    const auto placement = apt_repo_placement(ctx, sys, repo_name);
    if (!placement.conflict.empty()) {
        return false;
    }
    if (placement.adopted) {
        // The adopted source's key holds the pin; gpuprov's own entry must be gone.
        return !sys.exists(apt_repo_files(repo_name).source);
    }
    const auto& files = placement.files;
    const auto resolved = resolve_host_repo(spec->second, ctx.facts, ctx.matrix);
    return keyring_ok(sys, files.keyring, resolved.key_fingerprint) &&
           file_matches(sys,
                        {files.source, deb822_source(resolved, files.keyring, ctx.profile.name)});
}

AptListsState apt_lists_state(const StepContext& ctx, const System& sys,
                              const std::string& repo_name) {
    AptListsState st;
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        st.why = fmt::format("the profile defines no '{}' repository", repo_name);
        return st;
    }
    const auto repo = resolve_host_repo(spec->second, ctx.facts, ctx.matrix);
    // apt keeps each index file under its mangled URI: flat (Suites: /) URI + "InRelease" and
    // URI + "Packages", dists URI + "dists/SUITE/InRelease" and
    // URI + "dists/SUITE/COMPONENT/binary-ARCH/Packages".
    const auto dir = release_dir_url(repo);
    const auto name = packages_entry(repo);
    st.inrelease = kAptLists + apt_list_name(dir + "InRelease");
    const auto lists = sys.read_file(st.inrelease);
    if (!lists) {
        st.why = "apt has no index for this source yet (no " + st.inrelease + ")";
        return st;
    }
    const auto packages_name = apt_list_name(dir + name);
    const auto packages = kAptLists + packages_name;
    const auto entry = release_entry(*lists, name);
    const auto stamp = sys.stamp(packages);
    if (!stamp) {
        // With Acquire::GzipIndexes (Debian's container images) apt keeps it compressed.
        bool compressed = false;
        for (const auto& file : sys.list_dir(kAptLists)) {
            compressed = compressed || starts_with(file, packages_name + ".");
        }
        if (!compressed) {
            st.why =
                "apt's lists have this source's InRelease but not its Packages (" + packages + ")";
            return st;
        }
    } else if (entry && stamp->size != entry->size) {
        st.why = fmt::format("apt's {} is {} bytes, its InRelease says {}", packages, stamp->size,
                             entry->size);
        return st;
    }
    const auto known = ctx.repos.known_inrelease(repo_name);
    if (!known || *known == *lists) {
        // Nothing newer is known without a download: apt's own verified copy stands.
        st.current = true;
        return st;
    }
    const auto have = release_date(*lists);
    const auto want = release_date(*known);
    if (have && want && *have >= *want) {
        st.current = true; // apt already has a newer InRelease than gpuprov's copy
        return st;
    }
    st.why =
        !have || !want
            ? fmt::format("apt's {} differs from the InRelease gpuprov verified", st.inrelease)
            : fmt::format("apt's {} is older than the InRelease gpuprov verified", st.inrelease);
    return st;
}

void check_apt_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r) {
    // NVIDIA's or Docker's own URL with a pinned key its publisher does not sign it with for
    // this host's distro (NVIDIA: rhel D42D0685, Ubuntu/Debian 3bf863cc but debian13 8793F200 and
    // ubuntu2604 60DF8A40), decided before any download. A profile without a pin gets the
    // publisher's key for the distro (resolve_host_repo).
    if (const auto spec = ctx.profile.repositories.find(repo_name);
        spec != ctx.profile.repositories.end() && !spec->second.key_fingerprint.empty()) {
        const auto want = ctx.matrix.publisher_repo_key(spec->second.url, ctx.facts.os.repo_slug);
        if (want && want->fingerprint != spec->second.key_fingerprint) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format(
                "repositories.{}.key_fingerprint is {}, but {} signs {} with {} ({}, from "
                "gpuprov's version matrix); {}set key_fingerprint to {}, or point url at the "
                "mirror that signs with {}",
                repo_name, spec->second.key_fingerprint, want->publisher, spec->second.url,
                want->fingerprint, want->what,
                Matrix::is_nvidia_cuda_repo(spec->second.url)
                    ? "remove key_url and key_fingerprint to use NVIDIA's key for each host's "
                      "distro, "
                    : "",
                want->fingerprint, spec->second.key_fingerprint);
            return;
        }
    }
    if (ctx.facts.os.family == "rhel") {
        check_dnf_repo(ctx, sys, repo_name, r);
        return;
    }
    const auto placement = apt_repo_placement(ctx, sys, repo_name);
    if (!placement.conflict.empty()) {
        r.status = StepStatus::blocked;
        r.reason = placement.conflict;
        return;
    }
    if (placement.adopted) {
        const auto own = apt_repo_files(repo_name).source;
        if (sys.exists(own)) {
            r.status = StepStatus::pending;
            r.reason = fmt::format("{} already configures this repository with the pinned key "
                                   "({}); gpuprov's own {} would make apt refuse both",
                                   placement.files.source, placement.files.keyring, own);
            r.changes.push_back(
                Change{.kind = Change::Kind::file,
                       .target = own,
                       .detail = "remove (adopting " + placement.files.source + ")"});
        }
    }
    if (placement.adopted || apt_repo_in_place(ctx, sys, repo_name)) {
        const auto lists = apt_lists_state(ctx, sys, repo_name);
        if (lists.current) {
            return;
        }
        // Key and source are right but apt never read them (a run killed before its
        // `apt-get update`), or its lists are stale: the refresh alone makes it so.
        plan_source_refresh(ctx, placement.files.source, lists.why, r);
        return;
    }
    const auto& files = placement.files;
    plan_repository_write(
        ctx, sys, repo_name, files.keyring,
        [&](const RepoState& state) { return source_file(ctx, state, files); },
        "refresh this repository's index only", r);
}

namespace {

/// apt-get update exits 0 even when a source's index failed to download ("W: Failed to fetch"),
/// so the refresh is judged by apt's lists afterwards.
void refresh_and_check(const StepContext& ctx, System& sys, const PackageManager& pm,
                       const std::string& repo_name, const std::string& source) {
    run_checked(sys, pm.refresh_source(source));
    const auto lists = apt_lists_state(ctx, sys, repo_name);
    if (!lists.current) {
        throw HostError(fmt::format("repository '{}': apt-get update ran, but {} (a mirror in "
                                    "mid-sync? run apply again later)",
                                    repo_name, lists.why));
    }
}

} // namespace

void apply_apt_repo(const StepContext& ctx, System& sys, const std::string& repo_name) {
    if (ctx.facts.os.family == "rhel") {
        apply_dnf_repo(ctx, sys, repo_name);
        return;
    }
    const auto placement = apt_repo_placement(ctx, sys, repo_name);
    if (!placement.conflict.empty()) {
        throw HostError(fmt::format("repository '{}': {}", repo_name, placement.conflict));
    }
    if (placement.adopted) {
        // Its own entry goes; its own key stays (harmless, and never the package's file).
        sys.remove_file(apt_repo_files(repo_name).source);
    }
    if (placement.adopted || apt_repo_in_place(ctx, sys, repo_name)) {
        if (!apt_lists_state(ctx, sys, repo_name).current) {
            refresh_and_check(ctx, sys, *make_package_manager(ctx.facts), repo_name,
                              placement.files.source);
        }
        return;
    }
    const auto& state = ctx.repos.repo(repo_name);
    if (!state.key) {
        throw NetworkError(fmt::format("repository '{}': {}", repo_name, state.error));
    }
    const auto& files = placement.files;
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
        refresh_and_check(ctx, sys, *pm, repo_name, files.source);
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
