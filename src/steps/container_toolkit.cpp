// container-toolkit: the profile's container engine (container.engine, from the distro), NVIDIA's
// container toolkit repository and packages, then `nvidia-ctk runtime configure`, which merges
// into the runtime's config instead of replacing it, and `nvidia-ctk cdi generate` for CDI
// (NVIDIA container toolkit install guide; docs/containers.md).
#include "apt_repo.hpp"
#include "container_engine.hpp"
#include "kubernetes_node.hpp"
#include "packages_step.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/container_config.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

/// NVIDIA's own repository must be the layout of this host's package family
/// (stable/deb/$(ARCH) for apt, stable/rpm/$basearch for dnf): the other one has no index
/// this package manager reads. Empty when it is, or when the URL is a mirror.
std::string wrong_layout(const StepContext& ctx, const PackageNames& names) {
    const auto spec = ctx.profile.repositories.find("container-toolkit");
    if (spec == ctx.profile.repositories.end() ||
        !Matrix::is_nvidia_container_repo(spec->second.url)) {
        return {};
    }
    const auto url = resolve_host_repo(spec->second, ctx.facts, ctx.matrix).url;
    const auto path = expand_package_name(
        names.container_repo_path, {.arch = ctx.facts.repo_arch, .pkgarch = ctx.facts.pkg_arch});
    if (url.size() >= path.size() &&
        url.compare(url.size() - path.size(), path.size(), path) == 0) {
        return {};
    }
    return fmt::format(
        "repositories.container-toolkit.url is {} ({}), but NVIDIA publishes the "
        "toolkit for {} at .../{} (gpuprov's version matrix); use "
        "https://nvidia.github.io/libnvidia-container/stable/{{pkgformat}}/{{pkgarch}}/",
        spec->second.url, url, ctx.facts.os.family == "rhel" ? "dnf" : "apt", path);
}

bool runtime_configured(const System& sys, const Profile& profile) {
    const auto& runtime = profile.container->runtime;
    if (profile.kubernetes && profile.kubernetes->nvidia_default() &&
        !nvidia_is_default_runtime(sys, runtime)) {
        return false; // a Kubernetes node also needs nvidia as the default (kubernetes_node.hpp)
    }
    if (runtime == "containerd") {
        return sys.exists("/etc/containerd/conf.d/99-nvidia.toml");
    }
    if (runtime == "crio") {
        return sys.exists("/etc/crio/conf.d/99-nvidia.toml");
    }
    const auto json = sys.read_file("/etc/docker/daemon.json");
    return json && json->find("nvidia-container-runtime") != std::string::npos;
}

Command cdi_command() {
    return {.argv = {"nvidia-ctk", "cdi", "generate", std::string("--output=") + kCdiSpecPath},
            .timeout = 120s};
}

class ContainerToolkit final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "container-toolkit"; }
    [[nodiscard]] std::string_view summary() const override {
        return "NVIDIA Container Toolkit and the container runtime's nvidia runtime";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.container || !ctx.profile.container->toolkit) {
            r.status = StepStatus::skipped;
            r.reason = "profile asks for no container toolkit";
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        const auto* names = package_names_or_block(ctx, r);
        if (names == nullptr) {
            return r;
        }
        plan_container_engine(ctx, sys, *pm, r);
        if (r.status == StepStatus::blocked) {
            return r;
        }
        // The plan knows: refused here, before the toolkit is installed for nothing.
        if (const auto why = missing_engine(ctx, sys); !why.empty()) {
            r.status = StepStatus::blocked;
            r.reason = why;
            return r;
        }
        // Installed together at one version, as the install guide pins them.
        const auto& packages = names->container_toolkit;
        if (const auto why = wrong_layout(ctx, *names); !why.empty()) {
            r.status = StepStatus::blocked;
            r.reason = why;
            return r;
        }
        check_apt_repo(ctx, sys, "container-toolkit", r);
        if (r.status == StepStatus::blocked) {
            return r;
        }
        if (!all_installed(sys, *pm, packages)) {
            const auto* index = index_or_block(ctx, "container-toolkit", r);
            if (index == nullptr) {
                return r;
            }
            const auto* newest = index->newest(packages.front());
            if (newest == nullptr) {
                r.status = StepStatus::blocked;
                r.reason = "the container-toolkit repository has no nvidia-container-toolkit";
                return r;
            }
            const auto pins = pin_with_prefix(*index, packages, newest->version, r,
                                              "container-toolkit", VersionMatch::exact);
            if (!pins) {
                return r;
            }
            plan_installs(r, sys, *pm, *pins);
        }
        const auto& runtime = ctx.profile.container->runtime;
        if (const auto text = sys.read_file(runtime_config_path(runtime))) {
            if (const auto why = unmergeable_config(runtime, *text); !why.empty()) {
                r.status = StepStatus::blocked;
                r.reason = why + "; nvidia-ctk cannot merge the nvidia runtime into it (and " +
                           runtime + " refuses it too): fix the file, then run gpuprov again";
                return r;
            }
        }
        if (ctx.profile.container->cdi && !sys.exists(kCdiSpecPath)) {
            r.changes.push_back(command_change(cdi_command(), "the CDI spec of this host's GPUs"));
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
        if (!runtime_configured(sys, ctx.profile)) {
            const auto* what = ctx.profile.kubernetes && ctx.profile.kubernetes->nvidia_default()
                                   ? "make nvidia the default runtime of "
                                   : "add the nvidia runtime to ";
            r.changes.push_back(command_change(
                runtime_configure_command(runtime, kubernetes_configure_flags(ctx.profile)),
                what + runtime));
            if (auto restart = engine_restart_change(ctx, sys, *pm)) {
                r.changes.push_back(std::move(*restart));
            }
            if (r.status == StepStatus::satisfied) {
                r.status = StepStatus::pending;
            }
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult&,
                     ApplyPhase phase) override {
        if (phase == ApplyPhase::sources) {
            apply_container_engine_repo(ctx, sys, *make_package_manager(ctx.facts));
            apply_apt_repo(ctx, sys, "container-toolkit");
            return StepStatus::done;
        }
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        const auto& runtime = ctx.profile.container->runtime;
        if (ctx.profile.container->cdi && !sys.exists(kCdiSpecPath)) {
            const auto cdi = sys.run(cdi_command());
            if (!cdi.ok()) {
                throw HostError(fmt::format(
                    "nvidia-ctk cdi generate failed (exit {}): {}; it reads the GPUs through the "
                    "loaded driver (NVML): load it (or reboot after the driver install), then "
                    "run gpuprov again",
                    cdi.exit_code, std::string(trim(tail_lines(cdi.err, 4)))));
            }
        }
        if (!runtime_configured(sys, ctx.profile)) {
            configure_runtime(sys, runtime, kubernetes_configure_flags(ctx.profile));
            // A running daemon reads its config only at start (the plan shows the restart and
            // what it does to running containers: engine_restart_change).
            if (have_systemctl(sys) &&
                sys.run({.argv = {"systemctl", "is-active", "--quiet", runtime}, .timeout = 30s})
                    .ok()) {
                run_checked(sys, engine_restart_command(runtime));
            }
        }
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.container || !ctx.profile.container->toolkit) {
            return {};
        }
        auto checks = check_container_toolkit({ctx.profile, ctx.facts, ctx.matrix}, sys);
        for (auto& c : check_kubernetes_node(ctx.profile, sys)) {
            checks.push_back(std::move(c));
        }
        return checks;
    }
};

} // namespace

std::unique_ptr<Step> make_container_toolkit() {
    return std::make_unique<ContainerToolkit>();
}

} // namespace gpuprov::steps
