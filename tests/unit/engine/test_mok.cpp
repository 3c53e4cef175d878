// The secure-boot step (issue 23 item 1): under Secure Boot a DKMS-built module loads only when
// signed by a key shim enrolled. gpuprov generates the pair into a root-only directory, points
// DKMS at it, and imports it with mokutil; enrolment waits for the next boot's MokManager.
// mokutil's answers are its own strings (lcp/mokutil@9ae73db src/mokutil.c test_key,
// print_skip_message); the stand-in below keeps its state the way shim's variables do: the
// import only requests, and the reboot (not simulated here) enrols.
#include "host_builder.hpp"
#include "module_signer.hpp"
#include "mok.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>

using namespace gpuprov;
using namespace gpuprov::enginetest;
using gpuprov::steps::MokEnrolment;

namespace {

const std::string kKey(steps::kMokKey);
const std::string kCert(steps::kMokCert);
const std::string kPassword(steps::kMokPassword);
const std::string kFramework(steps::kDkmsFramework);

CommandResult said(int exit_code, std::string out) {
    return {.exit_code = exit_code, .out = std::move(out)};
}

/// `modinfo nvidia` as kmod prints it ("%-16s%s" per field; the signature's hex continues on
/// tab-indented lines), signed by DKMS's sign-file with a certificate of serial `sig_key`, or
/// unsigned (no sig_* fields at all) when `sig_key` is empty.
std::string modinfo_nvidia(const std::string& sig_key,
                           const std::string& signer = "gpuprov DKMS module signing key") {
    std::string out = "filename:       /lib/modules/6.1.0-31-amd64/updates/dkms/nvidia.ko\n"
                      "version:        550.127.08\n"
                      "license:        NVIDIA\n"
                      "name:           nvidia\n"
                      "vermagic:       6.1.0-31-amd64 SMP preempt mod_unload modversions \n";
    if (!sig_key.empty()) {
        out += "sig_id:         PKCS#7\n"
               "signer:         " +
               signer +
               "\n"
               "sig_key:        " +
               sig_key +
               "\n"
               "sig_hashalgo:   sha256\n"
               "signature:      5A:1F:0C:93:7E:2B:44:D1:08:6C:B2:3A:9F:E0:71:55:\n"
               "\t\t4B:C8:12:6D\n";
    }
    return out + "parm:           NVreg_EnableGpuFirmware:int\n";
}

TEST(MokTestKey, ReadsMokutilsThreeAnswers) {
    EXPECT_EQ(steps::parse_mok_test_key(said(1, kCert + " is not enrolled\n")).enrolment,
              MokEnrolment::absent);
    EXPECT_EQ(steps::parse_mok_test_key(said(0, kCert + " is already enrolled\n")).enrolment,
              MokEnrolment::enrolled);
    EXPECT_EQ(steps::parse_mok_test_key(said(0, kCert + " is already in db\n")).enrolment,
              MokEnrolment::enrolled);
    EXPECT_EQ(steps::parse_mok_test_key(said(0, kCert + " is already in the enrollment request\n"))
                  .enrolment,
              MokEnrolment::pending);
}

TEST(MokTestKey, AnythingElseIsUnknownWithWhatWasSaid) {
    CommandResult missing;
    missing.not_found = true;
    EXPECT_EQ(steps::parse_mok_test_key(missing).enrolment, MokEnrolment::unknown);
    // test_key's error paths return -1: exit 255 and a message on stderr.
    const auto bad = steps::parse_mok_test_key({.exit_code = 255, .err = "Failed to open x\n"});
    EXPECT_EQ(bad.enrolment, MokEnrolment::unknown);
    EXPECT_TRUE(bad.detail.find("Failed to open x") != std::string::npos) << bad.detail;
    // exit 0 with no recognised words (is already in the built-in keyring goes to stderr with
    // -1): never taken for enrolled.
    EXPECT_EQ(steps::parse_mok_test_key(said(0, "")).enrolment, MokEnrolment::unknown);
}

// DKMS 3's shipped framework.conf has both lines commented out (dkms_framework.conf).
TEST(DkmsFramework, SetsBothKeysInPlaceAndKeepsTheRest) {
    const std::string shipped =
        "## Location of the MOK key and certificate used for signing\n"
        "# mok_signing_key=\"/var/lib/dkms/mok.key\"\n"
        "# mok_certificate=\"/var/lib/dkms/mok.pub\"\n"
        "# sign_file=\"/lib/modules/${kernelver}/build/scripts/sign-file\"\n";
    const auto out = steps::dkms_framework_with_mok(shipped);
    EXPECT_EQ(out, "## Location of the MOK key and certificate used for signing\n"
                   "mok_signing_key=\"" +
                       kKey +
                       "\"\n"
                       "mok_certificate=\"" +
                       kCert +
                       "\"\n"
                       "# sign_file=\"/lib/modules/${kernelver}/build/scripts/sign-file\"\n");
    EXPECT_EQ(steps::dkms_framework_with_mok(out), out); // once set, nothing changes
    EXPECT_EQ(steps::dkms_framework_with_mok(""),
              "mok_signing_key=\"" + kKey + "\"\nmok_certificate=\"" + kCert + "\"\n");
    // A second setting would win over ours (the file is sourced top to bottom): commented out.
    EXPECT_EQ(steps::dkms_framework_with_mok("mok_signing_key=/a\nmok_signing_key=/b\n"),
              "mok_signing_key=\"" + kKey + "\"\n#mok_signing_key=/b\nmok_certificate=\"" + kCert +
                  "\"\n");
}

/// openssl and mokutil as the real ones change the host: genpkey prints a key, req writes the
/// certificate, --import puts the certificate in the request (MokNew), --test-key reads it.
struct MokHost {
    TestHost host{{.secure_boot = true}};
    bool enrolled = false;
    bool requested = false;
    std::vector<std::string> import_stdin;
    std::string module_sig_key = "00:9C:4E:0B:2A:17"; ///< modinfo's; empty: unsigned

