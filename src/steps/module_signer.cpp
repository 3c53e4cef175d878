// The signer of an nvidia module against the keys a Secure Boot kernel trusts (module_signer.hpp),
// and the next-boot forecast's per-kernel question built on it (gpuprov/forecast.hpp).
#include "module_signer.hpp"

#include "mok.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <gpuprov/forecast.hpp>
#include <gpuprov/strings.hpp>
#include <optional>

namespace gpuprov::steps {

using namespace std::chrono_literals;

namespace {

/// Canonical signs the precompiled NVIDIA modules of linux-restricted-modules
/// (linux-modules-nvidia-*) with this key, and Ubuntu's kernels carry its certificate built in
/// (boot log: "Loaded X.509 cert 'Canonical Ltd. Kernel Module Signing: 88f752e5...'"; modinfo
/// of those modules: "signer: Canonical Ltd. Kernel Module Signing").
constexpr std::string_view kCanonicalModuleSigner = "Canonical Ltd. Kernel Module Signing";

/// "field:   value" of one modinfo line, or nullopt when the line is another field's.
std::optional<std::string> field(std::string_view line, std::string_view name) {
    if (!starts_with(line, name) || line.size() <= name.size() || line[name.size()] != ':') {
        return std::nullopt;
    }
    return std::string(trim(line.substr(name.size() + 1)));
}

} // namespace

Command modinfo_command(const std::string& module, bool log_output) {
    return {.argv = {"modinfo", module}, .timeout = 30s, .log_output = log_output};
}

Command modinfo_for_kernel_command(const std::string& module, const std::string& kernel) {
    return {.argv = {"modinfo", "-k", kernel, module}, .timeout = 30s};
}

ModuleSignature parse_modinfo_signature(const CommandResult& r) {
    ModuleSignature s;
    if (!r.ok()) {
        s.error = r.not_found ? std::string("modinfo is not installed")
                              : fmt::format("modinfo failed (exit {}): {}", r.exit_code,
                                            trim(r.out + r.err));
        return s;
    }
    s.read = true;
    for (const auto& line : lines(r.out)) {
        if (const auto id = field(line, "sig_id")) {
            s.sig_id = *id;
        } else if (const auto signer = field(line, "signer")) {
            s.signer = *signer;
        } else if (const auto key = field(line, "sig_key")) {
            s.key = normalized_serial(*key);
        }
    }
    return s;
}

ModuleSignature read_module_signature(const System& sys, const std::string& module,
                                      bool log_output) {
    return parse_modinfo_signature(sys.query(modinfo_command(module, log_output)));
}

std::string normalized_serial(std::string_view text) {
    if (const auto eq = text.find('='); eq != std::string_view::npos) {
        text.remove_prefix(eq + 1);
    }
    std::string out;
    for (const char c : text) {
        if (std::isxdigit(static_cast<unsigned char>(c)) != 0) {
            out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        } else if (c != ':' && std::isspace(static_cast<unsigned char>(c)) == 0) {
            return {}; // not a serial
        }
    }
    const auto first = out.find_first_not_of('0');
    return first == std::string::npos ? (out.empty() ? out : "0") : out.substr(first);
}

std::vector<std::string> enrolled_serials(std::string_view list_enrolled) {
    std::vector<std::string> out;
    bool next_line = false;
    for (const auto& raw : lines(list_enrolled)) {
        const auto line = trim(std::string_view(raw));
        if (next_line) {
            next_line = false;
            if (auto s = normalized_serial(line); !s.empty()) {
                out.push_back(std::move(s));
            }
            continue;
        }
        if (!starts_with(line, "Serial Number:")) {
            continue;
        }
        const auto rest = trim(line.substr(std::string_view("Serial Number:").size()));
        if (rest.empty()) {
            next_line = true; // the long form: the hex bytes follow on their own line
            continue;
        }
        // The short form: "4660 (0x1234)"; the hex in the parentheses is the serial.
        const auto open = rest.find("(0x");
        const auto close = rest.find(')', open == std::string_view::npos ? 0 : open);
        if (open != std::string_view::npos && close != std::string_view::npos) {
            if (auto s = normalized_serial(rest.substr(open + 3, close - open - 3)); !s.empty()) {
                out.push_back(std::move(s));
            }
        }
    }
    return out;
}

Command mok_serial_command() {
    return {.argv = {"openssl", "x509", "-inform", "DER", "-in", std::string(kMokCert), "-noout",
                     "-serial"},
            .timeout = 30s};
}

SignerKind classify_signer(const ModuleSignature& sig, std::string_view our_serial,
                           const HostFacts& facts) {
    if (!sig.is_signed()) {
        return SignerKind::unsigned_module;
    }
    if (!our_serial.empty() && sig.key == our_serial) {
        return SignerKind::ours;
    }
    if (facts.os.id == "ubuntu" && sig.signer == kCanonicalModuleSigner) {
        return SignerKind::distribution;
    }
    return SignerKind::other;
}

} // namespace gpuprov::steps

