// A repository signing key as it arrives from key_url (armored or binary): exactly one primary
// key, its v4 fingerprint 40 upper-case hex digits, and armor_public_key of what was accepted
// reads back as the same key.
#include "fuzz_input.hpp"

#include <cctype>
#include <gpuprov/repo.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto result = gpuprov::parse_openpgp_key(gpuprov::fuzz::text(data, size));
    if (!result.key) {
        gpuprov::fuzz::require(!result.error.empty(), "a refused key says why");
        return 0;
    }
    const auto& fpr = result.key->fingerprint;
    gpuprov::fuzz::require(fpr.size() == 40, "fingerprint has 40 hex digits");
    for (const char c : fpr) {
        gpuprov::fuzz::require(std::isxdigit(static_cast<unsigned char>(c)) != 0 &&
                                   std::islower(static_cast<unsigned char>(c)) == 0,
                               "fingerprint is upper-case hex");
    }
    const auto again = gpuprov::parse_openpgp_key(gpuprov::armor_public_key(result.key->binary));
    gpuprov::fuzz::require(again.key && again.key->fingerprint == fpr &&
                               again.key->binary == result.key->binary,
                           "armor_public_key round-trips the accepted key");
    return 0;
}
