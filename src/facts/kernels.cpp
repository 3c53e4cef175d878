// The kernels installed on the host: the one owner of "which kernels may the next boot pick",
// used by the competing-drivers step (one initramfs per kernel), preflight (a build tree per
// kernel) and the driver step (a DKMS build per kernel).
#include "detectors.hpp"

#include <algorithm>
#include <gpuprov/package_db.hpp>

namespace gpuprov::facts_detail {

namespace {

/// Debian: the kernels initramfs-tools manages (its state directory names them on older
/// releases; on Debian 12 the images with an initrd, which `-k all` regenerates). EL: each
/// /lib/modules/<k> that holds the kernel image (kernel-core installs /lib/modules/<k>/vmlinuz; a
/// directory left by DKMS or kernel-devel alone has none). The running kernel when neither names
/// any.
std::vector<std::string> installed_releases(const System& sys, const HostFacts& facts) {
    std::vector<std::string> out;
    if (facts.os.family == "rhel") {
        for (const auto& k : sys.list_dir("/lib/modules")) {
            if (sys.exists("/lib/modules/" + k + "/vmlinuz")) {
                out.push_back(k);
            }
        }
    } else {
        out = sys.list_dir("/var/lib/initramfs-tools");
        // initramfs-tools 0.142 (Debian 12) keeps no state there: `update-initramfs -u -k all`
        // takes `linux-version list` (the /boot/vmlinuz-* images) that already have an initrd.
        for (const auto& f : sys.list_dir("/boot")) {
            if (f.rfind("vmlinuz-", 0) != 0) {
                continue;
            }
            const auto k = f.substr(8);
            if (sys.exists("/boot/initrd.img-" + k) &&
                std::find(out.begin(), out.end(), k) == out.end()) {
                out.push_back(k);
            }
        }
    }
    std::sort(out.begin(), out.end());
    if (out.empty() && !facts.kernel.empty()) {
        out.push_back(facts.kernel);
    }
    return out;
}

} // namespace

bool has_build_link(const System& sys, const std::string& kernel) {
    if (kernel.empty()) {
        return false;
    }
    // Usually a link into /usr/src/linux-headers-* (kernels/<k> on EL); a dangling one means
    // the headers package is gone and DKMS cannot build.
    return sys.is_dir(resolve_path(sys, "/lib/modules/" + kernel + "/build"));
}

bool rpm_for_kernel(const PackageDb& db, std::string_view name, const std::string& kernel) {
    for (const auto& p : db.records()) {
        if (p.installed && p.name == name && !kernel.empty()) {
            const auto evr = split_evr(p.version);
            if (evr.version + "-" + evr.release + "." + p.arch == kernel) {
                return true;
            }
        }
    }
    return false;
}

std::vector<InstalledKernel> read_installed_kernels(const System& sys, const HostFacts& facts) {
    std::vector<InstalledKernel> out;
    const bool el = facts.os.family == "rhel";
    for (auto& k : installed_releases(sys, facts)) {
        const bool link = has_build_link(sys, k);
        const bool ready = link && (!el || rpm_for_kernel(rpm_database(sys), "kernel-devel", k));
        out.push_back(InstalledKernel{.release = std::move(k), .build_tree = ready});
    }
    return out;
}

} // namespace gpuprov::facts_detail
