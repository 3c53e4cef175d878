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

void check_driver_runs_cuda(const Profile& p, const Matrix& matrix, const CudaRelease& cuda) {
    if (!p.driver) {
        return;
    }
    const int branch = static_cast<int>(*parse_int(p.driver->branch));
    if (branch >= cuda.driver_branch) {
        return;
    }
    const auto older = newest_cuda_for_branch(matrix, branch);
    fail(p.pos("driver.branch"),
         "driver branch " + p.driver->branch + " is too old for CUDA " + cuda.version.str() +
             ", which needs branch " + std::to_string(cuda.driver_branch) +
             " or newer (toolkit driver " + cuda.min_driver_text + "); set driver.branch to \"" +
             std::to_string(cuda.driver_branch) + "\" or newer" +
             (older.empty() ? std::string() : ", or cuda.version to \"" + older + "\" or older"));
}

void check_cudnn(const Profile& p, const Matrix& matrix, const DottedVersion& cuda) {
    if (!p.cudnn) {
        return;
    }
    const auto at = p.pos("cudnn.version");
    const auto wanted = *DottedVersion::parse(p.cudnn->version);
    if (wanted.major() == 9) {
        if (!matrix.cudnn9_supports(cuda)) {
            fail(at, "cuDNN 9 has no build for CUDA " + cuda.str() + "; it needs CUDA " +
                         matrix.cudnn9_min_cuda().str() +
                         " or newer. Use cudnn \"8.x\" or a newer cuda.version");
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
               " (a +cudaX.Y build serves X.Y and later X.* releases)";
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
    if (p.driver) {
        const bool open = p.driver->flavor == "open";
        if (open && !arch->open_module_ok) {
            fail(p.pos("driver.flavor"),
                 "the open kernel modules do not support " + model + " (" + arch->name +
                     "); they need Turing or newer. Set driver.flavor to proprietary");
        }
        if (!open && !arch->proprietary_ok) {
            fail(p.pos("driver.flavor"), "the proprietary kernel modules do not support " + model +
                                             " (" + arch->name +
                                             "); it needs the open modules. Set driver.flavor "
                                             "to open");
        }
    }
    if (!cuda) {
        return;
    }
    if (*cuda < arch->min_cuda) {
        fail(p.pos("cuda.version"), "CUDA " + cuda->str() + " cannot build code for " + model +
                                        " (" + arch->name + "); it needs CUDA " +
                                        arch->min_cuda.str() + " or newer");
    }
    if (arch->max_cuda && *arch->max_cuda < *cuda) {
        fail(p.pos("cuda.version"), "CUDA " + cuda->str() + " no longer builds code for " + model +
                                        " (" + arch->name +
                                        "); the last release that "
                                        "does is " +
                                        arch->max_cuda->str());
    }
}

} // namespace

void check_combinations(const Profile& p, const Matrix& matrix) {
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
    check_gpu(p, matrix, cuda);
}

} // namespace gpuprov::profile_detail
