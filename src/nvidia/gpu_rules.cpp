// Architecture rules against the GPUs found. Sources, quoted where the data lives
// (src/data/nvidia-matrix.yaml `architectures`, `gpus`, `cudnn9`):
// - NVIDIA Driver Installation Guide, "Kernel Modules"
//   (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html):
//   proprietary "is required for older GPUs from the Maxwell, Pascal, or Volta architectures";
//   open modules "are only for Turing and newer architectures, and this is what you should use
//   if you have one of those architectures"; "Starting in the 560 driver release series, the
//   open kernel module flavor is the default and suggested installation."
// - "NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules" (NVIDIA blog, July 2024):
//   Grace Hopper and Blackwell are supported with the open modules only.
// - CUDA Toolkit, Driver and Architecture Matrix: Maxwell, Pascal and Volta end at R580.
#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/strings.hpp>
#include <map>

namespace gpuprov {

namespace {

/// The branch from which NVIDIA makes the open modules the default and suggested flavour.
constexpr int kOpenDefaultSince = 560;

/// GPUs of one PCI id the rules judge, where they are.
struct Judged {
    const GpuModel* gpu = nullptr;
    const Architecture* arch = nullptr;
    std::vector<std::string> addresses; ///< empty: from host.gpus.model
};

struct GpuView {
    std::vector<Judged> known;
    std::vector<std::string> unknown; ///< "0x1234 at 0000:17:00.0"
    bool found = false;               ///< from the PCI scan (else host.gpus.model, or nothing)
};

GpuView gpu_view(const Profile& profile, const HostFacts& facts, const Matrix& matrix) {
    GpuView v;
    std::map<std::uint16_t, std::size_t> at;
    for (const auto& g : facts.gpus) {
        v.found = true;
        const auto* known = matrix.gpu_by_device(g.device_id);
        const auto* arch = known ? matrix.architecture(known->architecture) : nullptr;
        if (arch == nullptr) {
            v.unknown.push_back(fmt::format("0x{:04X} at {}", g.device_id, g.address));
            continue;
        }
        const auto [it, added] = at.emplace(g.device_id, v.known.size());
        if (added) {
            v.known.push_back({known, arch, {}});
        }
        v.known[it->second].addresses.push_back(g.address);
    }
    if (!v.found && profile.host.gpus && profile.host.gpus->model) {
        for (const auto* g : matrix.gpus_of_model(*profile.host.gpus->model)) {
            if (const auto* arch = matrix.architecture(g->architecture)) {
                v.known.push_back({g, arch, {}});
            }
        }
    }
    return v;
}

std::string label(const Judged& j) {
    const auto what = j.gpu->name + " (" + j.gpu->architecture + ")";
    if (j.addresses.empty()) {
        return what + ", host.gpus.model";
    }
    return fmt::format("{}× {} found at {}", j.addresses.size(), what, join(j.addresses, ", "));
}

std::string labels(const std::vector<const Judged*>& js) {
    std::vector<std::string> out;
    for (const auto* j : js) {
        out.push_back(label(*j));
    }
    return join(out, "; ");
}

bool needs_open(const Judged& j) {
    return !j.arch->proprietary_ok || j.gpu->requires_open;
}

constexpr const char* kOpenOnly =
    "NVIDIA supports Blackwell and Grace Hopper with the open kernel modules only (\"NVIDIA "
    "Transitions Fully Towards Open-Source GPU Kernel Modules\"); with the proprietary ones the "
    "module does not bind and nvidia-smi says \"No devices were found\"";
constexpr const char* kNoOpen =
    "the open kernel modules need the GSP of Turing and newer; NVIDIA's driver installation "
    "guide (Kernel Modules): the proprietary flavour \"is required for older GPUs from the "
    "Maxwell, Pascal, or Volta architectures\"";

int branch_of(const DriverSpec& d) {
    return static_cast<int>(parse_int(d.branch).value_or(0));
}

} // namespace

FlavorChoice driver_flavor(const Profile& profile, const HostFacts& facts, const Matrix& matrix) {
    if (!profile.driver) {
        return {};
    }
    const auto& d = *profile.driver;
    if (d.flavor != "auto") {
        return {d.flavor, {}, false};
    }
    FlavorChoice c{.flavor = {}, .why = {}, .automatic = true};
    const int branch = branch_of(d);
    const auto v = gpu_view(profile, facts, matrix);
    if (!v.unknown.empty()) {
        c.why = "driver.flavor auto cannot choose: GPU " + join(v.unknown, ", ") +
                " is not in gpuprov's GPU table (src/data/nvidia-matrix.yaml), so which kernel "
                "modules it loads is unknown";
        return c;
    }
    std::vector<const Judged*> open_only;
    std::vector<const Judged*> no_open;
    for (const auto& j : v.known) {
        if (needs_open(j)) {
            open_only.push_back(&j);
        } else if (!j.arch->open_module_ok) {
            no_open.push_back(&j);
        }
    }
    if (!open_only.empty() && !no_open.empty()) {
        c.why = "driver.flavor auto cannot choose: " + labels(open_only) +
                " need the open kernel modules and " + labels(no_open) +
                " cannot load them; no one driver serves both kinds";
        return c;
    }
    if (!open_only.empty()) {
        c.flavor = "open";
        c.why = labels(open_only) + ": " + kOpenOnly;
        return c;
    }
    if (!no_open.empty()) {
        c.flavor = "proprietary";
        c.why = labels(no_open) + ": " + kNoOpen;
        return c;
    }
    const auto since = fmt::format(
        "NVIDIA's driver installation guide (Kernel Modules): \"Starting in the {} driver "
        "release series, the open kernel module flavor is the default and suggested "
        "installation\"",
        kOpenDefaultSince);
    if (v.known.empty()) {
        // Nothing to judge (no GPU on the bus, no host.gpus.model): NVIDIA's default for the
        // branch, said as such so a reader of the plan sees it was not judged on hardware.
        c.flavor = branch >= kOpenDefaultSince ? "open" : "proprietary";
        c.why =
            fmt::format("no NVIDIA GPU found and no host.gpus.model: NVIDIA's default for "
                        "branch {} ({}); set driver.flavor to proprietary for Maxwell, "
                        "Pascal or Volta GPUs",
                        d.branch,
                        branch >= kOpenDefaultSince
                            ? since
                            : fmt::format("the proprietary modules before R{}", kOpenDefaultSince));
        return c;
    }
    std::vector<const Judged*> all;
    for (const auto& j : v.known) {
        all.push_back(&j);
    }
    if (branch >= kOpenDefaultSince) {
        c.flavor = "open";
        c.why = labels(all) + ": Turing or newer on branch " + d.branch + "; " + since;
    } else {
        c.flavor = "proprietary";
        c.why = fmt::format("{}: branch {} predates R{}, from which NVIDIA makes the open "
                            "modules the default; the proprietary modules are that branch's "
                            "default{}",
                            labels(all), d.branch, kOpenDefaultSince,
                            branch < matrix.open_modules_since()
                                ? fmt::format(" (it has no open modules; they start at R{})",
                                              matrix.open_modules_since())
                                : std::string());
    }
    return c;
}

std::vector<GpuRuleProblem> found_gpu_problems(const Profile& profile, const HostFacts& facts,
                                               const Matrix& matrix) {
    std::vector<GpuRuleProblem> out;
    const auto choice = driver_flavor(profile, facts, matrix);
    if (profile.driver && choice.flavor.empty()) {
        out.push_back({choice.why, "set driver.flavor to open (Turing and newer; required on "
                                   "Blackwell and Grace Hopper) or proprietary (Maxwell, "
                                   "Pascal, Volta) for the GPUs this host has"});
    }
    const auto v = gpu_view(profile, facts, matrix);
    if (!v.found) {
        return out; // the declared model was judged when the profile loaded
    }
    const auto cuda = profile.cuda ? DottedVersion::parse(profile.cuda->version) : std::nullopt;
    for (const auto& j : v.known) {
        const auto what = label(j);
        if (profile.driver && !choice.flavor.empty()) {
            const bool open = choice.flavor == "open";
            if (open && !j.arch->open_module_ok) {
                out.push_back({"driver.flavor open does not support " + what + ": " + kNoOpen,
                               "set driver.flavor to proprietary or auto"});
            }
            if (!open && needs_open(j)) {
                out.push_back({"driver.flavor " + choice.flavor +
                                   " (proprietary kernel modules) "
                                   "does not support " +
                                   what + ": " + kOpenOnly,
                               "set driver.flavor to open or auto"});
            }
        }
        if (profile.driver) {
            const int branch = branch_of(*profile.driver);
            const int first =
                std::max(j.arch->first_branch.value_or(0), j.gpu->first_branch.value_or(0));
            if (branch < first) {
                out.push_back({fmt::format("driver branch {} does not support {}: it needs "
                                           "branch {} or newer",
                                           profile.driver->branch, what, first),
                               fmt::format("set driver.branch to \"{}\" or newer", first)});
            }
            if (j.arch->last_branch && *j.arch->last_branch < branch) {
                out.push_back(
                    {fmt::format("driver branch {} no longer supports {}: NVIDIA's last driver "
                                 "branch for {} is R{} (CUDA Toolkit, Driver and Architecture "
                                 "Matrix: Maxwell, Pascal and Volta end at R{})",
                                 profile.driver->branch, what, j.arch->name, *j.arch->last_branch,
                                 *j.arch->last_branch),
                     fmt::format("set driver.branch to \"{}\" or older", *j.arch->last_branch)});
            }
        }
        if (!cuda) {
            continue;
        }
        const auto need = matrix.min_cuda_for(*j.gpu);
        if (*cuda < need) {
            out.push_back({fmt::format("CUDA {} cannot build code for {} (compute capability "
                                       "{}); it needs CUDA {} or newer",
                                       cuda->str(), what, j.gpu->compute_capability, need.str()),
                           fmt::format("set cuda.version to \"{}\" or newer", need.str())});
        }
        if (j.arch->max_cuda && *j.arch->max_cuda < *cuda) {
            out.push_back(
                {fmt::format("CUDA {} no longer builds code for {}; the last release "
                             "that does is {}",
                             cuda->str(), what, j.arch->max_cuda->str()),
                 fmt::format("set cuda.version to \"{}\" or older", j.arch->max_cuda->str())});
        }
        const auto cudnn =
            profile.cudnn ? DottedVersion::parse(profile.cudnn->version) : std::nullopt;
        const auto cc = DottedVersion::parse(j.gpu->compute_capability);
        if (cudnn && cc && cudnn->major() == 9) {
            if (const auto why = matrix.cudnn9_drops_cc(*cudnn, *cuda, *cc); !why.empty()) {
                out.push_back({what + ": " + why,
                               "set cudnn.version to the release named, or run on GPUs cuDNN " +
                                   profile.cudnn->version + " supports"});
            }
        }
    }
    return out;
}

} // namespace gpuprov
