// The ASCII armor layer on its own (RFC 4880 section 6): every PUBLIC KEY BLOCK and SIGNATURE
// block, base64 and CRC24; decoded payloads are never longer than 3/4 of the text.
#include "fuzz_input.hpp"
#include "internal.hpp" // src/repo: dearmor, base64_decode

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace rd = gpuprov::repo_detail;
    const auto input = gpuprov::fuzz::text(data, size);
    for (const auto* type : {"PUBLIC KEY BLOCK", "SIGNATURE"}) {
        const auto d = rd::dearmor(input, type);
        if (d.data) {
            gpuprov::fuzz::require(d.data->size() <= size, "payload no longer than the armor");
        }
    }
    if (const auto raw = rd::base64_decode(input)) {
        gpuprov::fuzz::require(raw->size() <= size / 4 * 3 + 3, "base64 decodes 4 chars to 3");
        (void)rd::crc24(*raw);
    }
    return 0;
}