namespace gpuprov {

namespace {

using namespace std::chrono_literals;
using steps::MokEnrolment;

/// How a DKMS-built module gets a trusted signature back: DKMS signs what it installs with the
/// key framework.conf names, which the secure-boot step sets to gpuprov's machine owner key.
std::string dkms_resign_fix(const System& sys, const std::string& kernel) {
    const auto conf = sys.read_file(std::string(steps::kDkmsFramework)).value_or("");
    const bool ours = conf.find(std::string(steps::kMokKey)) != std::string::npos;
    return ours ? fmt::format("dkms autoinstall -k {} --force (DKMS re-signs it with the machine "
                              "owner key {} names)",
                              kernel, steps::kDkmsFramework)
                : fmt::format("gpuprov apply PROFILE --only secure-boot (a machine owner key "
                              "DKMS signs with, enrolled at the next boot), then dkms "
                              "autoinstall -k {} --force",
                              kernel);
}

} // namespace

std::optional<SignatureJudgement> module_trusted_at_boot(const System& sys, const HostFacts& facts,
                                                         const std::string& kernel,
                                                         const KernelModule& module) {
    if (!facts.secure_boot.value_or(false)) {
        return std::nullopt;
    }
    const auto sig = steps::read_module_signature(sys, module.path, /*log_output=*/false);
    if (!sig.read || sig.signer_unknown()) {
        return std::nullopt; // cannot tell: nothing said rather than a guess
    }
    std::string ours;
    if (sys.exists(std::string(steps::kMokCert))) {
        const auto o = sys.query(steps::mok_serial_command());
        ours = o.ok() ? steps::normalized_serial(trim(o.out)) : std::string();
    }
    SignatureJudgement j;
    switch (steps::classify_signer(sig, ours, facts)) {
    case steps::SignerKind::unsigned_module:
        j.why = "it is unsigned";
        j.fix = module.origin == "dkms"
                    ? dkms_resign_fix(sys, kernel)
                    : "install the distribution's signed modules for that kernel (Ubuntu: "
                      "driver.flavor: server, Canonical's linux-modules-nvidia-*), or sign it "
                      "with an enrolled machine owner key";
        return j;
    case steps::SignerKind::distribution:
        j.trusted = true;
        j.signer = sig.signer;
        return j;
    case steps::SignerKind::ours: {
        j.signer = "gpuprov's machine owner key " + ours;
        const auto state = steps::parse_mok_test_key(sys.query(steps::mok_test_key_command()));
        switch (state.enrolment) {
        case MokEnrolment::enrolled:
            j.trusted = true;
            return j;
        case MokEnrolment::pending:
            j.why = "that key awaits enrolment";
            j.fix = "at the next boot " + steps::mok_confirm_words();
            return j;
        case MokEnrolment::absent:
            j.why = "that key is not enrolled";
            j.fix = "gpuprov apply PROFILE --only secure-boot (mokutil --import), then " +
                    steps::mok_confirm_words();
            return j;
        case MokEnrolment::unknown:
            return std::nullopt;
        }
        return std::nullopt;
    }
    case steps::SignerKind::other:
        break;
    }
    // Another key: the kernel trusts it when it is an enrolled machine owner key (MokListRT).
    const auto listed =
        sys.query({.argv = {"mokutil", "--list-enrolled"}, .timeout = 30s, .log_output = false});
    if (!listed.ok() && !listed.not_found) {
        return std::nullopt; // mokutil could not read the list: not judged
    }
    j.signer =
        sig.signer.empty() ? "key " + sig.key : fmt::format("'{}' (key {})", sig.signer, sig.key);
    const auto enrolled =
        listed.ok() ? steps::enrolled_serials(listed.out) : std::vector<std::string>{};
    if (std::find(enrolled.begin(), enrolled.end(), sig.key) != enrolled.end()) {
        j.trusted = true;
        return j;
    }
    j.why = listed.not_found ? "mokutil is not installed, so no machine owner key can be enrolled"
                             : "that key is neither an enrolled machine owner key nor the "
                               "distribution's";
    j.fix = module.origin == "dkms"
                ? dkms_resign_fix(sys, kernel)
                : "enrol the certificate of the key that signed it (mokutil --import CERT, then "
                  "confirm at the next boot in MokManager), or install modules signed by a "
                  "trusted key";
    return j;
}

} // namespace gpuprov
