// Impossible combinations that no single key shows: a CUDA release the driver branch cannot
// run, a cuDNN build that does not exist for the CUDA, a kernel-module flavor the GPU cannot
// load. Distro-specific gaps (CUDA not in this distro's repo) are the planner's: it reports them
// as blocked for that host instead of refusing the profile everywhere.
#include "internal.hpp"

#include <algorithm>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::profile_detail {
namespace {

std::string newest_cuda_for_branch(const Matrix& matrix, int branch) {
    std::string newest;
    for (const auto& rel : matrix.cuda_releases()) {
        if (rel.driver_branch <= branch) {
            newest = rel.version.str();
        }
    }
    return newest;
}

/// True unless the profile names a GPU model that is not a data-center part (forward
/// compatibility applies to data-center GPUs only).
bool datacenter_gpus(const Profile& p, const Matrix& matrix) {
    if (!p.host.gpus || !p.host.gpus->model) {
        return true;
    }
    const auto devices = matrix.gpus_of_model(*p.host.gpus->model);
    return std::all_of(devices.begin(), devices.end(),
                       [](const GpuModel* g) { return g->datacenter; });
}

/// TensorRT packages are built per CUDA release, and a TensorRT major only for some CUDA majors.
void check_tensorrt(const Profile& p, const Matrix& matrix,
                    const std::optional<DottedVersion>& cuda) {
    if (!cuda) {
        fail(p.pos("tensorrt"), "tensorrt needs cuda.version: TensorRT packages are built per CUDA "
                                "release. Add cuda: {version: \"X.Y\"} or remove tensorrt");
    }
    const auto want = DottedVersion::parse(p.tensorrt->version);
    const auto* line = matrix.tensorrt(want->major());
    const auto& majors = line->cuda_majors;
    if (std::find(majors.begin(), majors.end(), cuda->major()) != majors.end()) {
        return;
    }
    std::vector<std::string> names;
    for (const int m : majors) {
        names.push_back(std::to_string(m) + ".x");
    }
    std::vector<std::string> others;
    for (const auto& other : matrix.tensorrt_lines()) {
        const auto& om = other.cuda_majors;
        if (std::find(om.begin(), om.end(), cuda->major()) != om.end()) {
            others.push_back("\"" + std::to_string(other.major) + "\"");
        }
    }
    fail(p.pos("tensorrt.version"),
         "TensorRT " + std::to_string(line->major) + " has no builds for CUDA " + cuda->str() +
             " (only for CUDA " + join(names, ", ") + ")" +
             (others.empty()
                  ? ". Remove tensorrt or choose another cuda.version"
                  : ". Use tensorrt.version " + join(others, " or ") + " or another cuda.version"));
}

void check_driver_runs_cuda(const Profile& p, const Matrix& matrix, const CudaRelease& cuda) {
    if (!p.driver) {
        return;
    }
    const int branch = static_cast<int>(*parse_int(p.driver->branch));
    const bool datacenter = datacenter_gpus(p, matrix);
    const auto exact = p.driver->version ? DottedVersion::parse(*p.driver->version)
                                         : std::optional<DottedVersion>{};
    const auto fit = matrix.driver_runs_cuda(branch, exact, cuda, datacenter);
    if (fit.kind != DriverCudaFit::Kind::too_old) {
        return;
    }
    const auto older = newest_cuda_for_branch(matrix, branch);
    const auto* mvc = matrix.minor_version_compat(cuda.version.major());
    const int floor = mvc != nullptr ? mvc->min_driver.major() : cuda.driver_branch;
    if (exact && branch >= cuda.driver_branch) {
        fail(p.pos("driver.version"), "driver " + exact->str() + " is too old for CUDA " +
                                          cuda.version.str() + ": " + fit.note +
                                          ". Set driver.version to " + cuda.min_driver.str() +
                                          " or newer, or omit it for the newest in the branch");
    }
    fail(p.pos("driver.branch"),
         "driver branch " + p.driver->branch + " is too old for CUDA " + cuda.version.str() +
             ", which needs branch " + std::to_string(cuda.driver_branch) +
             " or newer (toolkit driver " + cuda.min_driver.str() + ")" +
             (floor < cuda.driver_branch ? ", or branch " + std::to_string(floor) +
                                               " or newer under minor version compatibility"
                                         : std::string()) +
             (datacenter ? ". On data-center GPUs, NVIDIA's forward compatibility package " +
                               matrix.forward_compat_package(cuda.version) +
                               " also runs it on an older branch (gpuprov does not install it)"
                         : std::string()) +
             ". Set driver.branch to \"" + std::to_string(cuda.driver_branch) + "\" or newer" +
             (older.empty() ? std::string() : ", or cuda.version to \"" + older + "\" or older"));
}

void check_cudnn(const Profile& p, const Matrix& matrix, const DottedVersion& cuda) {
    if (!p.cudnn) {
        return;
    }
    const auto at = p.pos("cudnn.version");
    const auto wanted = *DottedVersion::parse(p.cudnn->version);
    if (wanted.major() == 9) {
        const auto fit = matrix.cudnn9_for(wanted, cuda);
        if (fit.kind == Cudnn9Fit::Kind::unsupported) {
            fail(at, fit.message);
        }
        return;
    }
    if (matrix.cudnn8_for(wanted, cuda)) {
        return;
    }
    std::vector<std::string> builds;
    for (const auto& build : matrix.cudnn8_builds()) {
        if (DottedVersion::parse(build.cudnn)->has_prefix(wanted)) {
            for (const auto& c : build.cuda) {
                const auto s = c.str();
                if (std::find(builds.begin(), builds.end(), s) == builds.end()) {
                    builds.push_back(s);
                }
            }
        }
    }
    std::sort(builds.begin(), builds.end(), [](const std::string& a, const std::string& b) {
        return *DottedVersion::parse(a) < *DottedVersion::parse(b);
    });
    std::string msg = "cuDNN " + p.cudnn->version + " has no build for CUDA " + cuda.str();
    if (builds.empty()) {
        msg += " (no cuDNN " + p.cudnn->version + " builds are known)";
    } else {
        msg += "; its builds are for CUDA " + join(builds, ", ") +
               " (a +cudaX.Y build serves the releases of major X its support matrix lists and "
               "later X.* releases)";
    }
    msg += matrix.cudnn9_supports(cuda) ? ". Use cudnn \"9\" with CUDA " + cuda.str()
                                        : ". Pick a CUDA release that cuDNN build serves";
    fail(at, msg);
}

void check_gpu(const Profile& p, const Matrix& matrix, const std::optional<DottedVersion>& cuda) {
    if (!p.host.gpus || !p.host.gpus->model) {
        return;
    }
    const auto& model = *p.host.gpus->model;
    const auto devices = matrix.gpus_of_model(model);
    if (devices.empty()) {
        return;
    }
    const auto* arch = matrix.architecture(devices.front()->architecture);
    if (arch == nullptr) {
        return;
    }
    // auto resolves at plan to a flavour the GPUs load (gpu_rules.cpp); only an explicit one
    // can contradict the declared model here.
    if (p.driver && p.driver->flavor != "auto") {
        const bool open = p.driver->flavor == "open";
        if (open && !arch->open_module_ok) {
            fail(p.pos("driver.flavor"),
                 "the open kernel modules do not support " + model + " (" + arch->name +
                     "); they need Turing or newer. Set driver.flavor to proprietary");
        }
        const bool open_only =
            !arch->proprietary_ok || std::all_of(devices.begin(), devices.end(),
                                                 [](const auto* g) { return g->requires_open; });
        if (!open && open_only) {
            fail(p.pos("driver.flavor"),
                 "the proprietary kernel modules do not support " + model + " (" + arch->name +
                     "); NVIDIA supports it with the open modules only (with the proprietary "
                     "ones the module does not bind and nvidia-smi says \"No devices were "
                     "found\"). Set driver.flavor to open or auto");
        }
    }
    if (!cuda) {
        return;
    }
    DottedVersion need;
    std::string why = arch->name;
    for (const auto* device : devices) {
        const auto device_need = matrix.min_cuda_for(*device);
        if (need < device_need) {
            need = device_need;
            why = arch->name + ", compute capability " + device->compute_capability;
        }
    }
    if (*cuda < need) {
        fail(p.pos("cuda.version"), "CUDA " + cuda->str() + " cannot build code for " + model +
                                        " (" + why + "); it needs CUDA " + need.str() +
                                        " or newer. Set cuda.version to \"" + need.str() +
                                        "\" or newer");
    }
    if (arch->max_cuda && *arch->max_cuda < *cuda) {
        fail(p.pos("cuda.version"), "CUDA " + cuda->str() + " no longer builds code for " + model +
                                        " (" + arch->name +
                                        "); the last release that "
                                        "does is " +
                                        arch->max_cuda->str());
    }
    if (p.cudnn) {
        const auto wanted = *DottedVersion::parse(p.cudnn->version);
        for (const auto* device : devices) {
            const auto cc = DottedVersion::parse(device->compute_capability);
            const auto drops = wanted.major() == 9 && cc
                                   ? matrix.cudnn9_drops_cc(wanted, *cuda, *cc)
                                   : std::string();
            if (!drops.empty()) {
                fail(p.pos("cudnn.version"), model + " (" + device->name + "): " + drops);
            }
        }
    }
}

void check_gpu_branch(const Profile& p, const Matrix& matrix) {
    if (!p.driver || !p.host.gpus || !p.host.gpus->model) {
        return;
    }
    const auto& model = *p.host.gpus->model;
    const auto devices = matrix.gpus_of_model(model);
    const auto* arch =
        devices.empty() ? nullptr : matrix.architecture(devices.front()->architecture);
    if (arch == nullptr) {
        return;
    }
    const int branch = static_cast<int>(*parse_int(p.driver->branch));
    // A board may need a later branch than its architecture (B300, compute capability 10.3).
    int first = arch->first_branch.value_or(0);
    for (const auto* device : devices) {
        first = std::max(first, device->first_branch.value_or(0));
    }
    if (branch < first) {
        fail(p.pos("driver.branch"),
             "driver branch " + p.driver->branch + " does not support " + model + " (" +
                 arch->name + "), which needs branch " + std::to_string(first) +
                 " or newer. Set driver.branch to \"" + std::to_string(first) + "\" or newer");
    }
    if (arch->last_branch && *arch->last_branch < branch) {
        fail(p.pos("driver.branch"),
             "driver branch " + p.driver->branch + " no longer supports " + model + " (" +
                 arch->name + "); the last branch that does is " +
                 std::to_string(*arch->last_branch) + ". Set driver.branch to \"" +
                 std::to_string(*arch->last_branch) + "\" or older");
    }
}

void check_open_modules_exist(const Profile& p, const Matrix& matrix) {
    if (!p.driver || p.driver->flavor != "open") {
        return;
    }
    const int branch = static_cast<int>(*parse_int(p.driver->branch));
    if (branch < matrix.open_modules_since()) {
        fail(p.pos("driver.flavor"),
             "driver branch " + p.driver->branch +
                 " has no open kernel modules; NVIDIA ships them from branch " +
                 std::to_string(matrix.open_modules_since()) +
                 " on. Set driver.flavor to proprietary, or driver.branch to \"" +
                 std::to_string(matrix.open_modules_since()) + "\" or newer");
    }
}

/// Whether the profile is for an OS whose NVIDIA key the matrix knows by file name only
/// (host.os names it), so a pin outside the known fingerprints may be that key.
bool pins_unknown_nvidia_key(const Profile& p, const Matrix& matrix) {
    for (const auto& d : matrix.distros()) {
        if (d.key_fingerprint.empty() &&
            std::find(p.host.os.begin(), p.host.os.end(), d.os) != p.host.os.end()) {
            return true;
        }
    }
    return false;
}

} // namespace

