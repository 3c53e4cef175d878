// nvidia-smi --query-gpu CSV (format=csv,noheader,nounits).
#include "fuzz_input.hpp"

#include <gpuprov/nvidia_smi.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    (void)gpuprov::parse_smi_query(gpuprov::fuzz::text(data, size));
    return 0;
}
