// The apt half of `gpuprov bundle` (docs/air-gapped.md): apt's own downloader on a fresh host's
// dpkg status, every .deb checked against a signed index, flat repositories signed by the bundle
// key. The writer around it (key, manifest, tar) is bundle_build.cpp's.
#include "bundle_internal.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <fmt/format.h>
#include <gpuprov/apt_download.hpp>
#include <gpuprov/digest.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <map>
#include <set>

namespace gpuprov {

namespace {

constexpr const char* kAptLists = "/var/lib/apt/lists";

// deb822 paragraphs, as dpkg's status and apt's Packages hold them.
std::vector<std::string> paragraphs(std::string_view text) {
    std::vector<std::string> out;
    std::string cur;
    for (const auto& line : lines(text)) {
        if (trim(line).empty()) {
            if (!cur.empty()) {
                out.push_back(std::move(cur));
                cur.clear();
            }
            continue;
        }
        cur += line + "\n";
    }
    if (!cur.empty()) {
        out.push_back(std::move(cur));
    }
    return out;
}

std::string field(std::string_view para, std::string_view name) {
    for (const auto& line : lines(para)) {
        if (starts_with(line, name) && line.size() > name.size() && line[name.size()] == ':') {
            return std::string(trim(std::string_view(line).substr(name.size() + 1)));
        }
    }
    return {};
}

// One record of a signed index: where it came from and what its file must be.
struct Stanza {
    std::string text;
    std::string repo; ///< profile repository; empty for the distribution's
    std::uint64_t size = 0;
};

void add_stanzas(std::map<std::string, Stanza>& by_sha, std::string_view packages,
                 const std::string& repo) {
    for (auto& p : paragraphs(packages)) {
        const auto sha = to_lower(field(p, "SHA256"));
        const auto size = parse_int(field(p, "Size"));
        if (sha.size() == 64 && size && by_sha.count(sha) == 0) {
            by_sha.emplace(sha, Stanza{std::move(p), repo, static_cast<std::uint64_t>(*size)});
        }
    }
}

std::string with_filename(std::string_view stanza, const std::string& base) {
    std::string out;
    for (const auto& line : lines(stanza)) {
        out += starts_with(line, "Filename:") ? "Filename: ./" + base : line;
        out += "\n";
    }
    return out;
}

// apt's Release date ("Sat, 05 Dec 2026 09:41:00 UTC"), in English whatever the locale.
std::string release_date_text(std::chrono::system_clock::time_point now) {
    static constexpr std::array<const char*, 7> kDays{"Sun", "Mon", "Tue", "Wed",
                                                      "Thu", "Fri", "Sat"};
    static constexpr std::array<const char*, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    return fmt::format("{}, {:02} {} {} {:02}:{:02}:{:02} UTC", kDays.at(tm.tm_wday), tm.tm_mday,
                       kMonths.at(tm.tm_mon), tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string flat_release(const std::string& packages, const std::string& repo,
                         std::chrono::system_clock::time_point now) {
    return fmt::format("Origin: gpuprov bundle\nLabel: gpuprov bundle ({})\nDate: {}\nSHA256:\n "
                       "{} {} Packages\n",
                       repo, release_date_text(now), sha256_hex(packages), packages.size());
}

} // namespace

std::string fresh_host_status(std::string_view status) {
    // Essential and required packages, and what they depend on as installed (Depends and
    // Pre-Depends, every alternative, virtual names through Provides): a database apt finds
    // consistent, so it downloads everything else the closure needs.
    std::map<std::string, std::string> by_name;
    std::map<std::string, std::vector<std::string>> providers;
    std::vector<std::string> todo;
    for (auto& p : paragraphs(status)) {
        const auto name = field(p, "Package");
        if (name.empty() || field(p, "Status").find(" installed") == std::string::npos) {
            continue;
        }
        for (const auto& v : split(field(p, "Provides"), ',')) {
            const auto t = trim(v);
            if (t.empty()) {
                continue;
            }
            providers[std::string(t.substr(0, t.find_first_of(" (")))].push_back(name);
        }
        if (field(p, "Essential") == "yes" || field(p, "Priority") == "required") {
            todo.push_back(name);
        }
        by_name[name] = std::move(p);
    }
    std::set<std::string> keep;
    while (!todo.empty()) {
        const auto name = todo.back();
        todo.pop_back();
        const auto it = by_name.find(name);
        if (it == by_name.end() || !keep.insert(name).second) {
            continue;
        }
        for (const auto* f : {"Depends", "Pre-Depends"}) {
            for (const auto& clause : split(field(it->second, f), ',')) {
                for (const auto& alt : split(clause, '|')) {
                    auto dep = std::string(trim(alt));
                    dep = dep.substr(0, dep.find_first_of(" (:"));
                    if (dep.empty()) {
                        continue;
                    }
                    todo.push_back(dep);
                    for (const auto& p : providers[dep]) {
                        todo.push_back(p);
                    }
                }
            }
        }
    }
    std::string out;
    for (const auto& name : keep) {
        out += by_name[name] + "\n";
    }
    return out;
}

namespace bundle_detail {

void fill_apt(System& sys, const StepContext& ctx, const Plan& plan, const BundleBuildOptions& opt,
              const BuildArea& area, BundleManifest& m, BundleBuildResult& result) {
    // The fresh host's dpkg database and apt's download directory, in the work area.
    const auto& work = area.work;
    const auto& tree = area.tree;
    const auto& repos = area.repos;
    const auto archives = work + "/archives";
    bundle_detail::clear_dir(sys, archives, {"partial", "lock"});
    sys.make_dirs(archives + "/partial");
    const auto status = sys.read_file("/var/lib/dpkg/status").value_or("");
    sys.write_file_atomic(work + "/status", fresh_host_status(status), 0644);

    SimulationRequest req;
    req.installs = bundle_requests(plan, opt.kernels, "debian");
    req.scratch_dir = opt.cache_dir + "/apt-view";
    req.repos = simulated_repos(ctx, sys, opt.cache_dir);
    const auto t = apt_download(sys, req, archives, work + "/status");
    if (!t.error.empty()) {
        throw Error("the closure could not be downloaded: " + t.error);
    }

    // Every signed index the files may come from: the profile's (verified by gpuprov this
    // run) first, then the distribution's (verified by apt when it wrote its lists).
    std::map<std::string, Stanza> by_sha;
    const auto now = sys.now();
    for (const auto& name : repos) {
        const auto& state = ctx.repos.repo(name);
        const auto dir = opt.cache_dir + "/" + repo_cache_subdir(state.repo);
        add_stanzas(by_sha, sys.read_file(dir + "/Packages").value_or(""), name);
        const auto prov = "provenance/" + name + "/InRelease";
        sys.make_dirs(tree + "/provenance/" + name);
        sys.write_file_atomic(tree + "/" + prov, state.inrelease, 0644);
        m.provenance.emplace_back(name, prov);
    }
    for (const auto& name : sys.list_dir(kAptLists)) {
        const auto path = std::string(kAptLists) + "/" + name;
        if (std::string_view(name).ends_with("_Packages")) {
            add_stanzas(by_sha, sys.read_file(path).value_or(""), "");
        } else if (std::string_view(name).ends_with("_InRelease")) {
            const auto prov = "provenance/distribution/" + name;
            sys.make_dirs(tree + "/provenance/distribution");
            sys.write_file_atomic(tree + "/" + prov, sys.read_file(path).value_or(""), 0644);
            m.provenance.emplace_back("distribution:" + name, prov);
        }
    }

    std::map<std::string, std::string> packages; // repo -> Packages text
    for (const auto& name : repos) {
        sys.make_dirs(tree + "/" + bundle_repo_dir(name));
        packages[name];
    }
    auto debs = sys.list_dir(archives);
    std::sort(debs.begin(), debs.end());
    for (const auto& base : debs) {
        if (!std::string_view(base).ends_with(".deb")) {
            continue;
        }
        const auto data = sys.read_file(archives + "/" + base);
        if (!data) {
            throw Error("cannot read the downloaded " + base);
        }
        const auto sha = sha256_hex(*data);
        const auto it = by_sha.find(sha);
        if (it == by_sha.end()) {
            throw Error(fmt::format("{} (SHA-256 {}) matches no record of a signed index; no "
                                    "bundle was written",
                                    base, sha));
        }
        if (it->second.size != data->size()) {
            throw Error(fmt::format("{} is {} bytes, its signed index says {}", base, data->size(),
                                    it->second.size));
        }
        // The distribution's packages travel in the first repository (cuda's): one source the
        // bundle's host reads them from, signed by the same key.
        const auto& repo = it->second.repo.empty() ? repos.front() : it->second.repo;
        sys.write_file_atomic(tree + "/" + bundle_repo_dir(repo) + base, *data, 0644);
        packages[repo] += with_filename(it->second.text, base) + "\n";
        ++result.packages;
        result.bytes += data->size();
    }
    if (result.packages == 0) {
        throw Error("apt downloaded nothing for the closure; no bundle was written");
    }

    for (const auto& [repo, text] : packages) {
        const auto dir = tree + "/" + bundle_repo_dir(repo);
        const auto release = flat_release(text, repo, now);
        sys.write_file_atomic(dir + "Packages", text, 0644);
        sys.write_file_atomic(dir + "Release", release, 0644);
        sys.write_file_atomic(dir + "InRelease",
                              bundle_detail::clearsign(sys, area.key_home, area.fingerprint,
                                                       release, repo + "'s Release"),
                              0644);
    }
}

} // namespace bundle_detail

} // namespace gpuprov
