#pragma once
// NVIDIA's architecture rules judged against the GPUs this host has (the PCI scan), and against
// host.gpus.model where none is found: the kernel-module flavour `driver.flavor: auto` resolves
// to, and what the profile asks that those GPUs cannot do (flavour, driver branch window, CUDA,
// cuDNN). The data and its sources are in src/data/nvidia-matrix.yaml.
#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <string>
#include <vector>

namespace gpuprov {

/// The driver flavour a plan installs.
struct FlavorChoice {
    std::string flavor;     ///< open | proprietary | server; empty: auto cannot choose (why says)
    std::string why;        ///< auto: how it chose, or why it cannot; empty for an explicit one
    bool automatic = false; ///< the profile says auto (or nothing)
};

/// The profile's flavour, with `auto` resolved: open where NVIDIA requires it (Blackwell, Grace
/// Hopper) or recommends it (Turing and newer from R560), proprietary where the open modules do
/// not load (Maxwell, Pascal, Volta) or the branch predates R560. Unknown GPUs, or a mix that
/// no one flavour serves, leave it empty with the reason. Empty FlavorChoice without a driver.
[[nodiscard]] FlavorChoice driver_flavor(const Profile& profile, const HostFacts& facts,
                                         const Matrix& matrix);

/// One thing the profile asks that the host's GPUs cannot do, and how to fix it.
struct GpuRuleProblem {
    std::string problem;
    std::string fix;
};

/// Every rule the profile breaks on the GPUs found on this host (none found: nothing; the
/// declared model is judged when the profile loads), plus an `auto` flavour it cannot resolve.
[[nodiscard]] std::vector<GpuRuleProblem>
found_gpu_problems(const Profile& profile, const HostFacts& facts, const Matrix& matrix);

} // namespace gpuprov
