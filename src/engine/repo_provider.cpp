#include <fmt/format.h>
#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/rollback.hpp>

namespace gpuprov {

// kIndexMaxAge (15 min) is long enough that plan and apply in one sitting share an index, short
// enough that apply pins versions apt will still find after its own update.
LiveRepoProvider::LiveRepoProvider(System& sys, const Profile& profile, const HostFacts& facts,
                                   const Matrix& matrix, std::string cache_dir,
                                   std::chrono::seconds max_age)
    : m_sys(sys), m_profile(profile), m_facts(facts), m_matrix(matrix),
      m_cache_dir(std::move(cache_dir)), m_max_age(max_age) {}

const RepoState& LiveRepoProvider::repo(const std::string& name) const {
    if (const auto it = m_loaded.find(name); it != m_loaded.end()) {
        return it->second;
    }
    RepoState state;
    const auto spec = m_profile.repositories.find(name);
    if (spec == m_profile.repositories.end()) {
        state.error = fmt::format("the profile defines no '{}' repository", name);
    } else if (m_facts.os.repo_slug.empty()) {
        state.error = "this OS has no NVIDIA repository";
    } else {
        state.repo = resolve_host_repo(spec->second, m_facts, m_matrix);
        if (state.repo.key_fingerprint.empty()) {
            state.error = fmt::format("no signing key to trust ({})", state.repo.key_source);
        }
    }
    if (state.error.empty()) {
        try {
            // rpm-md (repomd.xml + primary) on the rhel family, InRelease + Packages elsewhere.
            auto loaded = m_facts.os.family == "rhel"
                              ? load_rpm_package_index(m_sys, state.repo, m_cache_dir, m_max_age)
                              : load_package_index(m_sys, state.repo, m_cache_dir, m_max_age);
            state.index = std::move(loaded.index);
            state.key = std::move(loaded.key);
            state.error = std::move(loaded.error);
            state.inrelease = std::move(loaded.inrelease);
        } catch (const Error& e) {
            // An unwritable cache (a service account without a home) makes this repository
            // unavailable, not the whole plan.
            state.error = fmt::format("{} (cache {})", e.what(), m_cache_dir);
        }
    }
    if (state.index && !pins.empty()) {
        std::vector<PackageRecord> kept;
        for (const auto& r : state.index->records()) {
            const auto pin = pins.find(r.name);
            if (pin == pins.end()) {
                kept.push_back(r);
                continue;
            }
            m_pins_seen.insert(r.name);
            if (closure_version_matches(pin->second, r.version)) {
                m_pins_found.insert(r.name);
                kept.push_back(r);
            }
        }
        state.index = PackageIndex(std::move(kept));
    }
    return m_loaded.emplace(name, std::move(state)).first->second;
}

std::optional<std::string> LiveRepoProvider::known_inrelease(const std::string& name) const {
    if (const auto it = m_loaded.find(name); it != m_loaded.end()) {
        if (it->second.index) {
            return it->second.inrelease;
        }
    }
    const auto spec = m_profile.repositories.find(name);
    if (spec == m_profile.repositories.end() || m_facts.os.repo_slug.empty()) {
        return std::nullopt;
    }
    const auto resolved = resolve_host_repo(spec->second, m_facts, m_matrix);
    return cached_inrelease(m_sys, resolved, m_cache_dir);
}

std::vector<std::string> LiveRepoProvider::missing_pins() const {
    for (const auto& [name, spec] : m_profile.repositories) {
        (void)repo(name);
    }
    std::vector<std::string> out;
    for (const auto& [name, version] : pins) {
        if (m_pins_seen.count(name) != 0 && m_pins_found.count(name) == 0) {
            out.push_back(name + "=" + version);
        }
    }
    return out;
}

std::set<std::string> LiveRepoProvider::foreign_pins() const {
    for (const auto& [name, spec] : m_profile.repositories) {
        (void)repo(name);
    }
    std::set<std::string> out;
    for (const auto& [name, version] : pins) {
        if (m_pins_seen.count(name) == 0) {
            out.insert(name);
        }
    }
    return out;
}

PackageFileResult LiveRepoProvider::package_file(const std::string& repo,
                                                 const PackageRecord& record) const {
    const auto& state = this->repo(repo);
    if (!state.index) {
        return {.path = {}, .error = state.error};
    }
    try {
        return fetch_package_file(m_sys, state.repo, record, m_cache_dir);
    } catch (const Error& e) {
        return {.path = {}, .error = fmt::format("{} (cache {})", e.what(), m_cache_dir)};
    }
}

} // namespace gpuprov
