// --from-bundle / --bundle-key for plan, apply and verify (docs/air-gapped.md): the bundle is
// checked before anything else happens, and the profile's repositories point at it.
#include "bundle_use.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/bundle.hpp>
#include <gpuprov/dnf_download.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <map>
#include <optional>

namespace gpuprov::cli {

namespace {

std::optional<BundleArgs>& active() {
    static std::optional<BundleArgs> args;
    return args;
}

// The bundle load_cli_profile opened and checked, as the resume unit names it.
BundleInUse& opened() {
    static BundleInUse in_use;
    return in_use;
}

} // namespace

void add_bundle_options(CLI::App* cmd, BundleArgs& args) {
    cmd->add_option("--from-bundle", args.from,
                    "install from an offline bundle (gpuprov bundle): a directory or FILE.tar; "
                    "the profile's repositories are replaced by the bundle's")
        ->type_name("DIR|FILE.tar");
    cmd->add_option("--bundle-key", args.key,
                    "the fingerprint of the key the bundle must be signed with (gpuprov bundle "
                    "prints it); default: the profile's bundle.key_fingerprint")
        ->type_name("FINGERPRINT");
}

void use_bundle(const BundleArgs& args) {
    if (args.from.empty() && !args.key.empty()) {
        throw UsageError("--bundle-key without --from-bundle: it names the key of the bundle "
                         "that --from-bundle installs from");
    }
    if (!args.from.empty()) {
        active() = args;
        // The source URL and the resume unit need the path from /, whatever the cwd.
        active()->from = std::filesystem::absolute(args.from).lexically_normal().string();
    }
}

Profile load_cli_profile(const GlobalOptions& opts, const std::string& profile_arg,
                         const Matrix& matrix) {
    auto profile = load_profile(profile_arg, matrix);
    if (!active()) {
        return profile;
    }
    auto& sys = host_system(opts);
    const auto cache = default_repo_cache_dir(sys);
    if (cache.empty()) {
        throw HostError("no repository cache to open the bundle in (set HOME or run as root)");
    }
    // --bundle-key, or the profile's bundle.key_fingerprint (both: the same key).
    const auto key = bundle_key_for(profile, active()->key);
    const auto bundle = open_bundle(sys, active()->from, key, cache);
    opened() = {.dir = bundle.dir, .key = bundle.fingerprint};
    const auto facts = detect_facts(sys, matrix);
    const auto gaps = bundle_gaps(bundle.manifest, facts);
    if (!gaps.empty()) {
        throw Error(fmt::format("the bundle {} lacks what this host needs, nothing was changed:\n "
                                " {}\nBuild one that has it: gpuprov bundle {} --for {} --kernel "
                                "$(uname -r) ...",
                                active()->from, join(gaps, "\n  "), profile_arg,
                                bundle.manifest.target.text()));
    }
    if (facts.os.family == "rhel") {
        // rpm checks the packages against the keys the profile pins, carried in the bundle.
        std::map<std::string, DnfPackageKey> keys;
        for (const auto& k : bundle_package_keys(profile, bundle)) {
            keys[k.repo] = {k.file, k.fingerprint};
        }
        dnf_use_package_keys(std::move(keys));
        // The bundle is the only source: dnf reads gpuprov's repositories (each a bundle's)
        // and never the distribution's, which an air-gapped host cannot reach and whose
        // newer candidates the bundle does not hold.
        std::vector<std::pair<std::string, std::string>> extra;
        for (const auto& repo : bundle.manifest.repositories) {
            extra.emplace_back("gpuprov-bundle-" + repo,
                               "file://" + bundle.dir + "/" + bundle_repo_dir(repo));
        }
        dnf_limit_repos({"gpuprov-*"}, std::move(extra));
    }
    return profile_from_bundle(std::move(profile), bundle);
}

BundleInUse bundle_in_use() {
    return opened();
}

} // namespace gpuprov::cli
