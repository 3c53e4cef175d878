// secure-boot: the machine owner key DKMS signs the driver's module with, enrolled through shim
// (mok.hpp). Skipped where Secure Boot is off, and where the module comes signed already
// (Canonical's precompiled modules, driver_signed.hpp).
#include "mok.hpp"

#include "driver_signed.hpp"
#include "module_signer.hpp"
#include "steps.hpp"

#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <random>

namespace gpuprov::steps {

using namespace std::chrono_literals;

MokState parse_mok_test_key(const CommandResult& r) {
    const auto said = std::string(trim(r.out + r.err));
    if (r.not_found) {
        return {MokEnrolment::unknown, "mokutil is not installed"};
    }
    if (r.exit_code == 1 && said.find("is not enrolled") != std::string::npos) {
        return {MokEnrolment::absent, said};
    }
    if (r.exit_code == 0) {
        if (said.find("is already in the enrollment request") != std::string::npos) {
            return {MokEnrolment::pending, said};
        }
        if (said.find("is already enrolled") != std::string::npos ||
            said.find("is already in db") != std::string::npos) {
            return {MokEnrolment::enrolled, said};
        }
    }
    return {MokEnrolment::unknown,
            fmt::format("mokutil --test-key (exit {}): {}", r.exit_code, said)};
}

std::string dkms_framework_with_mok(std::string_view current) {
    const std::pair<std::string_view, std::string_view> wanted[] = {{"mok_signing_key", kMokKey},
                                                                    {"mok_certificate", kMokCert}};
    std::vector<std::string> out;
    bool seen[2] = {false, false};
    for (auto line : lines(current)) {
        const auto bare = std::string(trim(std::string_view(line)));
        auto key = std::string_view(bare);
        if (starts_with(key, "#")) {
            key = trim(key.substr(1));
        }
        for (std::size_t i = 0; i < 2; ++i) {
            if (starts_with(key, std::string(wanted[i].first) + "=")) {
                // The first mention becomes ours; a later one would override it (the file is
                // sourced top to bottom), so it is commented out.
                line = seen[i] ? (starts_with(bare, "#") ? bare : "#" + bare)
                               : fmt::format("{}=\"{}\"", wanted[i].first, wanted[i].second);
                seen[i] = true;
            }
        }
        out.push_back(std::move(line));
    }
    for (std::size_t i = 0; i < 2; ++i) {
        if (!seen[i]) {
            out.push_back(fmt::format("{}=\"{}\"", wanted[i].first, wanted[i].second));
        }
    }
    return join(out, "\n") + "\n";
}

Command mok_test_key_command() {
    return {.argv = {"mokutil", "--test-key", std::string(kMokCert)}, .timeout = 30s};
}

std::string mok_confirm_words() {
    return fmt::format("confirm the key's enrolment at the next boot in MokManager (Enroll MOK, "
                       "Continue, Yes) with the one-time password in {} (root only)",
                       kMokPassword);
}

namespace {

/// The private key on stdout, so gpuprov writes it with mode 0600 itself (openssl's own file
/// mode follows the umask); never logged.
Command genkey_command() {
    return {.argv = {"openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"},
            .timeout = 120s,
            .log_output = false};
}

/// The self-signed certificate DKMS embeds and shim enrols (DER, as mokutil --import takes it).
Command cert_command() {
    return {.argv = {"openssl", "req", "-new", "-x509", "-key", std::string(kMokKey), "-outform",
                     "DER", "-out", std::string(kMokCert), "-days", "36500", "-subj",
                     "/CN=gpuprov DKMS module signing key/"},
            .timeout = 60s};
}

Command import_command() {
    return {.argv = {"mokutil", "--import", std::string(kMokCert)}, .timeout = 60s};
}

ManagedFile framework_file(const System& sys) {
    return {std::string(kDkmsFramework),
            dkms_framework_with_mok(sys.read_file(std::string(kDkmsFramework)).value_or("")), 0644};
}

/// A password someone types at the MokManager screen: short, no look-alike characters.
std::string one_time_password() {
    static constexpr std::string_view kAlphabet = "abcdefghjkmnpqrstuvwxyz23456789";
    std::random_device rd;
    std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
    std::string out;
    for (int i = 0; i < 12; ++i) {
        out += kAlphabet[pick(rd)];
    }
    return out;
}

class Mok final : public Step {
public:
    [[nodiscard]] std::string_view id() const override { return "secure-boot"; }
    [[nodiscard]] std::string_view summary() const override {
        return "Secure Boot: a machine owner key DKMS signs the driver with, enrolled";
    }

