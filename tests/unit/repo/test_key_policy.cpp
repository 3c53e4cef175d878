// The host verifier's key policy: apt 3's sqv refuses keys bound only with SHA-1 from 2026-02-01,
// gpgv does not. Real keys: NVIDIA's Linux driver team key (2022, a SHA-1 user-ID binding, the
// same generation and shape as the CUDA key 3bf863cc NVIDIA/cuda-repo-management#30/#34/#39
// report apt 3 refusing) and NVIDIA's 2016 CUDA key 7fa2af80 (SHA-256 binding); generated ones
// (tests/fixtures/repo/README.md); apt 3.0.4's own policy file from Debian 13.
#include "fake_system.hpp"

#include <gpuprov/key_policy.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;
using gpuprov::testing::read_fixture;

namespace {

constexpr const char* kToday = "2026-12-04";
const std::string kDriverTeam = "2FB03195DECD49492BD1C17AB1D0D788DB27FD5A";

OpenPgpKey key_of(const std::string& fixture) {
    auto parsed = parse_openpgp_key(read_fixture(fixture));
    EXPECT_TRUE(parsed.key.has_value()) << fixture << ": " << parsed.error;
    return parsed.key.value_or(OpenPgpKey{});
}

KeyPolicy trixie_policy() {
    return apply_sequoia_config(sqv_default_policy(),
                                read_fixture("repo/apt-3.0.4-default-sequoia.config"),
                                "/usr/share/apt/default-sequoia.config");
}

std::string dpkg_status_with_apt(const std::string& version) {
    return "Package: libc6\nStatus: install ok installed\nVersion: 2.41-12\n\n"
           "Package: apt\nStatus: install ok installed\nPriority: required\nVersion: " +
           version +
           "\nDepends: sqv\n\nPackage: zlib1g\nStatus: install ok installed\n"
           "Version: 1:1.3.dfsg\n";
}

} // namespace

TEST(KeyPolicy, AptsOwnConfigOnDebian13SetsSha1AndSha224To2026) {
    const auto p = trixie_policy();
    EXPECT_EQ(p.hash_cutoffs.at("sha1"), "2026-02-01");
    EXPECT_EQ(p.hash_cutoffs.at("sha224"), "2026-02-01");
    EXPECT_EQ(p.key_cutoffs.at("dsa2048"), "2024-02-01");
    EXPECT_EQ(p.key_cutoffs.at("rsa2048"), "2030-02-01");
    EXPECT_EQ(p.v3_signature_cutoff, "2026-02-01");
    EXPECT_EQ(p.source, "/usr/share/apt/default-sequoia.config");
}

TEST(KeyPolicy, NvidiasSha1BoundKeyIsRefusedUnderSqvNamingKeySignatureHashDateAndFix) {
    const auto key = key_of("repo/nvidia-driver-team-db27fd5a.pub");
    ASSERT_EQ(key.fingerprint, kDriverTeam);
    const auto why = key_policy_problem(key, trixie_policy(), kToday, "cuda");
    EXPECT_NE(why.find(kDriverTeam), std::string::npos) << why;
    EXPECT_NE(why.find("SHA-1"), std::string::npos) << why;
    EXPECT_NE(why.find("2026-02-01"), std::string::npos) << why;
    EXPECT_NE(why.find("NVIDIA Linux Driver Team"), std::string::npos) << why;
    EXPECT_NE(why.find("made 2022-04-14"), std::string::npos) << why;
    EXPECT_NE(why.find("8793F200"), std::string::npos) << why;
    EXPECT_NE(why.find("60DF8A40"), std::string::npos) << why;
    EXPECT_NE(why.find("repositories.cuda.key_url"), std::string::npos) << why;
    // Another repository's fix names that repository and not NVIDIA's key.
    const auto docker = key_policy_problem(key, trixie_policy(), kToday, "docker");
    EXPECT_NE(docker.find("repositories.docker.key_url"), std::string::npos) << docker;
    EXPECT_EQ(docker.find("8793F200"), std::string::npos) << docker;
}

TEST(KeyPolicy, TheSameKeyPassesUnderGpgvAndBeforeTheCutoff) {
    const auto key = key_of("repo/nvidia-driver-team-db27fd5a.pub");
    EXPECT_EQ(key_policy_problem(key, KeyPolicy{}, kToday, "cuda"), "");
    EXPECT_EQ(key_policy_problem(key, trixie_policy(), "2026-01-31", "cuda"), "");
    EXPECT_NE(key_policy_problem(key, trixie_policy(), "2026-02-01", "cuda"), "");
}

TEST(KeyPolicy, Sha256BoundKeysPassUnderSqv) {
    EXPECT_EQ(
        key_policy_problem(key_of("repo/nvidia-7fa2af80.pub"), trixie_policy(), kToday, "cuda"),
        "");
    EXPECT_EQ(key_policy_problem(key_of("repo/test-key.asc"), trixie_policy(), kToday, "cuda"), "");
    EXPECT_EQ(key_policy_problem(key_of("repo/sigcheck-key.asc"), trixie_policy(), kToday, "cuda"),
              "");
}

// NVIDIA's debian13 key (issue 21): the fingerprint the version matrix records is the one its
// key packet has, and its SHA-256 binding passes apt 3's sqv where 3bf863cc's SHA-1 one fails.
TEST(KeyPolicy, NvidiasDebian13KeyIsTheMatrixOneAndPassesUnderSqv) {
    const auto key = key_of("repo/nvidia-debian13-8793f200.pub");
    const auto* d = Matrix::builtin().distro("debian13");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(key.fingerprint, d->key_fingerprint);
    EXPECT_EQ(key.fingerprint, "02182E60104FCDC26EAE1B8597A5D4CB8793F200");
    EXPECT_EQ(d->key_file, "8793F200.pub");
    EXPECT_EQ(key_policy_problem(key, trixie_policy(), kToday, "cuda"), "");
}

