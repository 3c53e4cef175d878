// Reading a bundle (docs/air-gapped.md): its manifest, the checks before anything changes, what
// a host needs that it lacks, and the profile pointed at it.
#include "bundle_internal.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <gpuprov/bundle.hpp>
#include <gpuprov/clearsigned.hpp>
#include <gpuprov/digest.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

namespace {

// A manifest path must stay inside the bundle: relative, no "..", no empty parts.
bool safe_relative(std::string_view path) {
    if (path.empty() || path.front() == '/') {
        return false;
    }
    const auto parts = split(path, '/');
    return std::none_of(parts.begin(), parts.end(), [](const auto& part) {
        return part.empty() || part == "." || part == "..";
    });
}

std::string normalized_fingerprint(std::string_view fp) {
    std::string out;
    for (const char c : fp) {
        if (c != ' ' && c != ':') {
            out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

} // namespace

namespace bundle_detail {

std::vector<std::string> files_under(const System& sys, const std::string& top,
                                     const std::string& rel_dir) {
    std::vector<std::string> out;
    std::vector<std::string> todo{rel_dir};
    while (!todo.empty()) {
        auto rel = todo.back();
        todo.pop_back();
        if (!rel.empty() && rel.back() != '/') {
            rel += '/';
        }
        for (const auto& name : sys.list_dir(top + "/" + rel)) {
            if (sys.is_dir(top + "/" + rel + name)) {
                todo.push_back(rel + name);
            } else {
                out.push_back(rel + name);
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace bundle_detail

BundleTarget parse_bundle_target(std::string_view text, const std::string& default_arch) {
    const auto parts = split(text, '/');
    const bool os_ok = !parts.empty() && parts[0].find('-') != std::string::npos &&
                       parts[0].front() != '-' && parts[0].back() != '-';
    if (!os_ok || parts.size() > 2 || (parts.size() == 2 && parts[1].empty())) {
        throw UsageError(fmt::format(
            "--for {}: expected OS-VERSION[/ARCH] as profiles spell it (debian-12/x86_64)", text));
    }
    // Profiles name the EL major only (`rhel-9` for RHEL, Rocky, AlmaLinux and Oracle Linux 9:
    // os_classify.cpp), and so do bundles: one bundle serves every rebuild of that release.
    auto os = parts[0];
    const auto dash = os.rfind('-');
    const auto distro = os.substr(0, dash);
    for (const auto* el : {"rocky", "almalinux", "alma", "ol", "centos"}) {
        if (distro == el) {
            os = "rhel" + os.substr(dash);
        }
    }
    return {os, parts.size() == 2 ? parts[1] : default_arch};
}

std::string bundle_repo_dir(const std::string& name) {
    return "repos/" + name + "/";
}

std::string manifest_to_json(const BundleManifest& m) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : m.files) {
        files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
    }
    nlohmann::json provenance = nlohmann::json::object();
    for (const auto& [repo, path] : m.provenance) {
        provenance[repo] = path;
    }
    nlohmann::json package_keys = nlohmann::json::object();
    for (const auto& [repo, path] : m.package_keys) {
        package_keys[repo] = path;
    }
    const nlohmann::json doc = {{"kind", "gpuprov-bundle"},
                                {"format_version", m.format_version},
                                {"profile", {{"name", m.profile}, {"digest", m.profile_digest}}},
                                {"target", {{"os", m.target.os}, {"arch", m.target.arch}}},
                                {"kernels", m.kernels},
                                {"repositories", m.repositories},
                                {"key_fingerprint", m.key_fingerprint},
                                {"provenance", provenance},
                                {"files", files}};
    if (!m.package_keys.empty()) {
        auto with_keys = doc;
        with_keys["package_keys"] = package_keys;
        return with_keys.dump(2) + "\n";
    }
    return doc.dump(2) + "\n";
}

BundleManifest parse_manifest(std::string_view text) {
    BundleManifest m;
    try {
        const auto doc = nlohmann::json::parse(text);
        if (doc.at("kind").get<std::string>() != "gpuprov-bundle") {
            throw Error("the bundle manifest is not a gpuprov-bundle document");
        }
        m.format_version = doc.at("format_version").get<int>();
        if (m.format_version != 1) {
            throw Error(fmt::format("bundle manifest format_version {} is not known to this "
                                    "gpuprov (1 is)",
                                    m.format_version));
        }
        m.profile = doc.at("profile").at("name").get<std::string>();
        m.profile_digest = doc.at("profile").at("digest").get<std::string>();
        m.target = {doc.at("target").at("os").get<std::string>(),
                    doc.at("target").at("arch").get<std::string>()};
        m.kernels = doc.at("kernels").get<std::vector<std::string>>();
        m.repositories = doc.at("repositories").get<std::vector<std::string>>();
        m.key_fingerprint = doc.at("key_fingerprint").get<std::string>();
        for (const auto& [repo, path] : doc.at("provenance").items()) {
            m.provenance.emplace_back(repo, path.get<std::string>());
        }
        if (doc.contains("package_keys")) {
            for (const auto& [repo, path] : doc.at("package_keys").items()) {
                m.package_keys.emplace_back(repo, path.get<std::string>());
            }
        }
        for (const auto& f : doc.at("files")) {
            m.files.push_back({f.at("path").get<std::string>(), f.at("sha256").get<std::string>(),
                               f.at("size").get<std::uint64_t>()});
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(fmt::format("the bundle manifest is malformed: {}", e.what()));
    }
    for (const auto& f : m.files) {
        if (!safe_relative(f.path) || f.sha256.size() != 64) {
            throw Error(
                fmt::format("the bundle manifest lists an unusable file entry '{}'", f.path));
        }
    }
    for (const auto& r : m.repositories) {
        if (!safe_relative(r) || r.find('/') != std::string::npos) {
            throw Error(fmt::format("the bundle manifest names an unusable repository '{}'", r));
        }
    }
    for (const auto& key : m.package_keys) {
        // Not a structured binding: clang before 16 cannot capture one in a lambda.
        const auto& repo = key.first;
        const auto& path = key.second;
        const bool listed = std::any_of(m.files.begin(), m.files.end(),
                                        [&](const auto& f) { return f.path == path; });
        if (!safe_relative(path) || !listed) {
            throw Error(fmt::format("the bundle manifest names an unusable package key '{}' for "
                                    "{} (every key must be a listed, hashed file)",
                                    path, repo));
        }
    }
    return m;
}

OpenedBundle open_bundle(System& sys, const std::string& path, const std::string& fingerprint,
                         const std::string& cache_dir) {
    const auto pin = normalized_fingerprint(fingerprint);
    if (pin.size() != 40) {
        throw UsageError(fmt::format("--bundle-key {}: expected the bundle key's 40-digit "
                                     "fingerprint (gpuprov bundle prints it)",
                                     fingerprint));
    }
    OpenedBundle b;
    b.fingerprint = pin;
    b.dir = path;
    while (b.dir.size() > 1 && b.dir.back() == '/') {
        b.dir.pop_back();
    }
    if (std::string_view(path).ends_with(".tar")) {
        // Extracted into gpuprov's own cache (root's is root-only), named after the tar's
        // content, so plan and apply of one tar share one directory and one source URL.
        const auto tar = sys.read_file(path);
        if (!tar) {
            throw Error(fmt::format("cannot read the bundle {}", path));
        }
        b.dir = cache_dir + "/bundles/" + sha256_hex(*tar).substr(0, 16);
        sys.make_dirs(b.dir);
        const auto r = sys.run({.argv = {"tar", "-x", "-f", path, "-C", b.dir, "--no-same-owner",
                                         "--no-same-permissions"},
                                .timeout = std::chrono::minutes(30)});
        if (!r.ok()) {
            throw Error(fmt::format("cannot extract the bundle {} (tar exit {}): {}", path,
                                    r.exit_code, tail_lines(r.err, 4)));
        }
    }
    const auto key_path = b.dir + "/" + kBundleKey;
    const auto key_data = sys.read_file(key_path);
    if (!key_data) {
        throw Error(fmt::format("{} is not a gpuprov bundle: it has no {}", path, kBundleKey));
    }
    const auto key = parse_openpgp_key(*key_data);
    if (!key.key) {
        throw Error(fmt::format("the bundle key {} is unusable: {}", key_path, key.error));
    }
    if (key.key->fingerprint != pin) {
        throw Error(fmt::format("the bundle {} is signed by key {}, not by the pinned {}; nothing "
                                "was changed",
                                path, key.key->fingerprint, pin));
    }
    const auto signed_manifest = sys.read_file(b.dir + "/" + kBundleManifest);
    if (!signed_manifest) {
        throw Error(fmt::format("the bundle {} has no {}", path, kBundleManifest));
    }
    const auto checked =
        verify_clearsigned(sys, key_path, *signed_manifest, pin, b.dir + "/" + kBundleManifest);
    if (!checked.text) {
        throw Error(fmt::format("the bundle {}'s manifest does not verify: {}; nothing was changed",
                                path, checked.error));
    }
    b.manifest = parse_manifest(*checked.text);
    if (normalized_fingerprint(b.manifest.key_fingerprint) != pin) {
        throw Error(fmt::format("the bundle {}'s manifest names key {}, not {}", path,
                                b.manifest.key_fingerprint, pin));
    }
    std::vector<std::string> listed;
    for (const auto& f : b.manifest.files) {
        const auto full = b.dir + "/" + f.path;
        const auto st = sys.stamp(full);
        if (!st || st->size != f.size) {
            throw Error(fmt::format("bundle file {} is {}, the signed manifest says {} bytes; "
                                    "nothing was changed",
                                    f.path, st ? fmt::format("{} bytes", st->size) : "missing",
                                    f.size));
        }
        const auto data = sys.read_file(full);
        const auto got = data ? sha256_hex(*data) : std::string("unreadable");
        if (got != f.sha256) {
            throw Error(fmt::format("bundle file {} has SHA-256 {}, the signed manifest says {}; "
                                    "nothing was changed",
                                    f.path, got, f.sha256));
        }
        listed.push_back(f.path);
        for (const auto& [repo, rel] : b.manifest.package_keys) {
            if (rel == f.path) {
                b.package_key_data.emplace_back(repo, *data);
            }
        }
    }
    // Nothing unlisted may sit where apt reads: a file the manifest does not cover is not signed.
    // (Recursively: dnf reads repodata/ inside each repository.)
    for (const auto& repo : b.manifest.repositories) {
        for (const auto& rel : bundle_detail::files_under(sys, b.dir, bundle_repo_dir(repo))) {
            if (std::find(listed.begin(), listed.end(), rel) == listed.end()) {
                throw Error(fmt::format("bundle file {} is not in the signed manifest; nothing "
                                        "was changed",
                                        rel));
            }
        }
    }
    return b;
}

std::vector<std::string> bundle_gaps(const BundleManifest& m, const HostFacts& facts) {
    std::vector<std::string> gaps;
    const BundleTarget host{facts.os.profile_os, facts.arch};
    if (host.os != m.target.os || host.arch != m.target.arch) {
        gaps.push_back(
            fmt::format("the bundle is for {}, this host is {}", m.target.text(), host.text()));
    }
    if (!facts.kernel.empty() &&
        std::find(m.kernels.begin(), m.kernels.end(), facts.kernel) == m.kernels.end()) {
        gaps.push_back(fmt::format("{} (the running kernel; the bundle has headers for {})",
                                   kernel_headers_package(facts.os.family, facts.kernel),
                                   m.kernels.empty() ? "no kernel" : join(m.kernels, ", ")));
    }
    return gaps;
}

std::string bundle_key_for(const Profile& profile, std::string_view cli_key) {
    const auto cli = normalized_fingerprint(cli_key);
    if (cli.empty() && profile.bundle_key.empty()) {
        throw UsageError("--from-bundle needs the fingerprint of the key that signed the bundle: "
                         "pass --bundle-key FINGERPRINT (gpuprov bundle prints it) or set "
                         "bundle.key_fingerprint in the profile");
    }
    if (!cli.empty() && !profile.bundle_key.empty() && cli != profile.bundle_key) {
        const auto at = profile.pos("bundle.key_fingerprint");
        throw ProfileError(at.file, at.line, at.col,
                           fmt::format("bundle.key_fingerprint is {} but --bundle-key is {}: a "
                                       "bundle is trusted through one key; drop --bundle-key or "
                                       "change the profile",
                                       profile.bundle_key, cli));
    }
    return cli.empty() ? profile.bundle_key : cli;
}

Profile profile_from_bundle(Profile profile, const OpenedBundle& bundle) {
    const auto& have = bundle.manifest.repositories;
    for (auto& [name, spec] : profile.repositories) {
        if (std::find(have.begin(), have.end(), name) == have.end()) {
            throw Error(fmt::format("the bundle carries no '{}' repository (it has {}); build it "
                                    "with this profile",
                                    name, join(have, ", ")));
        }
        spec.url = "file://" + bundle.dir + "/" + bundle_repo_dir(name);
        spec.key_url = "file://" + bundle.dir + "/" + kBundleKey;
        spec.key_fingerprint = normalized_fingerprint(bundle.manifest.key_fingerprint);
        spec.allow_insecure = false;
    }
    return profile;
}

std::vector<BundlePackageKey> bundle_package_keys(const Profile& profile,
                                                  const OpenedBundle& bundle) {
    std::vector<BundlePackageKey> out;
    for (const auto& [name, rel] : bundle.manifest.package_keys) {
        const auto spec = profile.repositories.find(name);
        if (spec == profile.repositories.end()) {
            continue; // a repository this profile does not use
        }
        std::string data;
        for (const auto& [repo, d] : bundle.package_key_data) {
            data = repo == name ? d : data;
        }
        // The key rpm checks the packages with: the profile's own pin when it has one (the
        // bundle key vouches for the file, the profile for the key).
        const auto parsed = parse_openpgp_key(data);
        if (!parsed.key) {
            throw Error(fmt::format("the bundle's package key {} for '{}' is unusable: {}", rel,
                                    name, parsed.error));
        }
        const auto pin = normalized_fingerprint(spec->second.key_fingerprint);
        if (!pin.empty() && pin != parsed.key->fingerprint) {
            throw Error(fmt::format("the bundle's '{}' packages are signed with key {}, the "
                                    "profile pins {}; nothing was changed",
                                    name, parsed.key->fingerprint, pin));
        }
        out.push_back({name, bundle.dir + "/" + rel, parsed.key->fingerprint});
    }
    return out;
}

} // namespace gpuprov
