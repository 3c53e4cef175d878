#include "doctor_parts.hpp"

#include <algorithm>
#include <gpuprov/dkms.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

constexpr const char* kDriverVersionFile = "/proc/driver/nvidia/version";
constexpr const char* kRebootRequired = "/var/run/reboot-required";

// "535.129.03-0ubuntu1" → "535.129.03"; "1:535.x-1" → "535.x".
std::string upstream_version(std::string v) {
    if (const auto colon = v.find(':'); colon != std::string::npos) {
        v.erase(0, colon + 1);
    }
    return v.substr(0, v.find('-'));
}

std::string package_lines(const std::map<std::string, std::string>& pkgs) {
    std::vector<std::string> rows;
    for (const auto& [name, version] : pkgs) {
        rows.push_back(name + " " + version);
        if (rows.size() == 4) {
            break;
        }
    }
    return join(rows, "\n");
}

Evidence smi_evidence(const DoctorContext& ctx) {
    return {ctx.smi.command, ctx.smi.result.not_found ? "nvidia-smi: command not found"
                                                      : head_lines(output_of(ctx.smi.result))};
}

void mismatch(const DoctorContext& ctx, const std::map<std::string, std::string>& pkgs,
              std::vector<Finding>& out) {
    Finding f{.id = "nvml-mismatch", .severity = "error"};
    std::string userspace;
    for (const auto& [name, version] : pkgs) {
        userspace = upstream_version(version);
        break;
    }
    const auto proc = ctx.sys.read_file(kDriverVersionFile);
    const auto loaded = proc ? parse_proc_driver_version(*proc) : std::nullopt;
    f.summary = "NVML driver/library version mismatch: userspace " +
                (userspace.empty() ? std::string("unknown") : userspace) +
                ", loaded kernel module " + (loaded ? loaded->version : std::string("unknown"));
    f.evidence.push_back(smi_evidence(ctx));
    if (proc) {
        f.evidence.push_back({kDriverVersionFile, head_lines(*proc, 1)});
    }
    if (!pkgs.empty()) {
        f.evidence.push_back({"dpkg-query/rpm (installed driver packages)", package_lines(pkgs)});
    }
    f.fix = "the driver packages were upgraded but the old kernel module is still loaded: reboot "
            "(or stop every GPU process and reload the nvidia modules)";
    out.push_back(std::move(f));
}

/// The running kernel's nvidia module as the signer judgement reads it: by name (modinfo finds
/// the file the kernel would load), DKMS's when `dkms status` has it installed for this kernel
/// (the fix is then DKMS's re-signing), a package's otherwise.
KernelModule running_module(const DoctorContext& ctx) {
    KernelModule m{.path = "nvidia", .origin = "precompiled"};
    const auto r = probe(ctx.sys, {"dkms", "status"});
    const auto nvidia =
        r.ok() ? nvidia_entries(parse_dkms_status(r.out)) : std::vector<DkmsEntry>{};
    if (installed_for(nvidia, ctx.facts.kernel) != nullptr) {
        m.origin = "dkms";
    }
    return m;
}

/// Under Secure Boot the kernel refuses a module whose signer it does not trust: unsigned, or
/// signed by a key that is neither built in nor an enrolled machine owner key (or one still
/// awaiting MokManager). Judged by the secure-boot step's own comparison (options.judge_signature).
void untrusted_signer(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (ctx.facts.secure_boot != true || ctx.options.judge_signature == nullptr) {
        return;
    }
    const auto module = running_module(ctx);
    const auto j = ctx.options.judge_signature(ctx.sys, ctx.facts, ctx.facts.kernel, module);
    if (!j || j->trusted) {
        return; // trusted, or not judged (modinfo or mokutil could not answer): no guess
    }
    const bool unsigned_module = j->signer.empty();
    Finding f{.id =
                  unsigned_module ? "secure-boot-unsigned-module" : "secure-boot-untrusted-module",
              .severity = "error"};
    f.summary = unsigned_module
                    ? "Secure Boot is on and the nvidia module is not signed, so the kernel "
                      "refuses to load it"
                    : "Secure Boot is on and the kernel does not trust the nvidia module's "
                      "signer " +
                          j->signer + ": " + j->why;
    f.evidence.push_back(smi_evidence(ctx));
    f.evidence.push_back(
        {"/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
         "SecureBoot enabled"});
    f.evidence.push_back({"modinfo nvidia", unsigned_module
                                                ? "(no signature)"
                                                : "signer " + j->signer + "; " + j->why});
    f.fix = j->fix;
    out.push_back(std::move(f));
}

