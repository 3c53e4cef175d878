#include "probe.hpp"

#include <gpuprov/checks.hpp>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/strings.hpp>
#include <optional>

namespace gpuprov {

using namespace nvidia_detail;

namespace {

constexpr const char* kDriverStep = "driver";
constexpr const char* kProcVersion = "/proc/driver/nvidia/version";

CheckOutcome smi_failure(const GpuQuery& q, const std::string& apply_hint) {
    auto c = make_outcome("driver.nvidia-smi", kDriverStep, q.command);
    c.expected = "nvidia-smi lists the GPUs";
    c.excerpt = head_lines(output_of(q.result));
    if (q.result.not_found) {
        c.found = "nvidia-smi is not installed";
        c.fix = "install the driver: " + apply_hint;
    } else if (q.result.ok()) {
        c.found = "no GPUs listed";
        c.fix = "check `lspci -nn -d 10de:` and `dmesg | grep NVRM`; run `gpuprov doctor`";
    } else {
        switch (classify_smi_failure(output_of(q.result))) {
        case SmiFailure::version_mismatch:
            c.found = "NVML driver/library version mismatch";
            c.fix = "the loaded kernel module is older than the userspace libraries: reboot to "
                    "load the new module";
            break;
        case SmiFailure::driver_not_loaded:
            c.found = "the NVIDIA kernel module is not loaded";
            c.fix = "run `gpuprov doctor` for the cause (reboot pending, Secure Boot, nouveau)";
            break;
        case SmiFailure::none:
            c.found = "nvidia-smi failed: " + failure_text(q.result);
            c.fix = "run `gpuprov doctor`";
            break;
        }
    }
    settle(c, false);
    return c;
}

int branch_of(const std::string& version) {
    const auto v = DottedVersion::parse(version);
    return v ? v->major() : 0;
}

/// A GPU bound to nova_core (its sysfs `driver` link): the NVIDIA module cannot bind it while
/// nova_core holds it, whatever nvidia-smi says about the other GPUs. nullopt when none is.
std::optional<CheckOutcome> nova_bound(const VerifyInput& in) {
    std::vector<std::string> held;
    for (const auto* g : gpus_bound_to_nova_core(in.facts)) {
        held.push_back(g->address);
    }
    if (held.empty()) {
        return std::nullopt;
    }
    auto c = make_outcome("driver.bound", kDriverStep,
                          "/sys/bus/pci/devices/" + held.front() + "/driver");
    c.expected = "no GPU bound to nova_core";
    c.found = join(held, ", ") + " bound to nova_core";
    c.fix = "blacklist nova_core and nova_drm and rebuild the initramfs (gpuprov apply " +
            in.profile.name + " --only nouveau), then reboot";
    settle(c, false);
    return c;
}

} // namespace

std::vector<CheckOutcome> check_driver(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.driver) {
        return out;
    }
    if (auto c = nova_bound(in)) {
        out.push_back(std::move(*c));
    }
    const auto& spec = *in.profile.driver;
    const auto apply_hint = "gpuprov apply " + in.profile.name + " --only driver";
    const auto q = query_gpus(sys);
    if (!q.ok()) {
        // Everything below reads nvidia-smi's answer; one clear failure says more than five.
        out.push_back(smi_failure(q, apply_hint));
        return out;
    }
    const auto& version = q.gpus.front().driver_version;

    auto smi = make_outcome("driver.nvidia-smi", kDriverStep, q.command);
    smi.expected = "nvidia-smi lists the GPUs";
    smi.found = std::to_string(q.gpus.size()) + " GPU(s), driver " + version;
    smi.excerpt = head_lines(q.result.out, 2);
    settle(smi, true);
    out.push_back(smi);

    auto branch = make_outcome("driver.branch", kDriverStep, q.command);
    branch.expected = "branch " + spec.branch;
    branch.found = version;
    branch.fix = "install the " + spec.branch + " branch: " + apply_hint;
    settle(branch, std::to_string(branch_of(version)) == spec.branch);
    out.push_back(branch);

    auto module = make_outcome("driver.kernel-module", kDriverStep, kProcVersion);
    module.expected = "kernel module " + version + " (same as userspace)";
    const auto proc = sys.read_file(kProcVersion);
    const auto loaded = proc ? parse_proc_driver_version(*proc) : std::nullopt;
    if (proc) {
        module.excerpt = head_lines(*proc, 1);
    }
    module.found = loaded ? loaded->version : "no module loaded";
    module.fix = "reboot so that the " + version + " kernel module is loaded";
    settle(module, loaded && loaded->version == version);
    out.push_back(module);

    if (loaded) {
        auto flavor = make_outcome("driver.flavor", kDriverStep, kProcVersion);
        const auto wanted = driver_flavor(in.profile, in.facts, in.matrix).flavor;
        const bool want_open = wanted == "open";
        flavor.expected = want_open ? "open kernel module" : "proprietary kernel module";
        flavor.found = loaded->open_module ? "open kernel module" : "proprietary kernel module";
        flavor.excerpt = module.excerpt;
        flavor.fix = "install the " + wanted + " flavor: " + apply_hint;
        settle(flavor, loaded->open_module == want_open);
        out.push_back(flavor);
    }

    if (in.profile.cuda) {
        auto support = make_outcome("driver.cuda-support", kDriverStep, q.command);
        const auto wanted = DottedVersion::parse(in.profile.cuda->version);
        const auto* release = wanted ? in.matrix.cuda(*wanted) : nullptr;
        const auto have = DottedVersion::parse(version);
        support.found = version;
        if (release == nullptr) {
            support.expected = "CUDA " + in.profile.cuda->version + " in the version matrix";
            support.fix = "use a CUDA release gpuprov knows (gpuprov profiles show)";
            settle(support, false);
        } else {
            // Minor version compatibility: any driver at or above the major's floor runs the
            // toolkit (with a limited feature set); below it nothing does.
            const auto* mvc = in.matrix.minor_version_compat(release->version.major());
            const auto& floor = mvc != nullptr ? mvc->min_driver : release->min_driver;
            support.expected =
                ">= " + floor.str() +
                (mvc != nullptr
                     ? " (minor version compatibility for CUDA " + std::to_string(mvc->cuda_major) +
                           ".x; toolkit driver of CUDA " + in.profile.cuda->version + ": " +
                           release->min_driver.str() + ")"
                     : " (toolkit driver of CUDA " + in.profile.cuda->version + ")");
            support.fix = "install a driver of branch " + std::to_string(release->driver_branch) +
                          " or newer: " + apply_hint;
            settle(support, have && floor <= *have);
        }
        out.push_back(support);
    }
    return out;
}

} // namespace gpuprov
