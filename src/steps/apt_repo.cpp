#include "apt_repo.hpp"

#include "dnf_repo.hpp"

#include <array>
#include <cstring>
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

constexpr const char* kAptLists = "/var/lib/apt/lists/";

/// InRelease's `Date:` as a sortable "YYYYMMDDhh:mm:ss" (RFC 2822, "Sat, 01 Jun 2024 12:00:00
/// UTC"; apt writes UTC); empty when absent or unreadable.
std::string release_date(std::string_view inrelease) {
    const auto text = clearsigned_text(inrelease);
    for (const auto& line : lines(text ? *text : std::string(inrelease))) {
        if (!starts_with(line, "Date:")) {
            continue;
        }
        std::vector<std::string> w;
        for (auto& word : split(trim(std::string_view(line).substr(5)), ' ')) {
            if (!word.empty()) {
                w.push_back(std::move(word));
            }
        }
        if (!w.empty() && w[0].back() == ',') {
            w.erase(w.begin()); // the weekday
        }
        static constexpr std::array<const char*, 12> kMonths{
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        if (w.size() < 4 || w[3].size() != 8) {
            return {};
        }
        const auto day = parse_int(w[0]);
        const auto year = parse_int(w[2]);
        for (std::size_t m = 0; m < kMonths.size(); ++m) {
            if (w[1] == kMonths[m] && day && year) {
                return fmt::format("{:04}{:02}{:02}{}", *year, m + 1, *day, w[3]);
            }
        }
        return {};
    }
    return {};
}

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
    if (ctx.facts.os.family == "rhel") {
        return dnf_repo_in_place(ctx, sys, repo_name);
    }
    const auto spec = ctx.profile.repositories.find(repo_name);
    if (spec == ctx.profile.repositories.end()) {
        return false;
    }
    const auto files = apt_repo_files(repo_name);
    const auto resolved = resolve_repo(spec->second, ctx.facts.os.repo_slug, ctx.facts.repo_arch,
                                       ctx.facts.pkg_arch, package_format(ctx.facts.os.family));
    return keyring_ok(sys, files.keyring, spec->second.key_fingerprint) &&
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
    const auto repo = resolve_repo(spec->second, ctx.facts.os.repo_slug, ctx.facts.repo_arch,
                                   ctx.facts.pkg_arch, package_format(ctx.facts.os.family));
    // NVIDIA's repositories are flat (Suites: /): apt fetches URI + "InRelease" and
    // URI + "Packages" and keeps each under its mangled URI.
    const auto prefix = apt_list_name(repo.url);
    st.inrelease = kAptLists + prefix + "InRelease";
    const auto lists = sys.read_file(st.inrelease);
    if (!lists) {
        st.why = "apt has no index for this source yet (no " + st.inrelease + ")";
        return st;
    }
    const auto packages = kAptLists + prefix + "Packages";
    const auto entry = release_entry(*lists, "Packages");
    const auto stamp = sys.stamp(packages);
    if (!stamp) {
        // With Acquire::GzipIndexes (Debian's container images) apt keeps it compressed.
        bool compressed = false;
        for (const auto& name : sys.list_dir(kAptLists)) {
            compressed = compressed || starts_with(name, prefix + "Packages.");
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
    if (!have.empty() && !want.empty() && have >= want) {
        st.current = true; // apt already has a newer InRelease than gpuprov's copy
        return st;
    }
    st.why =
        have.empty() || want.empty()
            ? fmt::format("apt's {} differs from the InRelease gpuprov verified", st.inrelease)
            : fmt::format("apt's {} is older than the InRelease gpuprov verified", st.inrelease);
    return st;
}

void check_apt_repo(const StepContext& ctx, const System& sys, const std::string& repo_name,
                    CheckResult& r) {
    // NVIDIA's own URL signed by another key: the profile's fingerprint is wrong for this
    // host's distro (rhel uses D42D0685, Ubuntu/Debian 3bf863cc), decided before any download.
    if (const auto spec = ctx.profile.repositories.find(repo_name);
        spec != ctx.profile.repositories.end()) {
        const auto want = ctx.matrix.nvidia_repo_key(spec->second.url, ctx.facts.os.repo_slug);
        if (want && want->fingerprint != spec->second.key_fingerprint) {
            r.status = StepStatus::blocked;
            r.reason = fmt::format(
                "repositories.{}.key_fingerprint is {}, but NVIDIA signs {} with {} ({}, from "
                "gpuprov's version matrix); set key_fingerprint to {}, or point url at the mirror "
                "that signs with {}",
                repo_name, spec->second.key_fingerprint, spec->second.url, want->fingerprint,
                want->what, want->fingerprint, spec->second.key_fingerprint);
            return;
        }
    }
    if (ctx.facts.os.family == "rhel") {
        check_dnf_repo(ctx, sys, repo_name, r);
        return;
    }
    if (apt_repo_in_place(ctx, sys, repo_name)) {
        const auto lists = apt_lists_state(ctx, sys, repo_name);
        if (lists.current) {
            return;
        }
        // Key and source are right but apt never read them (a run killed before its
        // `apt-get update`), or its lists are stale: the refresh alone makes it so.
        plan_source_refresh(ctx, apt_repo_files(repo_name).source, lists.why, r);
        return;
    }
    const auto files = apt_repo_files(repo_name);
    plan_repository_write(
        ctx, sys, repo_name, files.keyring,
        [&](const RepoState& state) { return source_file(ctx, state, files); },
        "refresh this repository's index only", r);
}

namespace {

/// apt-get update exits 0 even when a source's index failed to download ("W: Failed to fetch"),
/// so the refresh is judged by apt's lists afterwards.
void refresh_and_check(const StepContext& ctx, System& sys, const PackageManager& pm,
                       const std::string& repo_name) {
    run_checked(sys, pm.refresh_source(apt_repo_files(repo_name).source));
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
    if (apt_repo_in_place(ctx, sys, repo_name)) {
        if (!apt_lists_state(ctx, sys, repo_name).current) {
            refresh_and_check(ctx, sys, *make_package_manager(ctx.facts), repo_name);
        }
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
        refresh_and_check(ctx, sys, *pm, repo_name);
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