void not_loaded(const DoctorContext& ctx, const std::map<std::string, std::string>& pkgs,
                std::vector<Finding>& out) {
    const auto size_before = out.size();
    const bool reboot_file = ctx.sys.exists(kRebootRequired);
    const bool reboot_journal =
        ctx.options.journal != nullptr && ctx.options.journal->reboot_pending;
    if (reboot_file || reboot_journal) {
        Finding f{.id = "driver-reboot-pending", .severity = "error"};
        f.summary = "the driver is installed but the host has not rebooted since";
        f.evidence.push_back(smi_evidence(ctx));
        if (reboot_file) {
            const auto pkgs_file = ctx.sys.read_file(std::string(kRebootRequired) + ".pkgs");
            f.evidence.push_back({kRebootRequired, head_lines(pkgs_file.value_or("present"))});
        }
        if (reboot_journal) {
            f.evidence.push_back({kJournalPath, "reboot_pending: true"});
        }
        f.fix = "reboot; gpuprov-resume.service continues the apply afterwards";
        out.push_back(std::move(f));
    }
    untrusted_signer(ctx, out);
    const auto bound = std::find_if(ctx.facts.gpus.begin(), ctx.facts.gpus.end(),
                                    [](const PciGpu& g) { return g.driver == "nouveau"; });
    if (ctx.facts.nouveau_loaded || bound != ctx.facts.gpus.end()) {
        Finding f{.id = "nouveau-bound", .severity = "error"};
        f.summary = "the nouveau driver holds the GPU, so the nvidia module cannot bind it";
        f.evidence.push_back(smi_evidence(ctx));
        if (bound != ctx.facts.gpus.end()) {
            f.evidence.push_back(
                {"/sys/bus/pci/devices/" + bound->address + "/driver", "-> nouveau"});
        } else {
            f.evidence.push_back({"/proc/modules", "nouveau loaded"});
        }
        f.fix = "blacklist nouveau and rebuild the initramfs (" +
                apply_hint(ctx.options, "nouveau") + "), then reboot";
        out.push_back(std::move(f));
    }
    const auto nova = gpus_bound_to_nova_core(ctx.facts);
    if (!nova.empty() || ctx.facts.nova_core_loaded) {
        // Ubuntu 26.04's 7.0 kernel ships nova_core (CONFIG_NOVA_CORE=m), which binds Turing and
        // newer before nvidia can; `modprobe nvidia` then fails (beclab/Olares PR#3963).
        Finding f{.id = "nova-core-bound", .severity = "error"};
        f.summary = "the nova_core driver holds the GPU, so the nvidia module cannot bind it";
        f.evidence.push_back(smi_evidence(ctx));
        if (!nova.empty()) {
            f.evidence.push_back({"/sys/bus/pci/devices/" + nova.front()->address + "/driver",
                                  "-> " + nova.front()->driver});
        } else {
            f.evidence.push_back({"/sys/module/nova_core", "nova_core loaded"});
        }
        f.fix = "blacklist nova_core and nova_drm and rebuild every initramfs (" +
                apply_hint(ctx.options, "nouveau") + "), then reboot";
        out.push_back(std::move(f));
    }
    if (out.size() == size_before) {
        Finding f{.id = "driver-not-loaded", .severity = "error"};
        f.summary = "driver packages are installed but the nvidia kernel module is not loaded";
        f.evidence.push_back(smi_evidence(ctx));
        f.evidence.push_back({"installed driver packages", package_lines(pkgs)});
        f.fix = "run `modprobe nvidia` and read `dmesg | grep -i nvrm`; check that DKMS built the "
                "module for this kernel (`dkms status`)";
        out.push_back(std::move(f));
    }
}