/// NVIDIA's own repository URLs must carry a key NVIDIA signs them with; which one depends on
/// the host's distro, so the planner checks the exact key (check_apt_repo) and this only
/// refuses fingerprints NVIDIA uses for none of them.
void check_nvidia_repo_keys(const Profile& p, const Matrix& matrix) {
    for (const auto& [name, spec] : p.repositories) {
        std::vector<std::string> allowed;
        if (Matrix::is_nvidia_cuda_repo(spec.url)) {
            // A key the matrix knows by file name only (rhel10's CDF6BA43.pub) may be the one
            // pinned when the profile is for that OS: nothing here can tell it from a wrong one.
            if (pins_unknown_nvidia_key(p, matrix)) {
                continue;
            }
            allowed = matrix.cuda_repo_fingerprints();
        } else if (Matrix::is_nvidia_container_repo(spec.url)) {
            allowed = {matrix.container_key_fingerprint()};
        }
        // No pin: NVIDIA's key for the host's distro is used (resolve_host_repo).
        if (allowed.empty() || spec.key_fingerprint.empty() ||
            std::find(allowed.begin(), allowed.end(), spec.key_fingerprint) != allowed.end()) {
            continue;
        }
        const auto unknown = matrix.cuda_repo_unknown_keys();
        fail(p.pos("repositories." + name + ".key_fingerprint"),
             "'repositories." + name + ".key_fingerprint' is " + spec.key_fingerprint +
                 ", a key NVIDIA does not sign " + spec.url +
                 " with; NVIDIA's keys for it (gpuprov's version matrix): " + join(allowed, ", ") +
                 ". A re-signed mirror needs its own url" +
                 (unknown.empty() || !Matrix::is_nvidia_cuda_repo(spec.url)
                      ? std::string()
                      : ". NVIDIA's " + join(unknown, ", ") +
                            " is known by file name only: its fingerprint is accepted when "
                            "host.os names that OS"));
    }
}

