#pragma once
// One clear-signed message checked with gpgv against one pinned key (src/repo/index_loader.cpp):
// the repository loader's InRelease check, reused for an offline bundle's manifest.
#include <gpuprov/system.hpp>
#include <optional>
#include <string>

namespace gpuprov {

struct ClearsignedCheck {
    std::optional<std::string> text; ///< the signed text as gpgv gave it back
    std::string error;
};
/// Verifies one clear-signed message (an InRelease, a bundle's manifest) with gpgv against
/// `keyring` alone, as load_package_index does: exactly one message, a VALIDSIG by `pinned`
/// (primary fingerprint), a digest apt trusts, no Date in the future or past Valid-Until.
[[nodiscard]] ClearsignedCheck verify_clearsigned(const System& sys, const std::string& keyring,
                                                  const std::string& message,
                                                  const std::string& pinned,
                                                  const std::string& where);

} // namespace gpuprov