    [[nodiscard]] CheckResult check(const StepContext& ctx, const System& sys) const override {
        CheckResult r;
        if (!ctx.profile.driver) {
            r.status = StepStatus::skipped;
            r.reason = "profile has no driver section";
            return r;
        }
        if (!ctx.facts.secure_boot.value_or(false)) {
            r.status = StepStatus::skipped;
            r.reason = "Secure Boot is off: the kernel loads unsigned modules";
            return r;
        }
        if (signed_modules_chosen(ctx)) {
            r.status = StepStatus::skipped;
            r.reason = "the driver's modules come signed by Canonical";
            return r;
        }
        auto pm = package_manager_or_block(ctx, r);
        if (!pm) {
            return r;
        }
        const bool have_key = sys.exists(std::string(kMokKey));
        const bool have_cert = have_key && sys.exists(std::string(kMokCert));
        if (!have_cert && !sys.exists("/usr/bin/openssl") && !sys.exists("/bin/openssl")) {
            r.status = StepStatus::blocked;
            r.reason = "Secure Boot is on and the module signing key is to be generated, but "
                       "openssl is not installed; install it (apt-get install openssl / dnf "
                       "install openssl) and re-run, or disable Secure Boot in the firmware";
            return r;
        }
        if (!have_key) {
            r.changes.push_back(
                command_change(genkey_command(),
                               fmt::format("the signing key, written to {} (mode 0600)", kMokKey)));
        }
        if (!have_cert) {
            r.changes.push_back(command_change(cert_command(), "its certificate, for shim"));
        }
        if (const auto f = framework_file(sys); !file_matches(sys, f)) {
            r.changes.push_back(file_change(sys, f));
        }
        const bool have_mokutil = pm->installed(sys, "mokutil").has_value();
        if (!have_mokutil) {
            plan_installs(r, sys, *pm, {{"mokutil", ""}});
        }
        const auto state = have_cert && have_mokutil
                               ? parse_mok_test_key(sys.query(mok_test_key_command()))
                               : MokState{MokEnrolment::absent, {}};
        switch (state.enrolment) {
        case MokEnrolment::enrolled:
            break;
        case MokEnrolment::pending:
            r.status = StepStatus::reboot_required;
            r.reason = "the module signing key awaits enrolment: " + mok_confirm_words();
            return r;
        case MokEnrolment::absent:
            r.changes.push_back(command_change(
                import_command(), fmt::format("after the install; the one-time password goes to "
                                              "{} (root only) and is shown once",
                                              kMokPassword)));
            r.changes.push_back(note("a reboot follows: " + mok_confirm_words()));
            break;
        case MokEnrolment::unknown:
            r.status = StepStatus::blocked;
            r.reason = "cannot tell whether the module signing key is enrolled: " + state.detail;
            return r;
        }
        if (!r.changes.empty() && r.status == StepStatus::satisfied) {
            r.status = StepStatus::pending;
        }
        return r;
    }

