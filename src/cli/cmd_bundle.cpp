// `gpuprov bundle PROFILE --for OS[/ARCH] [--kernel K]... --output DIR|FILE.tar`: the offline
// bundle for air-gapped hosts (src/engine/bundle_build.cpp, docs/air-gapped.md).
#include "bundle_use.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/bundle.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/repo.hpp>
#include <iostream>

namespace gpuprov::cli {

void add_bundle_command(CLI::App& app, const GlobalOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "bundle", "download what PROFILE installs on a fresh host into a signed offline "
                  "repository for air-gapped hosts (apply --from-bundle)");
    static std::string profile_arg;
    static std::string target;
    static std::vector<std::string> kernels;
    static std::string output;
    static std::string key_home = "/var/lib/gpuprov/bundle-key";
    cmd->add_option("PROFILE", profile_arg, "built-in name or YAML file")
        ->type_name(kProfileValue)
        ->required();
    cmd->add_option("--for", target,
                    "the hosts' OS and arch as profiles spell it: debian-12/x86_64, "
                    "rocky-9/x86_64")
        ->type_name("OS[/ARCH]")
        ->required();
    cmd->add_option("--kernel", kernels,
                    "a kernel release whose headers (linux-headers, or kernel-devel on EL) the "
                    "bundle carries (may repeat; default: this host's running kernel)")
        ->type_name("VERSION")
        ->expected(1)
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_option("--output", output, "a new or empty directory, or FILE.tar")
        ->type_name("DIR|FILE.tar")
        ->required();
    cmd->add_option("--key-home", key_home,
                    "the gpg home holding the bundle key (made, root-only, when it has none)")
        ->type_name(kDirValue)
        ->capture_default_str();
    cmd->callback([&opts, &exit_code] {
        if (foreign_root(opts)) {
            throw UsageError("bundle --root is refused: apt or dnf would resolve for this host");
        }
        auto& sys = host_system(opts);
        const auto& matrix = Matrix::builtin();
        const auto profile = load_profile(profile_arg, matrix);
        const auto facts = detect_facts(sys, matrix);
        const auto cache = default_repo_cache_dir(sys);
        if (cache.empty()) {
            throw HostError("no repository cache (set HOME or run as root)");
        }
        LiveRepoProvider repos(sys, profile, facts, matrix, cache);
        const StepContext ctx{profile, facts, matrix, repos, units_gpuprov_path(sys)};
        auto plan = build_plan(ctx, sys, make_steps(), {});
        resolve_transactions(
            sys, ctx, plan,
            {.allow_remove = false, .scratch_dir = cache + "/apt-view", .cache_dir = cache});
        BundleBuildOptions o;
        o.target = parse_bundle_target(target, facts.arch);
        o.kernels = kernels.empty() ? std::vector<std::string>{facts.kernel} : kernels;
        o.output = std::filesystem::absolute(output).string();
        o.key_home = key_home;
        o.cache_dir = cache;
        o.profile_digest =
            seal_plan(plan, facts, profile_digest_text(profile_arg), repos).profile_digest;
        const auto r = build_bundle(sys, ctx, plan, o);
        std::cout << fmt::format("Wrote {} ({} packages, {:.1f} MiB) for {}, kernels {}.\n"
                                 "Bundle key fingerprint: {}\n"
                                 "On the air-gapped host: gpuprov apply {} --from-bundle {} "
                                 "--bundle-key {}\n",
                                 r.output, r.packages, static_cast<double>(r.bytes) / 1048576.0,
                                 o.target.text(), fmt::join(o.kernels, ", "), r.key_fingerprint,
                                 profile_arg, r.output, r.key_fingerprint);
        exit_code = kExitOk;
    });
}

} // namespace gpuprov::cli
