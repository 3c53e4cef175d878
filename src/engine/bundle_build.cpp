// `gpuprov bundle` (docs/air-gapped.md): the writer both package-manager halves share (the
// requests, the bundle key, the exported key, the manifest and its signature, the tar);
// bundle_apt.cpp and bundle_dnf.cpp download and check the closure and write the repositories.
#include "bundle_internal.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/bundle.hpp>
#include <gpuprov/digest.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/package_manager.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace bundle_detail {

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

std::string clearsign(System& sys, const std::string& home, const std::string& fpr,
                      const std::string& text, const std::string& what) {
    Command cmd{.argv = gpg(home, {"--local-user", fpr + "!", "--digest-algo", "SHA512",
                                   "--clearsign", "--output", "-", "-"})};
    cmd.stdin_data = text;
    return must(sys, cmd, "signing " + what).out;
}

void detach_sign(System& sys, const std::string& home, const std::string& fpr,
                 const std::string& file) {
    (void)must(sys,
               {.argv = gpg(home, {"--yes", "--local-user", fpr + "!", "--digest-algo", "SHA512",
                                   "--armor", "--detach-sign", "--output", file + ".asc", file})},
               "signing " + file);
}

void clear_dir(System& sys, const std::string& dir, const std::vector<std::string>& keep) {
    sys.make_dirs(dir);
    for (const auto& name : sys.list_dir(dir)) {
        if (std::find(keep.begin(), keep.end(), name) != keep.end()) {
            continue;
        }
        if (sys.is_dir(dir + "/" + name)) {
            (void)must(sys, {.argv = {"rm", "-rf", "--", dir + "/" + name}}, "clearing " + dir);
        } else {
            sys.remove_file(dir + "/" + name);
        }
    }
}

} // namespace bundle_detail

using bundle_detail::gpg;
using bundle_detail::must;

namespace {

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

} // namespace

std::string kernel_headers_package(const std::string& family, const std::string& kernel) {
    // What a DKMS build needs for one kernel: Debian's and Ubuntu's headers package, EL's
    // kernel-devel of that exact release (NVIDIA's driver installation guide, RHEL:
    // `dnf install kernel-devel-$(uname -r)`; the release carries the arch, a valid dnf NEVRA).
    return (family == "rhel" ? "kernel-devel-" : "linux-headers-") + kernel;
}

std::vector<PackagePin> bundle_requests(const Plan& plan, const std::vector<std::string>& kernels,
                                        const std::string& family) {
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
        add({kernel_headers_package(family, k), ""});
    }
    return out;
}

BundleBuildResult build_bundle(System& sys, const StepContext& ctx, const Plan& plan,
                               const BundleBuildOptions& opt) {
    const auto& family = ctx.facts.os.family;
    if (family != "debian" && family != "rhel") {
        throw Error(fmt::format("gpuprov bundle builds apt and dnf bundles; this host is {}",
                                ctx.facts.os.pretty_name));
    }
    const BundleTarget here{ctx.facts.os.profile_os, ctx.facts.arch};
    if (here.text() != opt.target.text()) {
        throw Error(fmt::format("a bundle for {} is built on a connected {} host (the package "
                                "manager resolves the closure against its own distribution); "
                                "this host is {}",
                                opt.target.text(), opt.target.text(), here.text()));
    }
    if (plan.blocked()) {
        throw Error("the plan is blocked (gpuprov plan shows why); no bundle was written");
    }
    const auto requests = bundle_requests(plan, {}, family);
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

    // The work area in gpuprov's cache, the tree (the output directory, or one the tar is made
    // of), and the bundle key, which the halves sign their repositories with.
    bundle_detail::BuildArea area;
    area.work = opt.cache_dir + "/bundle-work";
    area.tree = std::string_view(opt.output).ends_with(".tar") ? area.work + "/tree" : opt.output;
    area.repos = repos;
    area.key_home = opt.key_home;
    sys.make_dirs(area.tree);
    if (area.tree == opt.output && !sys.list_dir(area.tree).empty()) {
        throw Error(fmt::format("{} is not empty; give a new or empty directory", opt.output));
    }
    bundle_detail::clear_dir(sys, area.tree);
    const auto fpr = bundle_key(sys, opt.key_home);
    area.fingerprint = fpr;
    const auto exported =
        must(sys, {.argv = gpg(opt.key_home, {"--export", fpr})}, "exporting the bundle key");
    const auto key = parse_openpgp_key(exported.out);
    if (!key.key || key.key->fingerprint != fpr) {
        throw Error(
            fmt::format("the exported bundle key does not parse as {}: {}", fpr, key.error));
    }

    BundleManifest m;
    BundleBuildResult result;
    if (family == "rhel") {
        bundle_detail::fill_dnf(sys, ctx, plan, opt, area, m, result);
    } else {
        bundle_detail::fill_apt(sys, ctx, plan, opt, area, m, result);
    }
    const auto& tree = area.tree;
    sys.write_file_atomic(tree + "/" + kBundleKey, key.key->binary, 0644);
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
        for (const auto& rel : bundle_detail::files_under(sys, tree, bundle_repo_dir(repo))) {
            list(rel);
        }
    }
    for (const auto& [_, rel] : m.provenance) {
        list(rel);
    }
    for (const auto& [_, rel] : m.package_keys) {
        list(rel);
    }
    const auto manifest = manifest_to_json(m);
    sys.write_file_atomic(tree + "/manifest.json", manifest, 0644);
    sys.write_file_atomic(
        tree + "/" + kBundleManifest,
        bundle_detail::clearsign(sys, opt.key_home, fpr, manifest, "the manifest"), 0644);
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