    StepStatus apply(const StepContext& ctx, System& sys, const CheckResult& planned,
                     ApplyPhase phase) override {
        if (planned.status == StepStatus::skipped) {
            return StepStatus::done;
        }
        if (phase == ApplyPhase::prepare) {
            // Before the transaction: DKMS signs the module it builds there with this pair.
            sys.make_dirs(std::string(kMokDir));
            if (!sys.exists(std::string(kMokKey))) {
                sys.remove_file(std::string(kMokCert)); // a certificate of another key
                const auto key = run_checked(sys, genkey_command());
                sys.write_file_atomic(std::string(kMokKey), key.out, 0600);
            }
            if (!sys.exists(std::string(kMokCert))) {
                run_checked(sys, cert_command());
            }
            if (const auto f = framework_file(sys); !file_matches(sys, f)) {
                write_managed(sys, f);
            }
            return StepStatus::done;
        }
        if (phase != ApplyPhase::configure) {
            return StepStatus::done;
        }
        const auto state = parse_mok_test_key(sys.query(mok_test_key_command()));
        switch (state.enrolment) {
        case MokEnrolment::enrolled:
            return StepStatus::done;
        case MokEnrolment::pending:
            return StepStatus::reboot_required;
        case MokEnrolment::unknown:
            throw Error("cannot tell whether the module signing key is enrolled: " + state.detail);
        case MokEnrolment::absent:
            break;
        }
        // The password goes to its root-only file before mokutil sees it: a kill in between
        // leaves a password nobody has used, never a request nobody can confirm. It never
        // reaches the log or the journal (stdin is not logged).
        const auto password = one_time_password();
        sys.write_file_atomic(std::string(kMokPassword), password + "\n", 0600);
        auto cmd = import_command();
        cmd.stdin_data = password + "\n" + password + "\n"; // mokutil asks twice
        run_checked(sys, cmd);
        if (parse_mok_test_key(sys.query(mok_test_key_command())).enrolment !=
            MokEnrolment::pending) {
            throw Error("mokutil --import ran but the key is not in the enrolment request");
        }
        // Shown once, to whoever ran apply: they are the one at the console at the next boot.
        // The terminal only (tell_operator), so the log and the journal never carry it; the
        // root-only file keeps it for a later look.
        if (ctx.tell_operator) {
            ctx.tell_operator(fmt::format(
                "MokManager one-time password (type it at the next boot to enrol the module "
                "signing key; kept in {}, root only, and not shown again): {}",
                kMokPassword, password));
        }
        return StepStatus::reboot_required;
    }

    [[nodiscard]] std::vector<CheckOutcome> verify(const StepContext& ctx,
                                                   const System& sys) const override {
        if (!ctx.profile.driver || !ctx.facts.secure_boot.value_or(false)) {
            return {};
        }
        if (signed_modules_chosen(ctx)) {
            // No key of ours to enrol, but the proof is the same: the module the running kernel
            // loads carries a signature the kernel trusts, here Canonical's built-in key.
            return {distribution_signer_outcome(ctx.facts, sys)};
        }
        const auto cmd = mok_test_key_command();
        const auto state = parse_mok_test_key(sys.query(cmd));
        return {signer_outcome(ctx.facts, sys),
                CheckOutcome{.id = "secure-boot.mok-enrolled",
                             .step = "secure-boot",
                             .passed = state.enrolment == MokEnrolment::enrolled,
                             .command = display_argv(cmd.argv),
                             .excerpt = state.detail,
                             .expected = std::string(kMokCert) + " is already enrolled",
                             .found = state.detail,
                             .fix = state.enrolment == MokEnrolment::enrolled
                                        ? std::string()
                                        : "reboot and " + mok_confirm_words()}};
    }

