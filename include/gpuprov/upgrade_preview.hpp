#pragma once
// What the package manager's next upgrade would do, without changing anything, holds and
// versionlocks applied; each backend answers in its own file (src/pkg/apt, src/pkg/dnf). Read by
// the next-boot forecast (gpuprov/forecast.hpp).
#include <gpuprov/facts.hpp>
#include <gpuprov/system.hpp>
#include <gpuprov/transaction.hpp>

namespace gpuprov {

/// `apt-get --simulate upgrade --with-new-pkgs` (what `apt upgrade` and unattended-upgrades
/// install: a kernel metapackage's upgrade brings the new ABI's image; held packages stay).
[[nodiscard]] PackageTransaction apt_upgrade_preview(const System& sys);
/// `dnf --assumeno upgrade`, as root only (dnf's CLI refuses otherwise: `error` says so).
[[nodiscard]] PackageTransaction dnf_upgrade_preview(const System& sys);
/// apt on the debian family, dnf on the rhel family; `error` set for any other host.
[[nodiscard]] inline PackageTransaction upgrade_preview(const System& sys, const HostFacts& facts) {
    if (facts.os.family == "debian") {
        return apt_upgrade_preview(sys);
    }
    if (facts.os.family == "rhel") {
        return dnf_upgrade_preview(sys);
    }
    PackageTransaction t;
    t.error = "no package manager gpuprov knows on this host";
    return t;
}

} // namespace gpuprov