void dkms_kernel(const DoctorContext& ctx, std::vector<Finding>& out) {
    const std::vector<std::string> argv = {"dkms", "status"};
    const auto r = probe(ctx.sys, argv);
    if (!r.ok()) {
        return; // no DKMS: pre-built modules (linux-modules-nvidia, precompiled kmods)
    }
    const auto nvidia = nvidia_entries(parse_dkms_status(r.out));
    if (nvidia.empty() || ctx.facts.kernel.empty()) {
        return;
    }
    if (installed_for(nvidia, ctx.facts.kernel) != nullptr) {
        return;
    }
    Finding f{.id = "dkms-module-missing", .severity = "error"};
    f.evidence.push_back({display_argv(argv), head_lines(r.out)});
    f.evidence.push_back({"/proc/sys/kernel/osrelease", ctx.facts.kernel});
    const auto headers = ctx.facts.os.family == "rhel"
                             ? "dnf install kernel-devel-" + ctx.facts.kernel
                             : "apt-get install linux-headers-" + ctx.facts.kernel;
    // "added" and nothing built for any kernel: DKMS never produced the module (a failed or
    // skipped build, e.g. a kernel newer than the driver supports), not a kernel upgrade.
    const bool never_built = std::none_of(nvidia.begin(), nvidia.end(), [](const DkmsEntry& e) {
        return !e.kernel.empty() &&
               (starts_with(e.state, "installed") || starts_with(e.state, "built"));
    });
    if (never_built) {
        f.summary = "DKMS never built the nvidia module (" + nvidia.front().module + "/" +
                    nvidia.front().version +
                    " is only added): its build failed or was skipped "
                    "for kernel " +
                    ctx.facts.kernel;
        f.fix = "read /var/lib/dkms/" + nvidia.front().module + "/" + nvidia.front().version +
                "/build/make.log and `dkms install " + nvidia.front().module + "/" +
                nvidia.front().version + " -k " + ctx.facts.kernel +
                "`; a kernel newer than the driver branch supports needs a newer branch or the "
                "distribution's supported kernel (" +
                headers + " first if headers are missing)";
    } else {
        f.summary = "DKMS has no nvidia module for the running kernel " + ctx.facts.kernel +
                    " (kernel upgraded without a module build)";
        f.fix = headers + " && dkms autoinstall -k " + ctx.facts.kernel +
                ", then modprobe nvidia; `driver.hold_kernel: true` stops it recurring";
    }
    out.push_back(std::move(f));
}

} // namespace

void diagnose_driver(const DoctorContext& ctx, std::vector<Finding>& out) {
    const auto pkgs = driver_packages(ctx.facts);
    if (!ctx.smi.result.ok()) {
        const auto failure = classify_smi_failure(output_of(ctx.smi.result));
        if (failure == SmiFailure::version_mismatch) {
            mismatch(ctx, pkgs, out);
        } else if (pkgs.empty()) {
            Finding f{.id = "driver-not-installed", .severity = "error"};
            f.summary = "no NVIDIA driver package is installed";
            f.evidence.push_back(smi_evidence(ctx));
            f.fix = "install the driver: " + apply_hint(ctx.options, "driver");
            out.push_back(std::move(f));
        } else {
            not_loaded(ctx, pkgs, out);
        }
    }
    if (!pkgs.empty()) {
        dkms_kernel(ctx, out);
    }
}

} // namespace gpuprov::nvidia_detail