    /// The nvidia module's signature names our certificate (the signer comparison of
    /// module_signer.hpp, which the forecast uses for every installed kernel). With the
    /// certificate enrolled (the other outcome), the kernel trusts it.
    [[nodiscard]] static CheckOutcome signer_outcome(const HostFacts& facts, const System& sys) {
        const auto modinfo = modinfo_command("nvidia");
        const auto serial = mok_serial_command();
        CheckOutcome c{.id = "secure-boot.module-signer",
                       .step = "secure-boot",
                       .command = display_argv(modinfo.argv) + "; " + display_argv(serial.argv),
                       .expected = "the nvidia module signed by " + std::string(kMokCert)};
        const auto sig = parse_modinfo_signature(sys.query(modinfo));
        const auto o = sys.query(serial);
        const auto ours = o.ok() ? normalized_serial(trim(o.out)) : std::string();
        c.excerpt =
            fmt::format("signer {}; sig_key {}; certificate serial {}",
                        sig.signer.empty() ? "none" : sig.signer,
                        sig.key.empty() ? "none" : sig.key, ours.empty() ? "unknown" : ours);
        if (!sig.read) {
            c.found = "modinfo nvidia failed: " + sig.error;
        } else if (!sig.is_signed()) {
            c.found = "the nvidia module is unsigned";
        } else if (ours.empty()) {
            c.found = "cannot read the certificate's serial: " + std::string(trim(o.out + o.err));
        } else if (classify_signer(sig, ours, facts) == SignerKind::ours) {
            c.passed = true;
            c.found = "signed by " + ours;
            return c;
        } else {
            c.found = sig.signer_unknown()
                          ? "the nvidia module is signed (" + sig.sig_id +
                                "), but this modinfo cannot read by whom"
                          : "the nvidia module is signed by key " + sig.key + ", not " + ours;
        }
        c.fix = "rebuild and re-sign the module with DKMS (dkms autoinstall --force), which signs "
                "with the key in /etc/dkms/framework.conf";
        return c;
    }

    /// Canonical's signed precompiled modules (driver_signed.hpp): the nvidia module of the
    /// running kernel (`modinfo -k`, as modprobe resolves it through that kernel's modules.dep)
    /// is signed by the distribution's module key, which Ubuntu's kernels carry built in.
    [[nodiscard]] static CheckOutcome distribution_signer_outcome(const HostFacts& facts,
                                                                  const System& sys) {
        const auto modinfo = modinfo_for_kernel_command("nvidia", facts.kernel);
        CheckOutcome c{.id = "secure-boot.module-signer",
                       .step = "secure-boot",
                       .command = display_argv(modinfo.argv),
                       .expected = "the nvidia module of kernel " + facts.kernel +
                                   " signed by the distribution's module key (Canonical's)"};
        const auto sig = parse_modinfo_signature(sys.query(modinfo));
        c.excerpt = fmt::format("signer {}; sig_key {}", sig.signer.empty() ? "none" : sig.signer,
                                sig.key.empty() ? "none" : sig.key);
        if (!sig.read) {
            c.found = "modinfo failed: " + sig.error;
        } else if (!sig.is_signed()) {
            c.found = "the nvidia module is unsigned";
        } else if (sig.signer_unknown()) {
            c.found = "the nvidia module is signed (" + sig.sig_id +
                      "), but this modinfo cannot read by whom";
        } else if (classify_signer(sig, "", facts) == SignerKind::distribution) {
            c.passed = true;
            c.found = "signed by " + sig.signer + " (key " + sig.key + ")";
            return c;
        } else {
            c.found = fmt::format("the nvidia module is signed by '{}' (key {}), not by the "
                                  "distribution's module key",
                                  sig.signer, sig.key);
        }
        c.fix = "apt-get install --reinstall linux-modules-nvidia-<branch>-server-" + facts.kernel +
                " (Canonical's signed module for this kernel); a module of another origin "
                "(DKMS, the runfile) shadowing it goes first";
        return c;
    }

    [[nodiscard]] std::string reboot_evidence(const StepContext&, const System&) const override {
        // The journal keeps this: the password itself stays in its root-only file.
        return "the module signing key awaits enrolment: " + mok_confirm_words();
    }
};

} // namespace

std::unique_ptr<Step> make_mok() {
    return std::make_unique<Mok>();
}

} // namespace gpuprov::steps