TEST(KeyPolicy, GeneratedSha1BoundKeyIsRefusedUnderSqvOnly) {
    const auto key = key_of("repo/sha1-bound-key.asc");
    const auto why = key_policy_problem(key, trixie_policy(), kToday, "cuda");
    EXPECT_NE(why.find(std::string(trim(read_fixture("repo/sha1-bound-key.fpr")))),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("self-signature on user ID \"gpuprov sha1-bound test"), std::string::npos)
        << why;
    EXPECT_EQ(key_policy_problem(key, KeyPolicy{}, kToday, "cuda"), "");
}

TEST(KeyPolicy, SigningSubkeyBoundWithSha1IsRefused) {
    // The primary's user ID is bound with SHA-256; the signing subkey (which signs InRelease)
    // with SHA-1, its back-signature too.
    const auto why =
        key_policy_problem(key_of("repo/sha1-subkey.asc"), trixie_policy(), kToday, "cuda");
    EXPECT_NE(why.find("a subkey is bound only by signatures sqv rejects"), std::string::npos)
        << why;
    EXPECT_NE(why.find("subkey binding signature"), std::string::npos) << why;
}

TEST(KeyPolicy, AnAdministratorsPolicyFileMovesTheCutoff) {
    auto p =
        apply_sequoia_config(trixie_policy(),
                             "[hash_algorithms]\nsha1.second_preimage_resistance = 2027-02-01\n"
                             "sha1.collision_resistance = never\n",
                             "/etc/crypto-policies/back-ends/apt-sequoia.config");
    EXPECT_EQ(p.hash_cutoffs.at("sha1"), "2027-02-01");
    EXPECT_EQ(key_policy_problem(key_of("repo/sha1-bound-key.asc"), p, kToday, "cuda"), "");
    p = apply_sequoia_config(p, "[hash_algorithms]\nsha1 = never\n", "x");
    EXPECT_EQ(p.hash_cutoffs.count("sha1"), 0U);
}

TEST(KeyPolicy, RsaUnder2048BitsIsRefusedUnderSqv) {
    auto p = trixie_policy();
    p.key_cutoffs["rsa3072"] = "2026-01-01"; // the generated keys are RSA 3072
    const auto why = key_policy_problem(key_of("repo/sha1-subkey.asc"), p, kToday, "cuda");
    EXPECT_NE(why.find("the primary key is rsa3072"), std::string::npos) << why;
}

TEST(DetectKeyPolicy, Apt3WithSqvReadsAptsPolicyFile) {
    FakeSystem sys;
    sys.add_file("/var/lib/dpkg/status", dpkg_status_with_apt("3.0.4"));
    sys.add_file("/usr/bin/sqv", "ELF");
    sys.add_file("/usr/share/apt/default-sequoia.config",
                 read_fixture("repo/apt-3.0.4-default-sequoia.config"));
    const auto p = detect_key_policy(sys);
    EXPECT_EQ(p.verifier, "sqv");
    EXPECT_EQ(p.apt_version, "3.0.4");
    EXPECT_EQ(p.source, "/usr/share/apt/default-sequoia.config");
    EXPECT_EQ(p.hash_cutoffs.at("sha1"), "2026-02-01");
}

TEST(DetectKeyPolicy, TheAdministratorsFileWinsOverAptsDefault) {
    FakeSystem sys;
    sys.add_file("/var/lib/dpkg/status", dpkg_status_with_apt("3.1.11"));
    sys.add_file("/usr/bin/sqv", "ELF");
    sys.add_file("/usr/share/apt/default-sequoia.config",
                 read_fixture("repo/apt-3.0.4-default-sequoia.config"));
    sys.add_file("/etc/crypto-policies/back-ends/apt-sequoia.config",
                 "[hash_algorithms]\nsha1.second_preimage_resistance = 2030-01-01\n");
    const auto p = detect_key_policy(sys);
    EXPECT_EQ(p.source, "/etc/crypto-policies/back-ends/apt-sequoia.config");
    EXPECT_EQ(p.hash_cutoffs.at("sha1"), "2030-01-01");
}

TEST(DetectKeyPolicy, OlderAptOrNoSqvKeepsGpgvRules) {
    {
        FakeSystem sys; // Debian 12: apt 2.6 verifies with gpgv even if sqv is installed
        sys.add_file("/var/lib/dpkg/status", dpkg_status_with_apt("2.6.1"));
        sys.add_file("/usr/bin/sqv", "ELF");
        EXPECT_EQ(detect_key_policy(sys).verifier, "gpgv");
    }
    {
        FakeSystem sys; // apt 3 without sqv falls back to gpgv
        sys.add_file("/var/lib/dpkg/status", dpkg_status_with_apt("3.0.4"));
        EXPECT_EQ(detect_key_policy(sys).verifier, "gpgv");
    }
    {
        FakeSystem sys; // an rpm host: no dpkg status at all
        sys.add_file("/usr/bin/sqv", "ELF");
        EXPECT_EQ(detect_key_policy(sys).verifier, "gpgv");
    }
}

TEST(KeyPolicy, PolicyDateIsUtc) {
    using namespace std::chrono;
    EXPECT_EQ(policy_date(system_clock::time_point(seconds(1769903999))), "2026-01-31");
    EXPECT_EQ(policy_date(system_clock::time_point(seconds(1769904000))), "2026-02-01");
}
