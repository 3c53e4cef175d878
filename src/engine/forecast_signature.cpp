// The place where "signed, under Secure Boot" joins the forecast's per-kernel answer. The
// signer check (the loaded or installed module's signer against the enrolled keys: mokutil,
// the firmware's db) belongs to the Secure Boot work (issue 23 item 1); until it lands here the
// forecast judges no signature and says nothing about one.
#include <gpuprov/forecast.hpp>

namespace gpuprov {

std::optional<bool> module_trusted_at_boot(const System& sys, const HostFacts& facts,
                                           const KernelModule& module) {
    (void)sys;
    (void)facts;
    (void)module;
    return std::nullopt;
}

} // namespace gpuprov
