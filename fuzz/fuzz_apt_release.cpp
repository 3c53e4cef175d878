// InRelease (clear-signed) and Release: the signed text and the Packages entry read from it.
#include "fuzz_input.hpp"

#include <gpuprov/repo.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = gpuprov::fuzz::text(data, size);
    (void)gpuprov::clearsigned_text(input);
    if (const auto entry = gpuprov::release_entry(input, "Packages")) {
        gpuprov::fuzz::require(entry->sha256.size() == 64, "a SHA256 entry has 64 hex digits");
    }
    return 0;
}
