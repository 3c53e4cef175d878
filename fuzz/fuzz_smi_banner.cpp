// The default nvidia-smi table (its first box and its GPU box), and the failure texts doctor
// classifies.
#include "fuzz_input.hpp"

#include <gpuprov/nvidia_smi.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = gpuprov::fuzz::text(data, size);
    (void)gpuprov::parse_smi_banner(input);
    (void)gpuprov::parse_smi_table(input);
    (void)gpuprov::classify_smi_failure(input);
    return 0;
}
