#pragma once
// What the dcgm step installs, decided from data alone (unit-tested without a host): the CUDA
// major DCGM's packages are built for, and the one version every DCGM package is pinned to.
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/repo.hpp>
#include <string>
#include <vector>

namespace gpuprov::steps {

/// The CUDA major of DCGM's -cuda<N> packages. NVIDIA's install guide takes it from the
/// user-mode driver (nvidia-smi's "CUDA Version"): gpuprov takes it from the driver branch the
/// profile installs (the newest CUDA release that branch carries, the matrix's `cuda` table),
/// lowered to the last CUDA major that targets every GPU on the host (Volta and older: 12, as
/// the guide says for driver 580); with no driver section, the profile's CUDA release.
struct DcgmCudaMajor {
    int major = 0;       ///< 0: none could be found; `problem` says why
    std::string because; ///< "driver branch 580 carries CUDA 13.0"
    std::string problem;
};
[[nodiscard]] DcgmCudaMajor dcgm_cuda_major(const Profile& profile, const HostFacts& facts,
                                            const Matrix& matrix);

/// The DCGM package names for a CUDA major (templates expanded).
[[nodiscard]] std::vector<std::string> dcgm_packages(const DcgmNames& names, int cuda_major);

/// The newest version at which the index has every one of `names` (they Depend on each other's
/// exact version, so one version for all); empty with `problem` set when there is none.
struct DcgmVersionPick {
    std::string version; ///< "1:4.6.1-1"
    std::string problem;
};
[[nodiscard]] DcgmVersionPick pick_dcgm_version(const PackageIndex& index,
                                                const std::vector<std::string>& names);

} // namespace gpuprov::steps
