// cuda-toolkit: cuda-toolkit-X-Y (never cuda-X-Y, which drags a driver in) and PATH for login
// shells, per NVIDIA's post-installation actions.
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

ManagedFile profile_d(const std::string& version) {
    const auto bin = fmt::format("/usr/local/cuda-{}/bin", version);
    return {"/etc/profile.d/gpuprov-cuda.sh",
            fmt::format("{}# CUDA {} on PATH for login shells.\n"
                        "case \":${{PATH}}:\" in\n"
                        "    *:{}:*) ;;\n"
                        "    *) export PATH=\"{}${{PATH:+:${{PATH}}}}\" ;;\n"
                        "esac\n",
                        kManagedHeader, version, bin, bin)};
}

/// rpm has no half-configured state: a transaction killed during the toolkit's %post leaves the
/// package installed and its scriptlet's `alternatives --install` undone, so /usr/local/cuda is
/// missing while /usr/local/cuda-X.Y is there (dpkg would redo the postinst in `dpkg
/// --configure -a`). The repair redoes what the scriptlet does, with NVIDIA's priority (the
/// release's digits: 124 for 12.4). A /usr/local/cuda pointing elsewhere is an admin's choice and
/// is left alone.
std::vector<Command> unfinished_rpm_scriptlet(const StepContext& ctx, const System& sys,
                                              const std::string& version) {
    const auto dir = "/usr/local/cuda-" + version;
    if (ctx.facts.os.family != "rhel" || !sys.is_dir(dir) || sys.exists("/usr/local/cuda")) {
        return {};
    }
    const auto priority = replace_all(version, ".", "");
    const auto major = version.substr(0, version.find('.'));
    std::vector<Command> out;
    for (const auto& [link, name] : {std::pair{std::string("/usr/local/cuda"), std::string("cuda")},
                                     std::pair{"/usr/local/cuda-" + major, "cuda-" + major}}) {
        out.push_back(
            {.argv = {"alternatives", "--install", link, name, dir, priority}, .timeout = 60s});
    }
    return out;
}

class CudaToolkit final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "cuda-toolkit"; }
    [[nodiscard]] std::string_view summary() const override {
        return "CUDA toolkit (toolkit only, no driver) and PATH";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.cuda) {
            r.status = StepStatus::skipped;
            r.reason = "profile has no cuda section";
            return r;
        }
        const auto& version = ctx.profile.cuda->version;
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        const auto cuda = DottedVersion::parse(version);
        if (const auto* distro = ctx.matrix.distro(ctx.facts.os.repo_slug);
            distro != nullptr && cuda && !distro->carries(*cuda)) {
            r.status = StepStatus::blocked;
            r.reason =
                fmt::format("CUDA {} is not in NVIDIA's {} repository (it carries {} {}); choose a "
                            "cuda.version in that range",
                            version, distro->slug, distro->cuda_min.str(),
                            distro->cuda_max ? "to " + distro->cuda_max->str() : "and newer");
            return r;
        }
        const auto* rel = cuda ? ctx.matrix.cuda(*cuda) : nullptr;
        if (rel != nullptr && ctx.profile.driver) {
            // The profile's branch passed the load-time check; say what minor version
            // compatibility leaves out when it is below the toolkit's own driver.
            const auto fit = ctx.matrix.driver_runs_cuda(
                static_cast<int>(parse_int(ctx.profile.driver->branch).value_or(0)), std::nullopt,
                *rel, true);
            if (fit.kind == DriverCudaFit::Kind::minor_compat) {
                r.changes.push_back(note(fit.note));
            }
        }
        if (!ctx.profile.driver && ctx.facts.driver && rel != nullptr) {
            const auto loaded = DottedVersion::parse(ctx.facts.driver->version);
            const auto fit = loaded
                                 ? ctx.matrix.driver_runs_cuda(loaded->major(), loaded, *rel, true)
                                 : DriverCudaFit{};
            if (loaded && fit.kind == DriverCudaFit::Kind::too_old) {
                r.status = StepStatus::blocked;
                r.reason =
                    fmt::format("CUDA {} needs driver ≥ {}; driver {} is loaded: {}", version,
                                rel->min_driver.str(), ctx.facts.driver->version, fit.note);
                return r;
            }
            if (fit.kind == DriverCudaFit::Kind::minor_compat) {
                r.changes.push_back(note(fit.note));
            }
        }
        const auto* names = package_names_or_block(ctx, r);
        if (names == nullptr) {
            return r;
        }
        const auto package = expand_package_name(names->cuda_toolkit, {.cuda = version});
        // cuda.version: 12.4.1 pins that update ("12.4.1-1"); 12.4 takes the newest.
        const auto& exact = ctx.profile.cuda->exact;
        const auto want_prefix = exact ? *exact + "-" : std::string();
        const auto installed = pm->installed(sys, package);
        if (!installed || (exact && !version_has_prefix(*installed, want_prefix))) {
            const auto* index = index_or_block(ctx, "cuda", r);
            if (index == nullptr) {
                return r;
            }
            const auto pins = pin_with_prefix(*index, {package}, want_prefix, r, "CUDA");
            if (!pins) {
                return r;
            }
            plan_installs(r, sys, *pm, *pins);
        } else {
            for (const auto& cmd : unfinished_rpm_scriptlet(ctx, sys, version)) {
                r.changes.push_back(command_change(
                    cmd, "the toolkit's %post did not finish (a killed transaction): "
                         "/usr/local/cuda is missing"));
                if (r.status == StepStatus::satisfied) {
                    r.status = StepStatus::pending;
                }
            }
        }
        require_file(sys, profile_d(version), r);
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase == ApplyPhase::configure) {
            for (const auto& cmd : unfinished_rpm_scriptlet(ctx, sys, ctx.profile.cuda->version)) {
                run_checked(sys, cmd);
            }
            write_managed(sys, profile_d(ctx.profile.cuda->version));
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.cuda) {
            return {};
        }
        return check_cuda_toolkit({ctx.profile, ctx.facts, ctx.matrix}, sys);
    }
};

} // namespace

std::unique_ptr<Step> make_cuda_toolkit() {
    return std::make_unique<CudaToolkit>();
}

} // namespace gpuprov::steps
