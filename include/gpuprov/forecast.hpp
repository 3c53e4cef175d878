#pragma once
// `gpuprov forecast`: will the next boot come up with working GPUs? For the kernel the boot loader
// boots next and for every installed kernel: is an nvidia module there for it, of the userspace
// driver's version (and fabric manager's), does its initramfs keep the competing drivers out; and
// what the package manager would do next (a userspace bump without its module, a new kernel with
// no buildable module, fabric manager skew, a branch change). The most reported GPU-host failures
// happen at the next boot (../shared/reference/peers-2026.md, P1-P3); this says so before it.
#include <gpuprov/facts.hpp>
#include <gpuprov/system.hpp>
#include <gpuprov/transaction.hpp>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct Profile;

/// The kernel the boot loader boots next, and how that was found.
struct BootDefault {
    std::string kernel; ///< release, "6.1.0-31-amd64"; empty when no kernel is known at all
    /// Where it came from, for the output: "/boot/grub/grubenv saved_entry", "grubby
    /// --default-kernel", "the newest installed kernel (no boot loader default found)".
    std::string source;
    bool fallback = false; ///< no boot loader default was read: the newest installed kernel
};

/// The nvidia module installed for one kernel: where, and which version.
struct KernelModule {
    std::string path;    ///< "/lib/modules/6.1.0-31-amd64/updates/dkms/nvidia.ko"
    std::string version; ///< "580.95.05"; empty when neither DKMS nor the file says
    std::string origin;  ///< "dkms" or "precompiled" (a package's module, not DKMS's)
};

struct KernelForecast {
    std::string kernel;
    bool running = false;
    bool next_boot = false;
    bool headers = false; ///< /lib/modules/<k>/build: DKMS can build for it
    std::optional<KernelModule> module;
    /// The module's version is the userspace driver's (true when either is unknown).
    bool version_matches = true;
    /// The initramfs was regenerated after the competing-driver blacklist (the nouveau step's
    /// judge); nullopt when not judged (no blacklist, no initramfs tooling).
    std::optional<bool> initramfs_blacklisted;
    /// Under Secure Boot: the module is signed by a key the firmware trusts; nullopt when not
    /// judged (Secure Boot off or unknown, no module, or its signer unreadable). Filled by
    /// module_trusted_at_boot().
    std::optional<bool> signature_trusted;
    /// Who signed the module, in words, when judged ("Canonical Ltd. Kernel Module Signing",
    /// "gpuprov's machine owner key 9C4E0B2A17"); empty when unsigned or not judged.
    std::string signer;
    bool ready = false;
};

struct ForecastFinding {
    std::string id;       ///< "kernel-without-module", "userspace-module-mismatch", ...
    std::string severity; ///< "error": the GPUs will not work after that boot; "warning"
    std::string kernel;   ///< the kernel it is about; empty when about the whole host
    std::string summary;
    std::string fix;
};

/// What the package manager would do on its next upgrade (apt-get -s upgrade --with-new-pkgs,
/// dnf upgrade --assumeno), read for the forecast.
struct UpgradePreview {
    bool asked = false;  ///< false: not looked at (see `skipped`)
    std::string command; ///< the simulation's argv, for the output
    std::string skipped; ///< why it was not asked or could not answer
    std::vector<PackageAction> actions;
};

struct Forecast {
    BootDefault next_boot;
    std::string driver_version;         ///< installed userspace driver (upstream), empty: none
    std::string fabric_manager_version; ///< installed fabric manager (upstream), empty: none
    std::optional<bool> secure_boot;
    std::vector<KernelForecast> kernels; ///< oldest first
    UpgradePreview upgrade;
    std::vector<ForecastFinding> findings;
    /// The next boot's kernel is ready and no finding is an error.
    bool ready = false;
};

struct ForecastOptions {
    const Profile* profile = nullptr; ///< optional: the branch it wants, the blacklist
    /// Judge this kernel as the next boot's (the kernel hook's new kernel); empty: the boot
    /// loader's default.
    std::string kernel;
    /// Ask the package manager what its next upgrade would do (a simulation, ~1 s); off for
    /// the metrics timer, which judges what is installed.
    bool look_ahead = true;
};