    MokHost() {
        host.set_package("mokutil", "0.6.0-2", "install ok installed");
        auto& sys = host.sys;
        sys.add_file("/usr/bin/openssl", "");
        sys.on_command_prefix({"openssl", "genpkey"}, [](const Command&) {
            return said(0, "-----BEGIN PRIVATE KEY-----\nstand-in\n-----END PRIVATE KEY-----\n");
        });
        sys.on_command_prefix({"openssl", "req"}, [&sys](const Command& cmd) {
            EXPECT_TRUE(sys.exists(kKey)) << "the certificate is made from the key";
            const auto out = std::find(cmd.argv.begin(), cmd.argv.end(), "-out");
            sys.add_file(*(out + 1), "DER certificate");
            return said(0, "");
        });
        sys.on_command_prefix({"mokutil", "--test-key"}, [this](const Command& cmd) {
            const auto& file = cmd.argv.at(2);
            if (!this->host.sys.exists(file)) {
                return CommandResult{.exit_code = 255, .err = "Failed to open " + file + "\n"};
            }
            if (enrolled) {
                return said(0, file + " is already enrolled\n");
            }
            if (requested) {
                return said(0, file + " is already in the enrollment request\n");
            }
            return said(1, file + " is not enrolled\n");
        });
        sys.on_command_prefix({"openssl", "x509"},
                              [](const Command&) { return said(0, "serial=9C4E0B2A17\n"); });
        sys.on_command_prefix({"modinfo", "nvidia"}, [this](const Command&) {
            return said(0, modinfo_nvidia(module_sig_key));
        });
        sys.on_command_prefix({"mokutil", "--import"}, [this](const Command& cmd) {
            import_stdin.push_back(cmd.stdin_data.value_or(""));
            requested = true;
            return said(0, "input password: \ninput password again: \n");
        });
    }
};

struct Mok : ApplyTest {
    static CheckOutcome outcome(const std::vector<CheckOutcome>& all, const std::string& id) {
        for (const auto& c : all) {
            if (c.id == id) {
                return c;
            }
        }
        ADD_FAILURE() << "no outcome " << id;
        return {};
    }
};

// modinfo prints sig_key as colon-separated bytes, openssl x509 -serial as serial=HEX; DER keeps
// a leading 00 where the high bit is set, openssl's print may not.
TEST(NormalizedSerial, ComparesModinfoAndOpensslForms) {
    EXPECT_EQ(steps::normalized_serial("00:9C:4E:0B:2A:17"), "9C4E0B2A17");
    EXPECT_EQ(steps::normalized_serial("serial=9C4E0B2A17"), "9C4E0B2A17");
    EXPECT_EQ(steps::normalized_serial("9c:4e:0b:2a:17\n"), "9C4E0B2A17");
    EXPECT_EQ(steps::normalized_serial(""), "");
    EXPECT_EQ(steps::normalized_serial("PKCS#7 signature"), "");
    // openssl prints whole bytes: a serial whose first nibble is 0 is the same key either way.
    EXPECT_EQ(steps::normalized_serial("serial=0EEA614C"), "EEA614C");
    EXPECT_EQ(steps::normalized_serial("0E:EA:61:4C"), steps::normalized_serial("serial=0EEA614C"));
}

// kmod's modinfo: signer (issuer CN) and sig_key (serial) of a PKCS#7 signature; none of the
// sig_* fields on an unsigned module; sig_id alone where kmod was built without OpenSSL.
TEST(ModinfoSignature, ReadsSignerAndSerialAndTellsUnsignedApart) {
    const auto s = steps::parse_modinfo_signature(
        said(0, modinfo_nvidia("00:9C:4E:0B:2A:17", "Canonical Ltd. Kernel Module Signing")));
    EXPECT_TRUE(s.read);
    EXPECT_TRUE(s.is_signed());
    EXPECT_FALSE(s.signer_unknown());
    EXPECT_EQ(s.signer, "Canonical Ltd. Kernel Module Signing");
    EXPECT_EQ(s.key, "9C4E0B2A17");
    EXPECT_EQ(s.sig_id, "PKCS#7");

    const auto u = steps::parse_modinfo_signature(said(0, modinfo_nvidia("")));
    EXPECT_TRUE(u.read);
    EXPECT_FALSE(u.is_signed());

    const auto blind = steps::parse_modinfo_signature(
        said(0, "name:           nvidia\nsig_id:         PKCS#7\nsigner:         \n"
                "sig_key:        \nsig_hashalgo:   unknown\n"));
    EXPECT_TRUE(blind.is_signed());
    EXPECT_TRUE(blind.signer_unknown());

    const auto missing = steps::parse_modinfo_signature(
        {.exit_code = 1, .err = "modinfo: ERROR: Module nvidia not found.\n"});
    EXPECT_FALSE(missing.read);
    EXPECT_TRUE(contains(missing.error, "Module nvidia not found")) << missing.error;
}

// mokutil --list-enrolled prints each certificate with OpenSSL's X509_print: a serial that fits
// a long as "N (0xHEX)", a longer one as colon-separated bytes on the next line.
TEST(MokList, EnrolledSerialsInBothOfOpensslsForms) {
    const std::string listed = "[key 1]\n"
                               "SHA1 Fingerprint: 76:a0:92:06:58:00:bf:37:69:01:c3:72:cd:55:a9:0e\n"
                               "Certificate:\n"
                               "    Data:\n"
                               "        Version: 3 (0x2)\n"
                               "        Serial Number:\n"
                               "            00:9c:4e:0b:2a:17:51:d8:0f:3a\n"
                               "        Signature Algorithm: sha256WithRSAEncryption\n"
                               "        Issuer: CN=gpuprov DKMS module signing key\n"
                               "\n"
                               "[key 2]\n"
                               "Certificate:\n"
                               "    Data:\n"
                               "        Serial Number: 4660 (0x1234)\n"
                               "        Issuer: CN=Someone\n";
    EXPECT_EQ(steps::enrolled_serials(listed),
              (std::vector<std::string>{"9C4E0B2A1751D80F3A", "1234"}));
    EXPECT_TRUE(steps::enrolled_serials("MokListRT is empty\n").empty());
}

TEST_F(Mok, PlansTheKeyDkmsAndTheImportWithTheRebootForTheConsole) {
    MokHost m;
    StepRunner run(m.host, profile);
    const auto r = run.check("secure-boot");
    ASSERT_EQ(r.status, StepStatus::pending) << r.reason;
    const auto commands = targets(r, Change::Kind::command);
    ASSERT_EQ(commands.size(), 3u) << join(commands, " | ");
    EXPECT_TRUE(commands[0].starts_with("openssl genpkey")) << commands[0];
    EXPECT_TRUE(commands[1].starts_with("openssl req -new -x509 -key " + kKey)) << commands[1];
    EXPECT_EQ(commands[2], "mokutil --import " + kCert);
    EXPECT_EQ(targets(r, Change::Kind::file), std::vector<std::string>{kFramework});
    EXPECT_TRUE(std::any_of(r.changes.begin(), r.changes.end(), [](const Change& c) {
        return c.kind == Change::Kind::note && contains(c.detail, "a reboot follows") &&
               contains(c.detail, kPassword);
    }));
    EXPECT_TRUE(m.host.sys.commands_ran.empty()) << "check changes nothing";
}

TEST_F(Mok, ApplyWritesTheRootOnlyPairSignsWithItAndStopsForTheEnrolment) {
    MokHost m;
    const auto result = apply(m.host);
    EXPECT_EQ(result.status, StepStatus::reboot_required) << result.message;
    const auto key = m.host.sys.stat(kKey);
    ASSERT_TRUE(key);
    EXPECT_EQ(key->mode & 0777u, 0600u);
    EXPECT_TRUE(m.host.sys.exists(kCert));
    const auto conf = m.host.sys.file(kFramework).value_or("");
    EXPECT_TRUE(contains(conf, "mok_signing_key=\"" + kKey + "\"")) << conf;
    EXPECT_TRUE(contains(conf, "mok_certificate=\"" + kCert + "\"")) << conf;
    // The one-time password: root only, and exactly what mokutil was given, twice.
    const auto pw = m.host.sys.stat(kPassword);
    ASSERT_TRUE(pw);
    EXPECT_EQ(pw->mode & 0777u, 0600u);
    const auto password = std::string(trim(m.host.sys.file(kPassword).value_or("")));
    EXPECT_EQ(password.size(), 12u);
    ASSERT_EQ(m.import_stdin.size(), 1u);
    EXPECT_EQ(m.import_stdin[0], password + "\n" + password + "\n");
    // Never in the journal.
    EXPECT_FALSE(contains(m.host.sys.file(kJournalPath).value_or(""), password));
    // The key went in before the transaction: DKMS signed what it built there.
    const auto& ran = m.host.sys.commands_ran;
    const auto at = [&](const std::string& first, const std::string& second) {
        return std::find_if(ran.begin(), ran.end(), [&](const auto& argv) {
            return argv.size() > 1 && argv[0] == first && argv[1] == second;
        });
    };
    EXPECT_LT(at("openssl", "req"), at("apt-get", "install"));
    EXPECT_LT(at("apt-get", "install"), at("mokutil", "--import"));

    // The same plan again before the reboot: pending, no second import.
    StepRunner again(m.host, profile);
    const auto r = again.check("secure-boot");
    EXPECT_EQ(r.status, StepStatus::reboot_required) << r.reason;
    EXPECT_TRUE(contains(r.reason, "MokManager")) << r.reason;
    EXPECT_TRUE(targets(r, Change::Kind::command).empty());

    // Confirmed at the console: enrolled, the step is satisfied and verify proves it.
    m.enrolled = true;
    StepRunner after(m.host, profile);
    EXPECT_EQ(after.check("secure-boot").status, StepStatus::satisfied);
    const auto outcomes = after.step("secure-boot").verify(after.ctx(), m.host.sys);
    ASSERT_EQ(outcomes.size(), 2u);
    const auto enrolled = outcome(outcomes, "secure-boot.mok-enrolled");
    EXPECT_TRUE(enrolled.passed) << enrolled.found;
    const auto signer = outcome(outcomes, "secure-boot.module-signer");
    EXPECT_TRUE(signer.passed) << signer.found;
    EXPECT_EQ(signer.found, "signed by 9C4E0B2A17");
    EXPECT_EQ(m.import_stdin.size(), 1u);
}

// The password reaches the person who ran apply once, on the terminal (the reporter), with the
// file that keeps it; never the log (spdlog, captured here) nor the journal. A run that finds
// the request already made shows nothing: the password was shown when it was made.
TEST_F(Mok, TheOneTimePasswordIsShownOnceOnTheTerminalAndNowhereElse) {
    std::ostringstream logged;
    const auto previous = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logged);
    auto logger = std::make_shared<spdlog::logger>("test", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
    MokHost m;
    const auto result = apply(m.host);
    spdlog::set_default_logger(previous);
    EXPECT_EQ(result.status, StepStatus::reboot_required) << result.message;
    const auto password = std::string(trim(m.host.sys.file(kPassword).value_or("")));
    ASSERT_EQ(password.size(), 12u);
    const auto shown = std::count_if(reporter.infos.begin(), reporter.infos.end(),
                                     [&](const std::string& i) { return contains(i, password); });
    EXPECT_EQ(shown, 1) << join(reporter.infos, " | ");
    const auto line = std::find_if(reporter.infos.begin(), reporter.infos.end(),
                                   [&](const std::string& i) { return contains(i, password); });
    ASSERT_NE(line, reporter.infos.end());
    EXPECT_TRUE(contains(*line, kPassword)) << *line;
    EXPECT_TRUE(contains(*line, "MokManager")) << *line;
    EXPECT_FALSE(contains(result.message, password)) << result.message;
    EXPECT_FALSE(contains(logged.str(), password));
    EXPECT_FALSE(contains(m.host.sys.file(kJournalPath).value_or(""), password));

    // The resumed run before the reboot: pending, no import, nothing shown.
    reporter.infos.clear();
    (void)apply(m.host);
    EXPECT_EQ(m.import_stdin.size(), 1u);
    EXPECT_TRUE(std::none_of(reporter.infos.begin(), reporter.infos.end(),
                             [&](const std::string& i) { return contains(i, password); }))
        << join(reporter.infos, " | ");
}

TEST_F(Mok, VerifyFailsWhileTheEnrolmentIsPending) {
    MokHost m;
    (void)apply(m.host);
    StepRunner run(m.host, profile);
    const auto c =
        outcome(run.step("secure-boot").verify(run.ctx(), m.host.sys), "secure-boot.mok-enrolled");
    EXPECT_FALSE(c.passed);
    EXPECT_TRUE(contains(c.found, "enrollment request")) << c.found;
    EXPECT_TRUE(contains(c.fix, "MokManager")) << c.fix;
}

// Enrolled is not enough: the module must carry that key's signature (one built before the key
// existed, or signed by another key, is rejected all the same).
TEST_F(Mok, VerifyFailsOnAModuleUnsignedOrSignedByAnotherKey) {
    MokHost m;
    (void)apply(m.host);
    m.enrolled = true;
    StepRunner run(m.host, profile);
    m.module_sig_key = "";
    auto c =
        outcome(run.step("secure-boot").verify(run.ctx(), m.host.sys), "secure-boot.module-signer");
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.found, "the nvidia module is unsigned");
    EXPECT_TRUE(contains(c.fix, "dkms autoinstall")) << c.fix;
    m.module_sig_key = "51:D8:0F:3A";
    c = outcome(run.step("secure-boot").verify(run.ctx(), m.host.sys), "secure-boot.module-signer");
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.found, "the nvidia module is signed by key 51D80F3A, not 9C4E0B2A17");
}

TEST_F(Mok, WithoutOpensslTheKeyCannotBeMadeAndTheStepSaysSo) {
    MokHost m;
    m.host.sys.remove_file("/usr/bin/openssl");
    StepRunner run(m.host, profile);
    const auto r = run.check("secure-boot");
    EXPECT_EQ(r.status, StepStatus::blocked);
    EXPECT_TRUE(contains(r.reason, "openssl is not installed")) << r.reason;
}

TEST_F(Mok, SkippedWhereSecureBootIsOff) {
    TestHost host;
    StepRunner run(host, profile);
    const auto r = run.check("secure-boot");
    EXPECT_EQ(r.status, StepStatus::skipped);
    EXPECT_TRUE(contains(r.reason, "Secure Boot is off")) << r.reason;
}

} // namespace
