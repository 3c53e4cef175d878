// preflight: is this a host the profile can work on? Blocks with every reason at once, so a
// sysadmin fixes them in one go; installs only what the later steps need from the
// distribution: the kernel headers DKMS needs and, on EL, dnf's versionlock plugin.
#include "common.hpp"
#include "driver_rpm.hpp"
#include "driver_signed.hpp" // headers: none for Canonical's precompiled modules
#include "kernel_build.hpp"
#include "steps.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
// MemTotal excludes memory the firmware and kernel reserve, so a 256 GiB box reports a little
// less; 5% slack keeps the check about the DIMMs actually fitted.
constexpr double kMemorySlack = 0.95;

std::string describe_gpus(const HostFacts& facts) {
    if (facts.gpus.empty()) {
        return "no NVIDIA GPU on the PCI bus";
    }
    std::map<std::string, int> counts;
    for (const auto& g : facts.gpus) {
        counts[g.name.empty() ? fmt::format("unknown device 0x{:04x}", g.device_id) : g.name]++;
    }
    std::vector<std::string> parts;
    for (const auto& [name, n] : counts) {
        parts.push_back(fmt::format("{}× {}", n, name));
    }
    return join(parts, ", ");
}

std::string gib(std::uint64_t bytes) {
    return fmt::format("{:.0f} GiB", static_cast<double>(bytes) / kGiB);
}

/// A host requirement the profile states and this host does not meet.
struct Unmet {
    std::string problem; ///< what is needed and what the host has
    std::string fix;     ///< what to change, on the host or in the profile
};

/// Every way the storage under `want.path` falls short, as a sysadmin sizes it: the disk's
/// size from sysfs (the filesystem's when sysfs cannot tell), free space, NVMe, SSD.
void check_disk(const System& sys, const DiskSpec& want, std::vector<Unmet>& blocked) {
    const auto space = sys.disk_space(want.path);
    const auto dev = block_device_for(sys, want.path);
    const auto where =
        dev ? fmt::format("{} ({} on {})", want.path, dev->source, join(dev->disks, "+"))
            : want.path;
    if (!space) {
        blocked.push_back(
            {fmt::format("cannot read the filesystem at {}", want.path),
             fmt::format("create or mount {}, or change host.disks in the profile", want.path)});
        return;
    }
    if (want.size_gib) {
        const bool from_disk = dev && dev->size_bytes > 0;
        const auto size = from_disk ? dev->size_bytes : space->total_bytes;
        if (size < static_cast<std::uint64_t>(*want.size_gib) * kGiB) {
            blocked.push_back(
                {fmt::format("needs a {} GiB disk under {}; {} is {}", *want.size_gib, want.path,
                             from_disk ? where : "its filesystem", gib(size)),
                 fmt::format("put {} on a larger disk, or lower its size_gib in host.disks",
                             want.path)});
        }
    }
    if (want.free_gib && space->free_bytes < static_cast<std::uint64_t>(*want.free_gib) * kGiB) {
        blocked.push_back(
            {fmt::format("needs {} GiB free on {}; {:.1f} GiB free", *want.free_gib, want.path,
                         static_cast<double>(space->free_bytes) / kGiB),
             fmt::format("free space on {}, or lower its free_gib in host.disks", want.path)});
    }
    if ((want.nvme || want.ssd) && !dev) {
        blocked.push_back({fmt::format("cannot tell which disk holds {} (no /dev source for it in "
                                       "/proc/self/mountinfo, or not under /sys/block), so "
                                       "NVMe/SSD cannot be checked",
                                       want.path),
                           fmt::format("check it with lsblk, then drop nvme/ssd for {} in "
                                       "host.disks",
                                       want.path)});
        return;
    }
    if (want.nvme && !dev->nvme) {
        blocked.push_back(
            {fmt::format("needs {} on NVMe; it is on {}", want.path, where),
             fmt::format("put {} on an NVMe disk, or drop nvme for it in host.disks", want.path)});
    }
    if (want.ssd && dev->rotational.value_or(true)) {
        blocked.push_back(
            {fmt::format("needs {} on an SSD; {} {}", want.path, where,
                         dev->rotational ? "is a rotating disk"
                                         : "does not say whether it rotates"),
             fmt::format("put {} on an SSD, or drop ssd for it in host.disks", want.path)});
    }
}

