#include "dcgm_pick.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

namespace {

/// The newest CUDA release a driver branch carries (its own toolkit's or an older one).
const CudaRelease* newest_cuda_of_branch(const Matrix& matrix, int branch) {
    const CudaRelease* best = nullptr;
    for (const auto& c : matrix.cuda_releases()) {
        if (c.driver_branch <= branch && (best == nullptr || best->version < c.version)) {
            best = &c;
        }
    }
    return best;
}

} // namespace

DcgmCudaMajor dcgm_cuda_major(const Profile& profile, const HostFacts& facts,
                              const Matrix& matrix) {
    DcgmCudaMajor out;
    if (profile.driver) {
        const auto branch = static_cast<int>(parse_int(profile.driver->branch).value_or(0));
        const auto* cuda = newest_cuda_of_branch(matrix, branch);
        if (cuda == nullptr) {
            out.problem = fmt::format("gpuprov's version matrix knows no CUDA release that driver "
                                      "branch {} carries",
                                      profile.driver->branch);
            return out;
        }
        out.major = cuda->version.major();
        out.because = fmt::format("driver branch {} carries CUDA {}", branch, cuda->version.str());
    } else if (profile.cuda) {
        const auto v = DottedVersion::parse(profile.cuda->version);
        out.major = v ? v->major() : 0;
        out.because = "the profile's CUDA " + profile.cuda->version;
    }
    if (out.major == 0) {
        out.problem = "monitoring.dcgm needs a driver or cuda section: DCGM's packages are built "
                      "per CUDA major of the driver";
        return out;
    }
    // A GPU the newer major no longer targets (Volta: CUDA 12.9 is its last) runs DCGM's
    // plugins of the major that still does.
    for (const auto& g : facts.gpus) {
        const auto* model = matrix.gpu_by_device(g.device_id);
        const auto* arch = model == nullptr ? nullptr : matrix.architecture(model->architecture);
        if (arch != nullptr && arch->max_cuda && arch->max_cuda->major() < out.major) {
            out.major = arch->max_cuda->major();
            out.because += fmt::format("; the {} GPU ({}) is targeted by CUDA {} at most",
                                       model->name, arch->name, arch->max_cuda->str());
        }
    }
    return out;
}

std::vector<std::string> dcgm_packages(const DcgmNames& names, int cuda_major) {
    return expand_package_names(names.packages, {.cuda = std::to_string(cuda_major)});
}

DcgmVersionPick pick_dcgm_version(const PackageIndex& index,
                                  const std::vector<std::string>& names) {
    DcgmVersionPick out;
    if (names.empty()) {
        out.problem = "no DCGM package names";
        return out;
    }
    std::vector<std::string> missing;
    for (const auto& n : names) {
        if (!index.has(n)) {
            missing.push_back(n);
        }
    }
    if (!missing.empty()) {
        out.problem = "the CUDA repository has no " + join(missing, ", ");
        return out;
    }
    // Newest first: the first version of the first package every other package also has.
    for (const auto* rec : index.versions(names.front())) {
        const bool everywhere = std::all_of(names.begin() + 1, names.end(), [&](const auto& n) {
            const auto vs = index.versions(n);
            return std::any_of(vs.begin(), vs.end(),
                               [&](const PackageRecord* r) { return r->version == rec->version; });
        });
        if (everywhere) {
            out.version = rec->version;
            return out;
        }
    }
    out.problem = "the CUDA repository has no version at which every one of " + join(names, ", ") +
                  " is published (they must be installed at one version)";
    return out;
}

} // namespace gpuprov::steps
