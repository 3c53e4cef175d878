#pragma once
// Secure Boot with DKMS: a machine owner key (MOK) gpuprov manages. The key pair lives in a
// root-only directory, DKMS signs every module it builds with it (/etc/dkms/framework.conf
// mok_signing_key / mok_certificate), and `mokutil --import` asks shim to enrol the certificate
// at the next boot, where someone at the console confirms it in MokManager with a one-time
// password gpuprov wrote to a root-only file. `mokutil --test-key` tells the three states apart
// (lcp/mokutil@9ae73db src/mokutil.c test_key and print_skip_message).
#include "common.hpp"

#include <string>
#include <string_view>

namespace gpuprov::steps {

inline constexpr std::string_view kMokDir = "/var/lib/gpuprov/mok";
inline constexpr std::string_view kMokKey = "/var/lib/gpuprov/mok/mok.key";
inline constexpr std::string_view kMokCert = "/var/lib/gpuprov/mok/mok.der";
inline constexpr std::string_view kMokPassword = "/var/lib/gpuprov/mok/enrol-password";
inline constexpr std::string_view kDkmsFramework = "/etc/dkms/framework.conf";

enum class MokEnrolment {
    enrolled, ///< in MokListRT (or already in db): the kernel trusts what it signs
    pending,  ///< in MokNew: enrolled at the next boot once confirmed in MokManager
    absent,   ///< neither: `mokutil --import` is still to run
    unknown,  ///< mokutil missing or its answer not one of the above (reason says)
};

struct MokState {
    MokEnrolment enrolment = MokEnrolment::unknown;
    std::string detail; ///< what mokutil said, for reasons and verify
};

/// `mokutil --test-key CERT`'s answer: exit 1 with "is not enrolled"; exit 0 with "is already
/// enrolled" / "is already in db" (enrolled) or "is already in the enrollment request" (pending).
[[nodiscard]] MokState parse_mok_test_key(const CommandResult& r);

/// `mokutil --test-key` of gpuprov's certificate.
[[nodiscard]] Command mok_test_key_command();

/// What someone at the console does at the next boot to enrol the key (the password's file).
[[nodiscard]] std::string mok_confirm_words();

/// framework.conf with mok_signing_key and mok_certificate set to gpuprov's pair: those lines
/// (commented out or not) replaced in place, appended when missing, everything else kept.
[[nodiscard]] std::string dkms_framework_with_mok(std::string_view current);

} // namespace gpuprov::steps
