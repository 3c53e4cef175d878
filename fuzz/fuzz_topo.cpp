// nvidia-smi topo -m. The matrix is square by contract (links[i][j] for every GPU pair), which
// all_pairs_nvlink and any_p2p_path index without checks.
#include "fuzz_input.hpp"

#include <gpuprov/nvidia_smi.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto topo = gpuprov::parse_topo_matrix(gpuprov::fuzz::text(data, size));
    if (!topo) {
        return 0;
    }
    gpuprov::fuzz::require(topo->links.size() == topo->gpus.size(), "one row per GPU");
    for (const auto& row : topo->links) {
        gpuprov::fuzz::require(row.size() == topo->gpus.size(), "one cell per GPU in each row");
    }
    (void)gpuprov::all_pairs_nvlink(*topo);
    (void)gpuprov::any_p2p_path(*topo);
    return 0;
}