/// The forecast. Reads files and runs read-only probes (dkms status, grubby, the upgrade
/// simulation of gpuprov/upgrade_preview.hpp) through `sys`.
[[nodiscard]] Forecast forecast_next_boot(const System& sys, const HostFacts& facts,
                                          const ForecastOptions& opts);

/// The `forecast --json` document (docs/schemas/forecast.schema.json).
[[nodiscard]] nlohmann::json forecast_to_json(const Forecast& f);

// ---- pieces, each a pure function over one real format (unit-tested on samples) ----

/// The kernel the boot loader boots next. GRUB: grub.cfg's `set default=` (an index, an id or
/// title, "submenu>entry", or "${saved_entry}" read from grubenv; grubenv's next_entry, set by
/// grub-reboot, first); BLS (EL): `grubby --default-kernel` where grubby answers, else grubenv's
/// saved_entry naming /boot/loader/entries/<id>.conf. Falls back to the newest of `installed`.
[[nodiscard]] BootDefault boot_default(const System& sys,
                                       const std::vector<std::string>& installed);
/// `key=value` lines of a GRUB environment block (#-padding ignored).
[[nodiscard]] std::optional<std::string> grubenv_value(std::string_view grubenv,
                                                       std::string_view key);
/// The kernel release of the grub.cfg menu entry `selector` names (index "0", "1>2", an id or
/// a title, "Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux 6.1.0-31-amd64");
/// empty when none matches.
[[nodiscard]] std::string grub_cfg_entry_kernel(std::string_view grub_cfg,
                                                std::string_view selector);
/// grub.cfg's `set default="..."` value (the last one outside any entry); empty when none.
[[nodiscard]] std::string grub_cfg_default(std::string_view grub_cfg);
/// "/boot/vmlinuz-6.1.0-31-amd64" or "/vmlinuz-5.14.0-427.el9.x86_64" → the release; empty
/// when the path names no vmlinuz.
[[nodiscard]] std::string kernel_of_image(std::string_view path);
/// Orders kernel releases the way their packages' versions sort ("6.1.0-9" < "6.1.0-31").
[[nodiscard]] bool kernel_older(std::string_view a, std::string_view b);
/// The version string of an uncompressed module's .modinfo ("version=580.95.05"); nullopt when
/// the bytes hold none (a compressed module: DKMS status names its version instead).
[[nodiscard]] std::optional<std::string> modinfo_version(std::string_view ko_bytes);

// ---- the owners this forecast asks (defined where those concepts live) ----

/// The kernels installed on the host, the ones whose initramfs the next boot may load (the
/// competing-drivers step's list, src/steps/nouveau.cpp).
[[nodiscard]] std::vector<std::string> installed_kernel_releases(const System& sys,
                                                                 const HostFacts& facts);
/// Per installed kernel, whether its initramfs was regenerated after the competing-driver
/// blacklist was written (the competing-drivers step's judge, src/steps/nouveau.cpp). Empty
/// when there is no blacklist or no initramfs tooling to judge by.
struct InitramfsJudgement {
    std::string kernel;
    std::string image;
    bool carries_blacklist = false;
};
[[nodiscard]] std::vector<InitramfsJudgement> judge_initramfs_blacklist(const System& sys,
                                                                        const HostFacts& facts);

/// Under Secure Boot, whether the kernel will load one kernel's nvidia module: its signer
/// against the keys the kernel trusts (an enrolled machine owner key, the distribution's
/// built-in one), and the fix when not.
struct SignatureJudgement {
    bool trusted = false;
    std::string signer; ///< in words; empty: unsigned
    std::string why;    ///< not trusted: why ("it is unsigned", "that key awaits enrolment")
    std::string fix;    ///< not trusted: what makes it trusted
};
/// The secure-boot step's signer check (src/steps/module_signer.cpp, the one verify uses) for
/// the module installed for `kernel`. nullopt: not judged (Secure Boot off or unknown; modinfo
/// or mokutil cannot answer).
[[nodiscard]] std::optional<SignatureJudgement> module_trusted_at_boot(const System& sys,
                                                                       const HostFacts& facts,
                                                                       const std::string& kernel,
                                                                       const KernelModule& module);

} // namespace gpuprov