std::string iso_date(std::chrono::system_clock::time_point t) {
    const std::chrono::year_month_day d{std::chrono::floor<std::chrono::days>(t)};
    return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(d.year()),
                       static_cast<unsigned>(d.month()), static_cast<unsigned>(d.day()));
}

/// Whether DKMS can build for the running kernel: the build link on every family, and on the
/// rhel family also the kernel-devel rpm of exactly that kernel (the link alone can dangle).
bool kernel_build_ready(const HostFacts& f) {
    if (f.os.family == "rhel") {
        return f.kernel_headers && f.kernel_devel;
    }
    return f.kernel_headers;
}

/// The packages that provide the running kernel's build tree. RHEL 8/9: NVIDIA's driver guide
/// ("Red Hat Enterprise Linux", preparation: `dnf install kernel-devel-$(uname -r)
/// kernel-headers-$(uname -r)`,
/// https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/); Debian/Ubuntu:
/// linux-headers-$(uname -r).
/// The rpm names come from the version matrix (packages.rhel.driver.kernel_packages).
std::vector<PackagePin> kernel_build_packages(const HostFacts& f, const Matrix& matrix) {
    if (const auto* names = matrix.package_names(f.os.family); names && names->driver) {
        std::vector<PackagePin> out;
        for (const auto& n : names->driver->kernel_packages) {
            out.push_back(PackagePin{.name = n + "-" + f.kernel});
        }
        return out;
    }
    return {PackagePin{.name = "linux-headers-" + f.kernel}};
}

/// The build trees of the installed kernels other than the running one: the next boot may pick
/// any of them, and DKMS builds only where a tree is. Installed when a repository carries them;
/// a kernel whose tree none carries is said in the plan, with the fix, and left as it is (the
/// running kernel is unaffected, so it does not block).
void plan_other_kernels(const StepContext& ctx, const System& sys, CheckResult& r) {
    bool any = false;
    for (const auto& k : ctx.facts.kernels) {
        any = any || (k.release != ctx.facts.kernel && !k.build_tree);
    }
    if (!any) {
        return;
    }
    auto pm = package_manager_or_block(ctx, r);
    if (!pm) {
        return;
    }
    std::vector<std::string> planned;
    for (const auto& m : missing_build_trees(ctx.facts, sys, *pm)) {
        std::vector<std::string> names;
        for (const auto& p : m.packages) {
            names.push_back(p.name);
        }
        if (m.available == false) {
            const auto remove = ctx.facts.os.family == "rhel"
                                    ? "dnf remove kernel-core-" + m.kernel
                                    : "apt-get purge linux-image-" + m.kernel;
            r.changes.push_back(note(fmt::format(
                "kernel {} is installed and the next boot may pick it, but no enabled repository "
                "carries {}: DKMS cannot build the NVIDIA module for it; fix: enable the "
                "repository that carries {} (the vault of that point release), or remove the "
                "kernel ({})",
                m.kernel, join(names, ", "), join(names, ", "), remove)));
            continue;
        }
        plan_installs(r, sys, *pm, m.packages);
        planned.push_back(m.kernel);
    }
    if (!planned.empty()) {
        const auto why = fmt::format("DKMS needs the build tree of every installed kernel the "
                                     "next boot may pick ({})",
                                     join(planned, ", "));
        r.reason = r.reason.empty() ? why : r.reason + "; " + why;
    }
}

