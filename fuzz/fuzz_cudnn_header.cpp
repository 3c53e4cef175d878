// cudnn_version.h (cuDNN >= 8) or cudnn.h: the CUDNN_MAJOR/MINOR/PATCHLEVEL defines.
#include "fuzz_input.hpp"

#include <gpuprov/facts.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    (void)gpuprov::parse_cudnn_header(gpuprov::fuzz::text(data, size));
    return 0;
}
