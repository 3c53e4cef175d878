// How an installed toolkit's version is read: version.json (CUDA >= 11.1), version.txt (older)
// and include/cuda.h's CUDA_VERSION (the last resort); the same bytes go to all three.
#include "fuzz_input.hpp"

#include <gpuprov/facts.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = gpuprov::fuzz::text(data, size);
    (void)gpuprov::parse_cuda_version_json(input);
    (void)gpuprov::parse_cuda_version_txt(input);
    (void)gpuprov::parse_cuda_h_version(input);
    return 0;
}