/// dnf versionlock is a plugin of its own (python3-dnf-plugin-versionlock) that stock RHEL and
/// Rocky images lack; without it the driver's lock fails after everything is installed and the
/// run never converges. When the profile locks anything on EL (the driver's branch, always on
/// EL 10; the kernel with hold_kernel) and no installed rpm provides dnf-command(versionlock),
/// the plugin is installed from the distribution's repositories in preflight's transaction,
/// before the driver's, and the locks run after the driver's.
void plan_versionlock_plugin(const StepContext& ctx, const System& sys, CheckResult& r) {
    const auto& d = ctx.profile.driver;
    if (!d || ctx.facts.os.family != "rhel" || !(rpm_branch_locked(ctx) || d->hold_kernel) ||
        versionlock_available(rpm_database(sys))) {
        return;
    }
    const auto plugin = versionlock_plugin_package(ctx);
    if (plugin.empty()) {
        r.status = StepStatus::blocked;
        r.reason = fmt::format("the profile versionlocks packages, and gpuprov's version matrix "
                               "names no versionlock plugin package for EL {} "
                               "(packages.rhel.driver.versionlock_plugin)",
                               el_major(ctx.facts));
        return;
    }
    auto pm = package_manager_or_block(ctx, r);
    if (!pm) {
        return;
    }
    plan_installs(r, sys, *pm, {PackagePin{.name = plugin}});
    const auto why =
        fmt::format("dnf versionlock needs {} (not installed), for {}", plugin,
                    rpm_branch_locked(ctx) ? "the driver's branch lock" : "driver.hold_kernel");
    r.reason = r.reason.empty() ? why : r.reason + "; " + why;
}

/// Every host requirement of the profile this host does not meet, each with its own fix.
std::vector<Unmet> unmet_requirements(const StepContext& ctx, const System& sys) {
    std::vector<Unmet> blocked;
    const auto& f = ctx.facts;
    const auto& host = ctx.profile.host;
    if (f.os.repo_slug.empty() || ctx.matrix.distro(f.os.repo_slug) == nullptr) {
        blocked.push_back({fmt::format("unsupported OS '{}' (supported: {})",
                                       f.os.pretty_name.empty() ? f.os.id : f.os.pretty_name,
                                       supported_os_list()),
                           "run gpuprov on one of the supported releases"});
    } else if (!host.os.empty() &&
               std::find(host.os.begin(), host.os.end(), f.os.profile_os) == host.os.end()) {
        blocked.push_back({fmt::format("profile allows host.os [{}], this host is {}",
                                       join(host.os, ", "), f.os.profile_os),
                           fmt::format("add {} to host.os in the profile, or use a host "
                                       "running one of those",
                                       f.os.profile_os)});
    }
    if (f.arch != "x86_64" && f.arch != "aarch64") {
        blocked.push_back(
            {fmt::format("unsupported architecture {}", f.arch), "use an x86_64 or aarch64 host"});
    }
    if (host.gpus) {
        const auto& want = *host.gpus;
        int matching = 0;
        for (const auto& g : f.gpus) {
            const bool model_ok = !want.model || g.model == *want.model ||
                                  (!g.also_model.empty() && g.also_model == *want.model);
            const bool mem_ok = !want.memory_gib || g.memory_gib >= *want.memory_gib;
            matching += model_ok && mem_ok ? 1 : 0;
        }
        if (matching < want.count) {
            blocked.push_back(
                {fmt::format("needs {}× {}{}; found {}", want.count,
                             want.model.value_or("NVIDIA GPU"),
                             want.memory_gib ? fmt::format(" with ≥{} GiB", *want.memory_gib) : "",
                             describe_gpus(f)),
                 "run on a host with those GPUs, or set host.gpus (count, model, "
                 "memory_gib) in the profile to what this host has"});
        }
    }
    // NVIDIA's architecture rules on the GPUs found: flavour, branch window, CUDA, cuDNN.
    for (auto& p : found_gpu_problems(ctx.profile, f, ctx.matrix)) {
        blocked.push_back({std::move(p.problem), std::move(p.fix)});
    }
    if (host.memory_gib) {
        const auto need = static_cast<double>(*host.memory_gib) * kGiB * kMemorySlack;
        if (static_cast<double>(f.memory_bytes) < need) {
            blocked.push_back(
                {fmt::format("needs {} GiB RAM; host has {:.1f} GiB", *host.memory_gib,
                             static_cast<double>(f.memory_bytes) / kGiB),
                 "a host with more memory, or lower host.memory_gib in the "
                 "profile"});
        }
    }
    if (host.disk) {
        const auto space = sys.disk_space(host.disk->path);
        const auto free_gib = space ? static_cast<double>(space->free_bytes) / kGiB : 0.0;
        if (!space || free_gib < host.disk->free_gib) {
            blocked.push_back(
                {fmt::format("needs {} GiB free on {}; {:.1f} GiB free", host.disk->free_gib,
                             host.disk->path, free_gib),
                 fmt::format("free space on {}, or lower host.disk.free_gib", host.disk->path)});
        }
    }
    for (const auto& want : host.disks) {
        check_disk(sys, want, blocked);
    }
    return blocked;
}

