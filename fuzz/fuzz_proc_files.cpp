// The small kernel files detection reads: /proc/driver/nvidia/version, /proc/meminfo,
// /proc/modules and the SecureBoot efivar; the same bytes go to each parser.
#include "fuzz_input.hpp"

#include <gpuprov/facts.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = gpuprov::fuzz::text(data, size);
    (void)gpuprov::parse_proc_driver_version(input);
    (void)gpuprov::parse_meminfo_total(input);
    (void)gpuprov::proc_modules_has(input, "nouveau");
    (void)gpuprov::parse_secure_boot_efivar(input);
    return 0;
}
