// The next-boot forecast: per installed kernel, is the nvidia module there at the userspace
// driver's version with the blacklist in its initramfs; and what the next upgrade would break.
// Judged by effects (the module file under /lib/modules/<k>, not a package's promise).
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <gpuprov/dkms.hpp>
#include <gpuprov/forecast.hpp>
#include <gpuprov/kernel_flavour.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/package_db.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/upgrade_preview.hpp>

namespace gpuprov {

namespace {

/// "580.95.05-1ubuntu1" → "580.95.05"; "3:580.95.05-1.el9" → "580.95.05".
std::string upstream(std::string v) {
    if (const auto colon = v.find(':'); colon != std::string::npos) {
        v.erase(0, colon + 1);
    }
    return v.substr(0, v.find('-'));
}

/// The installed package that carries the NVML library the GPUs' userspace loads, in the
/// names each scheme gives it: Ubuntu/NVIDIA's suffixed libnvidia-compute-<b>, the unsuffixed
/// libnvidia-compute, Debian's libnvidia-ml1, EL's nvidia-driver-cuda-libs / nvidia-driver-libs.
std::string userspace_version(const HostFacts& facts) {
    for (const auto* prefix : {"libnvidia-compute", "libnvidia-ml1", "nvidia-driver-cuda-libs",
                               "nvidia-driver-libs", "nvidia-utils-", "nvidia-driver"}) {
        for (const auto& [name, version] : facts.packages) {
            if (starts_with(name, prefix) && !driver_branch_of(version).empty()) {
                return upstream(version);
            }
        }
    }
    return "";
}

bool is_fabric_manager(std::string_view name) {
    return starts_with(name, "nvidia-fabricmanager") || starts_with(name, "nvidia-fabric-manager");
}

std::string fabric_manager_version(const HostFacts& facts) {
    for (const auto& [name, version] : facts.packages) {
        if (is_fabric_manager(name) && !starts_with(name, "nvidia-fabricmanager-devel")) {
            return upstream(version);
        }
    }
    return "";
}

/// The nvidia.ko installed for kernel `k`, wherever DKMS (updates/dkms, EL's extra) or a
/// precompiled package (Ubuntu's linux-modules-nvidia: kernel/nvidia-<b>[srv]/) puts it.
std::string module_path(const System& sys, const std::string& k) {
    const auto base = "/lib/modules/" + k;
    std::vector<std::string> dirs{base + "/updates/dkms", base + "/extra", base + "/updates",
                                  base + "/extra/nvidia", base + "/kernel/drivers/video"};
    for (const auto& d : sys.list_dir(base + "/kernel")) {
        if (starts_with(d, "nvidia")) {
            dirs.push_back(base + "/kernel/" + d);
        }
    }
    for (const auto& d : dirs) {
        for (const auto* name : {"nvidia.ko", "nvidia.ko.xz", "nvidia.ko.zst", "nvidia.ko.gz"}) {
            if (sys.exists(d + "/" + name)) {
                return d + "/" + name;
            }
        }
    }
    return "";
}

std::optional<KernelModule> find_module(const System& sys, const std::string& k,
                                        const std::vector<DkmsEntry>& dkms) {
    const auto path = module_path(sys, k);
    if (path.empty()) {
        return std::nullopt;
    }
    KernelModule m{.path = path, .origin = "precompiled"};
    if (const auto* e = installed_for(dkms, k)) {
        m.version = e->version;
        m.origin = "dkms";
    }
    if (path.find("/updates/dkms/") != std::string::npos) {
        m.origin = "dkms";
    }
    if (m.version.empty() && path.size() > 3 && path.compare(path.size() - 3, 3, ".ko") == 0) {
        if (const auto bytes = sys.read_file(path)) {
            m.version = modinfo_version(*bytes).value_or("");
        }
    }
    return m;
}

/// Canonical's signed precompiled modules on this host (src/steps/driver_signed.hpp): the series
/// of the installed linux-modules-nvidia-<series>-<running kernel> ("580-server"), and the
/// installed flavour metapackage of that series, which brings each new kernel's module with the
/// kernel ("linux-modules-nvidia-580-server-generic"). Empty series: the module is not theirs.
struct PrecompiledSet {
    std::string series;
    std::string meta;
};

PrecompiledSet precompiled_set(const HostFacts& facts) {
    constexpr std::string_view prefix = "linux-modules-nvidia-";
    const auto suffix = "-" + facts.kernel;
    PrecompiledSet out;
    for (const auto& [name, version] : facts.packages) {
        if (starts_with(name, prefix) && name.size() > prefix.size() + suffix.size() &&
            name.ends_with(suffix)) {
            out.series = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
        }
    }
    if (out.series.empty()) {
        return out;
    }
    // The metapackage names a flavour ("generic"), never a release (which starts with a digit);
    // the -open series of the same branch is another series.
    const auto meta_prefix = std::string(prefix) + out.series + "-";
    for (const auto& [name, version] : facts.packages) {
        if (starts_with(name, meta_prefix) && name.size() > meta_prefix.size() &&
            std::isdigit(static_cast<unsigned char>(name[meta_prefix.size()])) == 0 &&
            !starts_with(name, meta_prefix + "open-")) {
            out.meta = name;
        }
    }
    return out;
}

/// dpkg is installing `name` in the run this forecast is part of: unpacked (or half-configured)
/// and selected for install. Ubuntu's kernel image is configured before the module packages that
/// depend on it, so the kernel hook sees Canonical's module package for the new kernel unpacked,
/// its postinst (which joins the signed module into place) still to run.
bool being_installed(const System& sys, const std::string& name) {
    const auto* p = dpkg_database(sys).find(name);
    return p != nullptr &&
           (p->status == "install ok unpacked" || p->status == "install ok half-configured");
}

std::string headers_fix(const HostFacts& facts, const std::string& k) {
    return facts.os.family == "rhel" ? "dnf install kernel-devel-" + k
                                     : "apt-get install linux-headers-" + k;
}

void judge_kernel(const System& sys, const HostFacts& facts, const Forecast& f,
                  const std::vector<DkmsEntry>& dkms, KernelForecast& kf,
                  std::vector<ForecastFinding>& findings) {
    const auto& k = kf.kernel;
    const auto severity = kf.next_boot ? "error" : "warning";
    const auto which = kf.next_boot ? std::string("the next boot's kernel ") + k
                                    : "installed kernel " + k + " (not the next boot's)";
    kf.headers = sys.is_dir("/lib/modules/" + k + "/build");
    kf.module = find_module(sys, k, dkms);
    std::optional<SignatureJudgement> signature;
    if (kf.module && facts.secure_boot.value_or(false)) {
        signature = module_trusted_at_boot(sys, facts, k, *kf.module);
    }
    if (signature) {
        kf.signature_trusted = signature->trusted;
        kf.signer = signature->signer;
    }
    const auto signed_set = precompiled_set(facts);
    const auto module_pkg = "linux-modules-nvidia-" + signed_set.series + "-" + k;
    // The kernel hook during the kernel's own upgrade: the module arrives in the same dpkg run.
    const bool arriving =
        !kf.module && !signed_set.series.empty() && being_installed(sys, module_pkg);
    if (arriving) {
        findings.push_back({.id = "module-package-pending",
                            .severity = "warning",
                            .kernel = k,
                            .summary = fmt::format("{}'s nvidia module comes with {}, which this "
                                                   "package run has unpacked and configures "
                                                   "after the kernel (its postinst puts "
                                                   "Canonical's signed module in place)",
                                                   which, module_pkg),
                            .fix = "none: let the package manager finish; `gpuprov forecast` "
                                   "then finds the module"});
    } else if (!kf.module) {
        std::string fix;
        std::string why;
        const auto source = std::find_if(dkms.begin(), dkms.end(),
                                         [](const DkmsEntry& e) { return !e.version.empty(); });
        const auto dkms_add = source == dkms.end() ? std::string("dkms autoinstall -k ") + k
                                                   : "dkms install " + source->module + "/" +
                                                         source->version + " -k " + k;
        if (!signed_set.series.empty() && !ubuntu_kernel_flavour(k).empty()) {
            // Canonical builds and signs the module per kernel; nothing is built here.
            if (signed_set.meta.empty()) {
                why = "Canonical's module package for it (" + module_pkg +
                      ") is not installed, and no flavour metapackage brings one with each kernel";
                fix = fmt::format("apt-get install {} linux-modules-nvidia-{}-{} (the flavour "
                                  "metapackage: every later kernel update brings its module)",
                                  module_pkg, signed_set.series, ubuntu_kernel_flavour(k));
            } else {
                why = "Canonical's module package for it (" + module_pkg + ") is not installed";
                fix = fmt::format("apt-get update, then apt-get install {} (once the archive "
                                  "publishes it, {} follows the kernel with it)",
                                  module_pkg, signed_set.meta);
            }
        } else if (!kf.headers) {
            why = "its headers are not installed, so DKMS cannot build one";
            fix = headers_fix(facts, k) + ", then " + dkms_add;
        } else {
            why = "DKMS has not built one (or its build failed)";
            fix = dkms_add + (source == dkms.end()
                                  ? std::string()
                                  : " (if it fails: /var/lib/dkms/" + source->module + "/" +
                                        source->version + "/build/make.log)");
        }
        findings.push_back({.id = "kernel-without-module",
                            .severity = severity,
                            .kernel = k,
                            .summary = fmt::format("{} has no nvidia module: {}; the GPUs will "
                                                   "not work when it boots",
                                                   which, why),
                            .fix = fix});
    } else if (!f.driver_version.empty() && !kf.module->version.empty() &&
               kf.module->version != f.driver_version) {
        kf.version_matches = false;
        const auto fix =
            kf.module->origin == "dkms"
                ? fmt::format("dkms install nvidia/{} -k {} (the module source of the installed "
                              "driver), or reinstall the driver's DKMS package",
                              f.driver_version, k)
                : fmt::format("install the module package of driver {} for kernel {}",
                              f.driver_version, k);
        findings.push_back(
            {.id = "module-version-mismatch",
             .severity = severity,
             .kernel = k,
             .summary = fmt::format("{} has nvidia module {}, but the userspace driver is {}: "
                                    "nvidia-smi will fail with \"Driver/library version "
                                    "mismatch\" when it boots",
                                    which, kf.module->version, f.driver_version),
             .fix = fix});
    }
    if (signature && !signature->trusted) {
        findings.push_back(
            {.id = "module-not-trusted",
             .severity = severity,
             .kernel = k,
             .summary =
                 fmt::format("Secure Boot is on and {}'s nvidia module ({}) is not signed "
                             "by a key the kernel trusts: {}{}; the kernel will refuse "
                             "to load it",
                             which, kf.module->path, signature->why,
                             signature->signer.empty() ? std::string()
                                                       : " (signed by " + signature->signer + ")"),
             .fix = signature->fix});
    }
    if (kf.initramfs_blacklisted == false) {
        findings.push_back(
            {.id = "initramfs-without-blacklist",
             .severity = severity,
             .kernel = k,
             .summary = fmt::format("{}'s initramfs predates the nouveau/nova_core blacklist: "
                                    "early boot may bind the GPUs to the open-source driver",
                                    which),
             .fix = facts.os.family == "rhel"
                        ? fmt::format("dracut --force /boot/initramfs-{}.img {}", k, k)
                        : fmt::format("update-initramfs -u -k {}", k)});
    }
    kf.ready = (kf.module.has_value() || arriving) && kf.version_matches &&
               kf.signature_trusted != false && kf.initramfs_blacklisted != false;
}

/// "linux-image-6.1.0-31-amd64" → "6.1.0-31-amd64" (Debian, Ubuntu; unsigned images too);
/// EL's kernel-core at "5.14.0-503.el9" → "5.14.0-503.el9.x86_64". Empty for anything else,
/// metapackages included.
std::string new_kernel_release(const PackageAction& a, const HostFacts& facts) {
    for (const auto* prefix : {"linux-image-unsigned-", "linux-image-"}) {
        if (starts_with(a.name, prefix)) {
            auto rel = a.name.substr(std::string_view(prefix).size());
            // A release starts with a digit: linux-image-amd64 / -generic are metapackages.
            return !rel.empty() && rel[0] >= '0' && rel[0] <= '9' ? rel : "";
        }
    }
    if (a.name == "kernel-core" || (a.name == "kernel" && facts.os.family == "rhel")) {
        auto v = a.to;
        if (const auto colon = v.find(':'); colon != std::string::npos) {
            v.erase(0, colon + 1);
        }
        return v + "." + facts.arch;
    }
    return "";
}

bool installs_headers_for(const std::vector<PackageAction>& actions, const std::string& k,
                          const PackageAction& image) {
    return std::any_of(actions.begin(), actions.end(), [&](const PackageAction& a) {
        return a.name == "linux-headers-" + k ||
               ((a.name == "kernel-devel" || a.name == "kernel-devel-matched") && a.to == image.to);
    });
}

void look_ahead(const System& sys, const HostFacts& facts, const ForecastOptions& opts,
                const std::vector<DkmsEntry>& dkms, Forecast& f) {
    auto& up = f.upgrade;
    if (!opts.look_ahead) {
        up.skipped = "not asked";
        return;
    }
    const auto t = upgrade_preview(sys, facts);
    up.command = t.simulated_with;
    if (!t.error.empty()) {
        up.skipped = t.error;
        return;
    }
    up.asked = true;
    up.actions = t.actions;
    std::string new_userspace;
    std::string new_module;
    std::string new_fabric;
    for (const auto& a : t.actions) {
        if (a.kind == PackageAction::Kind::remove || !is_driver_package(a.name)) {
            continue;
        }
        const auto branch = driver_branch_of(a.to);
        if (branch.empty()) {
            continue;
        }
        const auto v = upstream(a.to);
        if (starts_with(a.name, "libnvidia-compute") || starts_with(a.name, "libnvidia-ml1") ||
            starts_with(a.name, "nvidia-driver-cuda-libs") ||
            starts_with(a.name, "nvidia-driver-libs")) {
            new_userspace = v;
        }
        if (a.name.find("dkms") != std::string::npos || starts_with(a.name, "kmod-nvidia") ||
            starts_with(a.name, "linux-modules-nvidia") ||
            starts_with(a.name, "nvidia-kernel-source") || starts_with(a.name, "nvidia-kmod")) {
            new_module = v;
        }
        if (is_fabric_manager(a.name)) {
            new_fabric = v;
        }
        const auto current = driver_branch_of(f.driver_version);
        const auto wanted =
            opts.profile && opts.profile->driver ? opts.profile->driver->branch : std::string();
        if (!current.empty() && branch != current) {
            const bool off_profile = !wanted.empty() && branch != wanted;
            f.findings.push_back(
                {.id = "upgrade-branch-change",
                 .severity = off_profile ? "error" : "warning",
                 .summary = fmt::format("the next upgrade moves {} from branch {} to {} ({})",
                                        a.name, current, branch, a.to),
                 .fix = "hold the driver on its branch: driver.hold: true (gpuprov apply "
                        "PROFILE --only driver)"});
            break;
        }
    }
    if (!new_userspace.empty() && new_userspace != f.driver_version) {
        if (new_module != new_userspace) {
            f.findings.push_back(
                {.id = "upgrade-userspace-without-module",
                 .severity = "error",
                 .summary = fmt::format(
                     "the next upgrade moves the userspace driver {} -> {} but no kernel module "
                     "of {} comes with it: nvidia-smi will fail with \"Driver/library version "
                     "mismatch\" from then on, before and after a reboot",
                     f.driver_version, new_userspace, new_userspace),
                 .fix = "hold the driver packages (driver.hold: true) until the mirror publishes "
                        "the module of " +
                        new_userspace + "; `" + up.command + "` shows the upgrade"});
        } else {
            f.findings.push_back(
                {.id = "upgrade-needs-reboot",
                 .severity = "warning",
                 .summary = fmt::format("the next upgrade moves the driver {} -> {}: until the "
                                        "reboot that loads the new module, NVML reports a "
                                        "version mismatch",
                                        f.driver_version, new_userspace),
                 .fix = "upgrade the driver in a maintenance window followed by a reboot, or "
                        "hold it (driver.hold: true)"});
        }
    }
    const auto driver_after = new_userspace.empty() ? f.driver_version : new_userspace;
    const auto fabric_after = new_fabric.empty() ? f.fabric_manager_version : new_fabric;
    if (!fabric_after.empty() && !driver_after.empty() && fabric_after != driver_after &&
        (!new_fabric.empty() || !new_userspace.empty())) {
        f.findings.push_back(
            {.id = "upgrade-fabric-manager-skew",
             .severity = "error",
             .summary = fmt::format("after the next upgrade fabric manager would be {} and the "
                                    "driver {}: nv-fabricmanager refuses to start on a version "
                                    "mismatch and the NVSwitch GPUs stay unusable",
                                    fabric_after, driver_after),
             .fix = "hold the driver and fabric manager together (driver.hold: true)"});
    }
    const bool dkms_driver = !dkms.empty();
    for (const auto& a : t.actions) {
        if (a.kind != PackageAction::Kind::install && a.kind != PackageAction::Kind::upgrade) {
            continue;
        }
        const auto k = new_kernel_release(a, facts);
        if (k.empty() || !dkms_driver || f.driver_version.empty()) {
            continue;
        }
        if (!installs_headers_for(t.actions, k, a) && !sys.is_dir("/lib/modules/" + k + "/build")) {
            f.findings.push_back(
                {.id = "upgrade-kernel-without-headers",
                 .severity = "error",
                 .kernel = k,
                 .summary = fmt::format("the next upgrade installs kernel {} without its headers: "
                                        "DKMS cannot build the nvidia module for it, and the boot "
                                        "loader will boot it next",
                                        k),
                 .fix = fmt::format("install the headers metapackage so every kernel brings its "
                                    "own ({}), or hold the kernel (driver.hold_kernel: true)",
                                    facts.os.family == "rhel" ? "dnf install kernel-devel"
                                    : facts.os.id == "ubuntu"
                                        ? "apt-get install linux-headers-generic"
                                        : "apt-get install linux-headers-amd64")});
        }
    }
}

} // namespace

std::optional<std::string> modinfo_version(std::string_view ko_bytes) {
    // .modinfo holds NUL-separated "key=value" strings; "srcversion=" must not match.
    std::size_t at = 0;
    while ((at = ko_bytes.find("version=", at)) != std::string_view::npos) {
        if (at == 0 || ko_bytes[at - 1] == '\0') {
            const auto start = at + 8;
            const auto end = ko_bytes.find('\0', start);
            auto v = std::string(ko_bytes.substr(
                start, end == std::string_view::npos ? std::string_view::npos : end - start));
            if (!v.empty() && v.size() < 64) {
                return v;
            }
        }
        at += 8;
    }
    return std::nullopt;
}

Forecast forecast_next_boot(const System& sys, const HostFacts& facts,
                            const ForecastOptions& opts) {
    Forecast f;
    f.secure_boot = facts.secure_boot;
    f.driver_version = userspace_version(facts);
    f.fabric_manager_version = fabric_manager_version(facts);
    auto kernels = installed_kernel_releases(sys, facts);
    const auto add = [&](const std::string& k) {
        if (!k.empty() && std::find(kernels.begin(), kernels.end(), k) == kernels.end()) {
            kernels.push_back(k);
        }
    };
    add(facts.kernel);
    add(opts.kernel);
    if (opts.kernel.empty()) {
        f.next_boot = boot_default(sys, kernels);
    } else {
        f.next_boot = {.kernel = opts.kernel, .source = "asked for (--kernel)"};
    }
    add(f.next_boot.kernel);
    std::sort(kernels.begin(), kernels.end(),
              [](const std::string& a, const std::string& b) { return kernel_older(a, b); });

    const auto dkms = nvidia_dkms_status(sys, /*log_output=*/false);
    const auto initramfs = judge_initramfs_blacklist(sys, facts);
    if (f.driver_version.empty()) {
        f.findings.push_back(
            {.id = "driver-not-installed",
             .severity = "error",
             .summary = "no NVIDIA driver package is installed: no boot will have working GPUs",
             .fix = "gpuprov apply PROFILE --only driver"});
    }
    for (const auto& k : kernels) {
        KernelForecast kf{
            .kernel = k, .running = k == facts.kernel, .next_boot = k == f.next_boot.kernel};
        for (const auto& j : initramfs) {
            if (j.kernel == k) {
                kf.initramfs_blacklisted = j.carries_blacklist;
            }
        }
        if (!f.driver_version.empty()) {
            judge_kernel(sys, facts, f, dkms, kf, f.findings);
        }
        f.kernels.push_back(std::move(kf));
    }
    if (!f.fabric_manager_version.empty() && !f.driver_version.empty() &&
        f.fabric_manager_version != f.driver_version) {
        f.findings.push_back(
            {.id = "fabric-manager-skew",
             .severity = "error",
             .summary = fmt::format("fabric manager {} is not the driver's version {}: "
                                    "nv-fabricmanager refuses to start and the NVSwitch GPUs "
                                    "stay unusable after the boot",
                                    f.fabric_manager_version, f.driver_version),
             .fix = "gpuprov apply PROFILE --only fabric-manager (installs fabric manager at the "
                    "driver's version)"});
    }
    look_ahead(sys, facts, opts, dkms, f);
    const auto next = std::find_if(f.kernels.begin(), f.kernels.end(),
                                   [](const KernelForecast& k) { return k.next_boot; });
    f.ready = next != f.kernels.end() && next->ready &&
              std::none_of(f.findings.begin(), f.findings.end(),
                           [](const ForecastFinding& x) { return x.severity == "error"; });
    return f;
}

} // namespace gpuprov