/// One unmet requirement per line, each with its fix: a reader acts on them one at a time.
std::string describe(const std::vector<Unmet>& unmet) {
    std::vector<std::string> lines;
    for (const auto& u : unmet) {
        lines.push_back(u.problem + "; fix: " + u.fix);
    }
    if (lines.size() == 1) {
        return lines.front();
    }
    return fmt::format("{} host requirements are not met:\n- {}", lines.size(),
                       join(lines, "\n- "));
}

class Preflight final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "preflight"; }
    [[nodiscard]] std::string_view summary() const override {
        return "host requirements: OS, arch, GPUs, memory, disk, kernel headers";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        const auto blocked = unmet_requirements(ctx, sys);
        if (!blocked.empty()) {
            r.status = StepStatus::blocked;
            r.reason = describe(blocked);
            return r;
        }
        const auto& f = ctx.facts;
        // Canonical's signed modules come built: nothing is compiled on the host.
        if (ctx.profile.driver && !kernel_build_ready(f) && !f.kernel.empty() &&
            !signed_modules_chosen(ctx)) {
            auto pm = package_manager_or_block(ctx, r);
            if (!pm) {
                return r;
            }
            // Headers come from the distribution's own archive, so no NVIDIA pin.
            plan_installs(r, sys, *pm, kernel_build_packages(f, ctx.matrix));
            r.reason = fmt::format("kernel headers for {} are needed to build the driver module",
                                   f.kernel);
        }
        if (ctx.profile.driver && r.status != StepStatus::blocked && !signed_modules_chosen(ctx)) {
            plan_other_kernels(ctx, sys, r);
        }
        plan_versionlock_plugin(ctx, sys, r);
        if (r.status == StepStatus::blocked) {
            return r;
        }
        // A CentOS release past its end of life is provisioned, but said so in the plan.
        if (const auto eol = end_of_life_warning(f.os, iso_date(sys.now())); !eol.empty()) {
            r.reason = r.reason.empty() ? eol : r.reason + "; " + eol;
        }
        return r;
    }

    StepStatus apply(const StepContext&, System&, const CheckResult&, ApplyPhase) override {
        return StepStatus::done;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        static constexpr const char* kSources = "/etc/os-release, /sys/bus/pci/devices, "
                                                "/proc/meminfo, /proc/self/mountinfo, /sys/block";
        const auto unmet = unmet_requirements(ctx, sys);
        if (!unmet.empty()) {
            // One failed check per unmet requirement, each with its own fix.
            std::vector<CheckOutcome> out;
            for (const auto& u : unmet) {
                out.push_back(CheckOutcome{.id = "preflight.host",
                                           .step = "preflight",
                                           .passed = false,
                                           .command = kSources,
                                           .expected = "host meets the profile's requirements",
                                           .found = u.problem,
                                           .fix = u.fix});
            }
            return out;
        }
        const auto r = check(ctx, sys);
        return {CheckOutcome{.id = "preflight.host",
                             .step = "preflight",
                             .passed = r.status == StepStatus::satisfied,
                             .command = kSources,
                             .expected = "host meets the profile's requirements",
                             .found = r.reason.empty() ? "meets them" : r.reason,
                             .fix = r.status == StepStatus::satisfied ? "" : r.reason}};
    }
};

} // namespace

std::unique_ptr<Step> make_preflight() {
    return std::make_unique<Preflight>();
}

} // namespace gpuprov::steps