/// A Kubernetes node's pods reach the GPUs through the nvidia runtime of the runtime the kubelet
/// talks to (CRI): containerd or CRI-O, configured by the container toolkit.
void check_kubernetes(const Profile& p) {
    if (!p.kubernetes || !p.kubernetes->node) {
        return;
    }
    if (!p.container || !p.container->toolkit) {
        fail(p.pos("kubernetes.node"),
             "kubernetes.node: true needs the NVIDIA container toolkit in the node's container "
             "runtime (the device plugin and GPU pods run through its nvidia runtime). Add "
             "container: {toolkit: true, runtime: containerd} (or runtime: crio)");
    }
    if (p.container->runtime == "docker") {
        const auto key =
            p.positions.count("container.runtime") != 0 ? "container.runtime" : "container";
        fail(p.pos(key), "kubernetes.node: true needs container.runtime containerd or crio, a "
                         "runtime the kubelet talks to over CRI (Kubernetes 1.24 removed "
                         "dockershim); got docker. Set container.runtime: containerd");
    }
}

/// IMEX comes at the driver's exact version (its service aborts on another loaded driver, NVIDIA
/// IMEX guide "Getting Started"), from the branches NVIDIA publishes it for.
void check_imex(const Profile& p, const Matrix& matrix) {
    if (!p.fabric.imex) {
        return;
    }
    if (!p.driver) {
        fail(p.pos("fabric.imex"), "fabric.imex: true needs a driver section: nvidia-imex is "
                                   "installed at the driver's version. Add driver: {branch: "
                                   "\"580\"} (or newer) or set fabric.imex: false");
    }
    const int branch = static_cast<int>(parse_int(p.driver->branch).value_or(0));
    const auto* names = matrix.package_names("debian");
    if (names != nullptr && names->imex_for(branch).empty()) {
        fail(p.pos("fabric.imex"),
             "fabric.imex: true needs driver branch 550 or newer (NVIDIA publishes nvidia-imex "
             "from R550); driver.branch is " +
                 p.driver->branch);
    }
}

void check_combinations(const Profile& p, const Matrix& matrix) {
    check_open_modules_exist(p, matrix);
    check_nvidia_repo_keys(p, matrix);
    std::optional<DottedVersion> cuda;
    if (p.cuda) {
        cuda = DottedVersion::parse(p.cuda->version);
        check_driver_runs_cuda(p, matrix, *matrix.cuda(*cuda));
    }
    if (p.cudnn) {
        if (!cuda) {
            fail(p.pos("cudnn"), "cudnn needs cuda.version: cuDNN packages are built per CUDA "
                                 "release. Add cuda: {version: \"X.Y\"} or remove cudnn");
        }
        check_cudnn(p, matrix, *cuda);
    }
    if (p.nccl && !cuda) {
        fail(p.pos("nccl"), "nccl: true needs cuda.version: NCCL packages are built per CUDA "
                            "release. Add cuda: {version: \"X.Y\"} or set nccl: false");
    }
    if (p.tensorrt) {
        check_tensorrt(p, matrix, cuda);
    }
    check_gpu(p, matrix, cuda);
    check_gpu_branch(p, matrix);
    check_kubernetes(p);
    check_imex(p, matrix);
}

} // namespace gpuprov::profile_detail
