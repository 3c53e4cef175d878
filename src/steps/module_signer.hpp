#pragma once
// Who signed an nvidia module, and whether a Secure Boot kernel trusts that signer: one owner for
// the secure-boot step's verify (the running kernel's module) and the next-boot forecast (every
// installed kernel's module, module_trusted_at_boot in gpuprov/forecast.hpp), so both judge a
// signature the same way.
//
// kmod's modinfo reads a module's PKCS#7 signature as "signer" (the signing certificate's issuer
// common name) and "sig_key" (its serial number, colon-separated hex) (kmod
// libkmod/libkmod-signature.c, fill_pkcs7). DKMS's sign-file writes that issuer-and-serial form,
// so a module DKMS signed with gpuprov's key carries that certificate's serial.
#include "common.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gpuprov::steps {

/// What modinfo read from a module's signature.
struct ModuleSignature {
    bool read = false;  ///< modinfo answered (exit 0)
    std::string error;  ///< what modinfo said when it did not
    std::string sig_id; ///< "PKCS#7" on a signed module; empty: unsigned
    std::string signer; ///< "Canonical Ltd. Kernel Module Signing"; empty: none read
    std::string key;    ///< the signer's serial as normalized_serial() makes it; empty: none read
    [[nodiscard]] bool is_signed() const {
        return !sig_id.empty() || !key.empty() || !signer.empty();
    }
    /// Signed, but this modinfo cannot say by whom: kmod built without OpenSSL prints sig_id
    /// and leaves signer and sig_key empty for PKCS#7 signatures.
    [[nodiscard]] bool signer_unknown() const { return is_signed() && key.empty(); }
};

/// `modinfo MODULE`: a module name (the running kernel's module) or a module file's path.
[[nodiscard]] Command modinfo_command(const std::string& module, bool log_output = true);
/// `modinfo -k KERNEL MODULE`: the module that kernel's modules.dep names (what modprobe would
/// load when it runs); `uname -r` alone names the kernel modinfo runs under.
[[nodiscard]] Command modinfo_for_kernel_command(const std::string& module,
                                                 const std::string& kernel);
/// The signer and sig_key fields of modinfo's answer (`field:<padding>value` lines; the
/// signature's own hex continues on indented lines and is not read).
[[nodiscard]] ModuleSignature parse_modinfo_signature(const CommandResult& r);
[[nodiscard]] ModuleSignature read_module_signature(const System& sys, const std::string& module,
                                                    bool log_output = true);

/// A certificate serial as `modinfo -F sig_key` ("4E:0B:...") or `openssl x509 -serial`
/// ("serial=4E0B...") prints it, as one comparable form: hex digits only, upper case, no leading
/// zeros (openssl drops the sign byte DER keeps). Empty when there is no hex in it.
[[nodiscard]] std::string normalized_serial(std::string_view text);

/// The serials of the certificates `mokutil --list-enrolled` prints (MokListRT), normalized.
/// mokutil prints each with OpenSSL's X509_print (lcp/mokutil src/efi_x509.c print_x509):
/// "Serial Number: 4660 (0x1234)" when the serial fits a long, else "Serial Number:" with the
/// colon-separated hex on the next line.
[[nodiscard]] std::vector<std::string> enrolled_serials(std::string_view list_enrolled);

/// `openssl x509 -serial` of gpuprov's machine owner key certificate.
[[nodiscard]] Command mok_serial_command();

/// The signer of a module, against the keys a Secure Boot kernel trusts.
enum class SignerKind {
    unsigned_module, ///< no signature
    ours,            ///< gpuprov's machine owner key (serial equals its certificate's)
    distribution,    ///< a key the distribution's kernels carry built in
    other,           ///< any other key: trusted only when enrolled as a machine owner key
};

/// `our_serial`: gpuprov's certificate serial, normalized (empty: there is none).
[[nodiscard]] SignerKind classify_signer(const ModuleSignature& sig, std::string_view our_serial,
                                         const HostFacts& facts);

} // namespace gpuprov::steps
