#include <algorithm>
#include <gpuprov/checks.hpp>

namespace gpuprov {

std::vector<CheckOutcome> verify_profile(const VerifyInput& in, const System& sys) {
    using CheckFn = std::vector<CheckOutcome> (*)(const VerifyInput&, const System&);
    struct Stage {
        const char* step;
        CheckFn check;
    };
    // Step order (docs/design.md), so the first failure printed is the one to fix first.
    static constexpr Stage kStages[] = {
        {"preflight", check_gpus},
        {"driver", check_driver},
        {"fabric-manager", check_fabric_manager},
        {"cuda-toolkit", check_cuda_toolkit},
        {"cudnn", check_cudnn},
        {"nccl", check_nccl},
        {"tensorrt", check_tensorrt},
        {"infiniband", check_infiniband},
        {"container-toolkit", check_container_toolkit},
        {"tuning", check_persistence},
    };
    std::vector<CheckOutcome> all;
    const auto& skip = in.profile.skip_steps;
    for (const auto& stage : kStages) {
        if (std::find(skip.begin(), skip.end(), stage.step) != skip.end()) {
            continue;
        }
        auto part = stage.check(in, sys);
        all.insert(all.end(), std::make_move_iterator(part.begin()),
                   std::make_move_iterator(part.end()));
    }
    return all;
}

} // namespace gpuprov
