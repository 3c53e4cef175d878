// `gpuprov bundle` (docs/air-gapped.md): the plan's closure downloaded by the package manager
// itself, checked again against the signed indexes, written as flat repositories and a
// manifest signed by the bundle key.
#include <algorithm>
#include <array>
#include <ctime>
#include <fmt/format.h>
#include <gpuprov/apt_download.hpp>
#include <gpuprov/bundle.hpp>
#include <gpuprov/digest.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
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

CommandResult must(System& sys, Command cmd, const std::string& what) {
    cmd.timeout = cmd.timeout.count() == 0 ? std::chrono::seconds(300) : cmd.timeout;
    auto r = sys.run(cmd);
    if (r.not_found) {
        throw HostError(fmt::format("{}: {} is not installed", what, cmd.argv.front()));
    }
    if (!r.ok()) {
        throw CommandError(fmt::format("{} failed (`{}` exit {}): {}", what, display_argv(cmd.argv),
                                       r.exit_code, tail_lines(r.err, 6)));
    }
    return r;
}

std::vector<std::string> gpg(const std::string& home, std::vector<std::string> args) {
    std::vector<std::string> argv{"gpg", "--homedir", home, "--batch", "--no-tty"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// The bundle key: the first secret key in `home`, made there (RSA 3072, sign only, no expiry:
// what the e2e mirror and NVIDIA's repositories use) when it has none. Its fingerprint is what
// operators pin, so it is kept across bundles.
std::string bundle_key(System& sys, const std::string& home) {
    sys.make_dirs(home);
    (void)must(sys, {.argv = {"chmod", "0700", home}}, "securing the bundle key's directory");
    auto fpr = [&] {
        const auto r = sys.query({.argv = gpg(home, {"--with-colons", "--list-secret-keys"}),
                                  .timeout = std::chrono::seconds(60)});
        for (const auto& line : lines(r.out)) {
            const auto f = split(line, ':');
            if (f.size() > 9 && f[0] == "fpr") {
                return f[9];
            }
        }
        return std::string();
    };
    if (auto have = fpr(); !have.empty()) {
        return have;
    }
    (void)must(sys,
               {.argv = gpg(home, {"--passphrase", "", "--quick-gen-key",
                                   "gpuprov bundle key <bundle@gpuprov.invalid>", "rsa3072", "sign",
                                   "never"})},
               "making the bundle key");
    auto made = fpr();
    if (made.empty()) {
        throw Error("gpg made no bundle key in " + home);
    }
    return made;
}

std::string clearsign(System& sys, const std::string& home, const std::string& fpr,
                      const std::string& text, const std::string& what) {
    Command cmd{.argv = gpg(home, {"--local-user", fpr + "!", "--digest-algo", "SHA512",
                                   "--clearsign", "--output", "-", "-"})};
    cmd.stdin_data = text;
    return must(sys, cmd, "signing " + what).out;
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

std::vector<PackagePin> bundle_requests(const Plan& plan, const std::vector<std::string>& kernels) {
    std::vector<PackagePin> out;
    auto add = [&](const PackagePin& p) {
        if (std::none_of(out.begin(), out.end(), [&](const auto& o) { return o.name == p.name; })) {
            out.push_back(p);
        }
    };
    for (const auto& t : plan.transactions) {
        for (const auto& p : t.transaction.requested) {
            add(p);
        }
    }
    for (const auto& k : kernels) {
        add({"linux-headers-" + k, ""});
    }
    return out;
}

BundleBuildResult build_bundle(System& sys, const StepContext& ctx, const Plan& plan,
                               const BundleBuildOptions& opt) {
    if (ctx.facts.os.family != "debian") {
        throw Error(fmt::format("gpuprov bundle builds apt bundles only so far; this host is {} "
                                "(docs/air-gapped.md, \"EL\")",
                                ctx.facts.os.pretty_name));
    }
    const BundleTarget here{ctx.facts.os.profile_os, ctx.facts.arch};
    if (here.text() != opt.target.text()) {
        throw Error(fmt::format("a bundle for {} is built on a connected {} host (apt resolves "
                                "the closure against its own distribution); this host is {}",
                                opt.target.text(), opt.target.text(), here.text()));
    }
    if (plan.blocked()) {
        throw Error("the plan is blocked (gpuprov plan shows why); no bundle was written");
    }
    const auto requests = bundle_requests(plan, {});
    if (requests.empty()) {
        throw Error("the plan installs no package on this host (is the profile applied here "
                    "already?); build the bundle on a host the profile has not been applied to");
    }
    std::vector<std::string> repos;
    for (const auto& [name, spec] : ctx.profile.repositories) {
        if (name == "docker") {
            throw Error("bundles do not carry Docker's dists repository yet (container.engine: "
                        "docker-ce)");
        }
        const auto& state = ctx.repos.repo(name);
        if (!state.index) {
            throw Error(fmt::format("repository {}: {}", name, state.error));
        }
        repos.push_back(name);
    }
    std::sort(repos.begin(), repos.end(), [](const auto& a, const auto& b) {
        return (a == "cuda") != (b == "cuda") ? a == "cuda" : a < b; // cuda first
    });
    if (repos.empty()) {
        throw Error("the profile names no repository to bundle");
    }

    // Work area in gpuprov's cache: the fresh host's dpkg database and apt's download directory.
    const auto work = opt.cache_dir + "/bundle-work";
    const auto archives = work + "/archives";
    const auto tree = std::string_view(opt.output).ends_with(".tar") ? work + "/tree" : opt.output;
    for (const auto& d : {archives, archives + "/partial", tree}) {
        sys.make_dirs(d);
    }
    for (const auto& d : {archives, tree}) {
        for (const auto& name : sys.list_dir(d)) {
            if (d == tree && tree == opt.output) {
                throw Error(
                    fmt::format("{} is not empty; give a new or empty directory", opt.output));
            }
            if (name != "partial" && name != "lock") {
                if (sys.is_dir(d + "/" + name)) {
                    (void)must(sys, {.argv = {"rm", "-rf", "--", d + "/" + name}}, "clearing " + d);
                } else {
                    sys.remove_file(d + "/" + name);
                }
            }
        }
    }
    const auto status = sys.read_file("/var/lib/dpkg/status").value_or("");
    sys.write_file_atomic(work + "/status", fresh_host_status(status), 0644);

    SimulationRequest req;
    req.installs = bundle_requests(plan, opt.kernels);
    req.scratch_dir = opt.cache_dir + "/apt-view";
    req.repos = simulated_repos(ctx, sys, opt.cache_dir);
    const auto t = apt_download(sys, req, archives, work + "/status");
    if (!t.error.empty()) {
        throw Error("the closure could not be downloaded: " + t.error);
    }

    // Every signed index the files may come from: the profile's (verified by gpuprov this
    // run) first, then the distribution's (verified by apt when it wrote its lists).
    std::map<std::string, Stanza> by_sha;
    BundleManifest m;
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

    BundleBuildResult result;
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

    const auto fpr = bundle_key(sys, opt.key_home);
    const auto exported =
        must(sys, {.argv = gpg(opt.key_home, {"--export", fpr})}, "exporting the bundle key");
    const auto key = parse_openpgp_key(exported.out);
    if (!key.key || key.key->fingerprint != fpr) {
        throw Error(
            fmt::format("the exported bundle key does not parse as {}: {}", fpr, key.error));
    }
    sys.write_file_atomic(tree + "/" + kBundleKey, key.key->binary, 0644);
    for (const auto& [repo, text] : packages) {
        const auto dir = tree + "/" + bundle_repo_dir(repo);
        const auto release = flat_release(text, repo, now);
        sys.write_file_atomic(dir + "Packages", text, 0644);
        sys.write_file_atomic(dir + "Release", release, 0644);
        sys.write_file_atomic(dir + "InRelease",
                              clearsign(sys, opt.key_home, fpr, release, repo + "'s Release"),
                              0644);
    }

    m.profile = ctx.profile.name;
    m.profile_digest = opt.profile_digest;
    m.target = opt.target;
    m.kernels = opt.kernels;
    m.repositories = repos;
    m.key_fingerprint = fpr;
    auto list = [&](const std::string& rel) {
        const auto data = sys.read_file(tree + "/" + rel).value_or("");
        m.files.push_back({rel, sha256_hex(data), data.size()});
    };
    for (const auto& repo : repos) {
        auto names = sys.list_dir(tree + "/" + bundle_repo_dir(repo));
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            list(bundle_repo_dir(repo) + name);
        }
    }
    for (const auto& [_, rel] : m.provenance) {
        list(rel);
    }
    const auto manifest = manifest_to_json(m);
    sys.write_file_atomic(tree + "/manifest.json", manifest, 0644);
    sys.write_file_atomic(tree + "/" + kBundleManifest,
                          clearsign(sys, opt.key_home, fpr, manifest, "the manifest"), 0644);
    if (tree != opt.output) {
        (void)must(sys,
                   {.argv = {"tar", "-c", "-f", opt.output, "-C", tree, "--owner=0", "--group=0",
                             "--numeric-owner", "--sort=name", "."},
                    .timeout = std::chrono::minutes(30)},
                   "writing " + opt.output);
    }
    result.output = opt.output;
    result.key_fingerprint = fpr;
    return result;
}

} // namespace gpuprov
