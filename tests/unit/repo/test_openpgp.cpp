#include "fake_system.hpp"

#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

namespace {

std::string test_fpr() {
    return std::string(trim(read_fixture("repo/test-key.fpr")));
}

/// The armored test key with one line changed by `edit`.
std::string edited_armor(const std::function<void(std::vector<std::string>&)>& edit) {
    auto l = lines(read_fixture("repo/test-key.asc"));
    edit(l);
    return join(l, "\n") + "\n";
}

std::size_t checksum_line(const std::vector<std::string>& l) {
    for (std::size_t i = 0; i < l.size(); ++i) {
        if (!l[i].empty() && l[i][0] == '=') {
            return i;
        }
    }
    ADD_FAILURE() << "test key has no checksum line";
    return 0;
}

} // namespace

TEST(OpenPgp, ArmoredKeyGivesFingerprintUserIdAndDearmoredBinary) {
    const auto r = parse_openpgp_key(read_fixture("repo/test-key.asc"));
    ASSERT_TRUE(r.key) << r.error;
    EXPECT_EQ(r.key->fingerprint, test_fpr());
    ASSERT_EQ(r.key->user_ids.size(), 1u);
    EXPECT_EQ(r.key->user_ids[0], "gpuprov test repository <repo-test@gpuprov.invalid>");
    // gpg --export of the same key: exactly what apt's Signed-By accepts.
    EXPECT_EQ(r.key->binary, read_fixture("repo/test-key.gpg"));
}

TEST(OpenPgp, BinaryKeyIsAcceptedAsIs) {
    const auto bin = read_fixture("repo/test-key.gpg");
    const auto r = parse_openpgp_key(bin);
    ASSERT_TRUE(r.key) << r.error;
    EXPECT_EQ(r.key->fingerprint, test_fpr());
    EXPECT_EQ(r.key->binary, bin);
}

TEST(OpenPgp, RealNvidiaCudaKeyHasItsPublishedFingerprint) {
    const auto r = parse_openpgp_key(read_fixture("repo/nvidia-7fa2af80.pub"));
    ASSERT_TRUE(r.key) << r.error;
    EXPECT_EQ(r.key->fingerprint, "AE09FE4BBD223A84B2CCFCE3F60F4B3D7FA2AF80");
    ASSERT_EQ(r.key->user_ids.size(), 1u);
    EXPECT_EQ(r.key->user_ids[0], "cudatools <cudatools@nvidia.com>");
}

TEST(OpenPgp, RealNvidiaDriverTeamKeyHasItsPublishedFingerprint) {
    const auto r = parse_openpgp_key(read_fixture("repo/nvidia-driver-team-db27fd5a.pub"));
    ASSERT_TRUE(r.key) << r.error;
    EXPECT_EQ(r.key->fingerprint, "2FB03195DECD49492BD1C17AB1D0D788DB27FD5A");
}

TEST(OpenPgp, NewFormatPacketHeaderGivesSameFingerprint) {
    // gpg writes old-format headers; RFC 9580 implementations write new ones. Rewrite the first
    // packet's header (old format, 2-octet length) as a new-format two-octet length.
    const auto bin = read_fixture("repo/test-key.gpg");
    ASSERT_EQ(static_cast<unsigned char>(bin[0]), 0x99u); // old format, tag 6, 2-octet length
    const std::size_t len =
        (static_cast<unsigned char>(bin[1]) << 8) | static_cast<unsigned char>(bin[2]);
    ASSERT_GE(len, 192u);
    ASSERT_LT(len, 8384u);
    std::string rewritten;
    rewritten += static_cast<char>(0xC6);
    rewritten += static_cast<char>(((len - 192) >> 8) + 192);
    rewritten += static_cast<char>((len - 192) & 0xFF);
    rewritten += bin.substr(3);
    const auto r = parse_openpgp_key(rewritten);
    ASSERT_TRUE(r.key) << r.error;
    EXPECT_EQ(r.key->fingerprint, test_fpr());
}

TEST(OpenPgp, WrongCrcIsRefused) {
    const auto armored = edited_armor([](auto& l) { l[checksum_line(l)] = "=AAAA"; });
    const auto r = parse_openpgp_key(armored);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("CRC24"), std::string::npos) << r.error;
}

TEST(OpenPgp, DamagedBodyIsCaughtByCrc) {
    const auto armored = edited_armor([](auto& l) {
        auto& line = l[checksum_line(l) - 2];
        line[10] = line[10] == 'A' ? 'B' : 'A';
    });
    const auto r = parse_openpgp_key(armored);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("CRC24"), std::string::npos) << r.error;
}

TEST(OpenPgp, MissingCrcIsAcceptedAsRfc9580Allows) {
    const auto armored = edited_armor([](auto& l) { l.erase(l.begin() + checksum_line(l)); });
    const auto r = parse_openpgp_key(armored);
    ASSERT_TRUE(r.key) << r.error;
    EXPECT_EQ(r.key->fingerprint, test_fpr());
}

TEST(OpenPgp, InvalidBase64IsRefused) {
    const auto armored = edited_armor([](auto& l) { l[checksum_line(l) - 1] += "*"; });
    const auto r = parse_openpgp_key(armored);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("base64"), std::string::npos) << r.error;
}

TEST(OpenPgp, TwoPrimaryKeysAreRefused) {
    const auto r = parse_openpgp_key(read_fixture("repo/two-keys.asc"));
    EXPECT_FALSE(r.key);
    EXPECT_EQ(r.error, "key file holds 2 primary keys; refusing to trust more than the pinned one");
}

TEST(OpenPgp, SecondKeyInASecondArmorBlockIsRefusedToo) {
    const auto r =
        parse_openpgp_key(read_fixture("repo/test-key.asc") + read_fixture("repo/other-key.asc"));
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("2 primary keys"), std::string::npos) << r.error;
}

TEST(OpenPgp, HtmlErrorPageIsNotAKey) {
    const auto r = parse_openpgp_key("<!DOCTYPE html><html><body>Access denied</body></html>");
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("not an OpenPGP key"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("<!DOCTYPE html>"), std::string::npos) << r.error;
}

TEST(OpenPgp, TruncatedBinaryKeyIsRefused) {
    const auto bin = read_fixture("repo/test-key.gpg");
    const auto r = parse_openpgp_key(std::string_view(bin).substr(0, bin.size() - 20));
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
}

/// The test key's primary key packet (old format, two-octet length: 3 header bytes) with its RSA
/// exponent's bit count (the second MPI, after n) set to `bits`, so the key material changes
/// but every length still adds up.
std::string test_key_with_exponent_bits(unsigned bits) {
    auto bin = read_fixture("repo/test-key.gpg");
    const std::size_t body = 3;
    EXPECT_EQ(static_cast<unsigned char>(bin[0]), 0x99u);
    EXPECT_EQ(bin[body + 5], 1) << "RSA";
    const auto n_bits = (static_cast<unsigned char>(bin[body + 6]) << 8) |
                        static_cast<unsigned char>(bin[body + 7]);
    const auto e_at = body + 8 + (n_bits + 7) / 8;
    bin[e_at] = static_cast<char>(bits >> 8);
    bin[e_at + 1] = static_cast<char>(bits & 0xFF);
    return bin;
}

// Found by the gpg oracle on the fuzz corpus (fuzz/README.md): gpg drops a key holding an MPI
// over 16384 bits ("mpi too large"), gpuprov accepted it.
TEST(OpenPgp, KeyWithANumberGpgCannotReadIsRefused) {
    const auto r = parse_openpgp_key(test_key_with_exponent_bits(16385));
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("16385-bit"), std::string::npos) << r.error;
}

TEST(OpenPgp, KeyWhoseNumberRunsPastItsPacketIsRefused) {
    // 17 bits need 3 bytes; the exponent 65537 has them. 4096 bits do not fit in the packet.
    EXPECT_TRUE(parse_openpgp_key(test_key_with_exponent_bits(17)).key);
    const auto r = parse_openpgp_key(test_key_with_exponent_bits(4096));
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("ends inside a 4096-bit number"), std::string::npos) << r.error;
}

// Found by the gpg oracle: gpg fingerprints its own re-encoding of the key material, so an MPI
// with leading zero bits or bytes after the material give gpg and gpgv another fingerprint than
// the file's: refused rather than pinned ambiguously.
TEST(OpenPgp, KeyNumberWithLeadingZeroBitsIsRefused) {
    const auto r = parse_openpgp_key(test_key_with_exponent_bits(18)); // 65537 has 17 bits
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("18-bit number with leading zero bits"), std::string::npos) << r.error;
}

TEST(OpenPgp, BytesAfterTheKeyMaterialAreRefused) {
    auto bin = read_fixture("repo/test-key.gpg");
    ASSERT_EQ(static_cast<unsigned char>(bin[0]), 0x99u);
    ASSERT_EQ(static_cast<unsigned char>(bin[2]), 13u) << "269 = 0x010D bytes";
    bin[2] = 14;
    bin.insert(3 + 269, 1, '\0');
    const auto r = parse_openpgp_key(bin);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("1 bytes after its algorithm 1 material"), std::string::npos) << r.error;
}

TEST(OpenPgp, UserIdLongerThanGpgReadsIsRefused) {
    const auto base = read_fixture("repo/test-key.gpg");
    const auto uid = [](std::size_t n) { // new-format tag 13, two-octet length (192..8383)
        return std::string{static_cast<char>(0xCD), static_cast<char>(((n - 192) >> 8) + 192),
                           static_cast<char>((n - 192) & 0xFF)} +
               std::string(n, 'u');
    };
    EXPECT_TRUE(parse_openpgp_key(base + uid(2048)).key);
    const auto r = parse_openpgp_key(base + uid(2049));
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("user ID of 2049 bytes"), std::string::npos) << r.error;
}

// Found by the gpg oracle on a grown fuzz corpus: gpg refuses a whole key file holding a
// signature packet of a version it does not know ("packet(2) with unknown version 103"), so apt
// could not read the keyring gpuprov would write.
TEST(OpenPgp, SignatureOfAnUnknownVersionIsRefused) {
    auto bin = read_fixture("repo/test-key.gpg");
    const std::size_t sig_body = 325 + 3; // after the key (3 + 269) and the user ID (2 + 51)
    ASSERT_EQ(static_cast<unsigned char>(bin[325]), 0x89u) << "old format, tag 2, 2-octet length";
    ASSERT_EQ(bin[sig_body], 4);
    bin[sig_body] = 103;
    const auto r = parse_openpgp_key(bin);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("signature packet has version 103"), std::string::npos) << r.error;
    // gpg 2.2 (Debian 12) reads versions 2 to 4 and refuses 5 the same way.
    bin[sig_body] = 5;
    EXPECT_FALSE(parse_openpgp_key(bin).key);
    bin[sig_body] = 2;
    EXPECT_TRUE(parse_openpgp_key(bin).key);
}

TEST(OpenPgp, SubkeyIsCheckedLikeThePrimaryKey) {
    // The primary key packet again, as a public subkey (old format tag 14, 2-octet length).
    const auto base = read_fixture("repo/test-key.gpg");
    const auto as_subkey = [](std::string packet) {
        packet[0] = static_cast<char>(0xB9);
        return packet;
    };
    EXPECT_TRUE(parse_openpgp_key(base + as_subkey(base.substr(0, 272))).key);
    const auto bad = test_key_with_exponent_bits(16385).substr(0, 272);
    const auto r = parse_openpgp_key(base + as_subkey(bad));
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("a subkey: the key holds a 16385-bit number"), std::string::npos)
        << r.error;
}

// Found by the gpg oracle: gpg refuses a file with a marker packet other than "PGP".
TEST(OpenPgp, MarkerPacketMustSayPgp) {
    const auto bin = read_fixture("repo/test-key.gpg");
    const auto marker = [](std::string body) { // old format, tag 10, one-octet length
        return std::string{static_cast<char>(0xA8), static_cast<char>(body.size())} + body;
    };
    const auto ok = parse_openpgp_key(marker("PGP") + bin);
    ASSERT_TRUE(ok.key) << ok.error;
    EXPECT_EQ(ok.key->binary, bin) << "the marker is not copied";
    const auto r = parse_openpgp_key(marker("PGQ") + bin);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("marker packet"), std::string::npos) << r.error;
}

TEST(OpenPgp, V6KeyIsRefusedClearly) {
    std::string packet = {static_cast<char>(0xC6), 10, 6, 0, 0, 0, 0, 27, 0, 0, 0, 0};
    const auto r = parse_openpgp_key(packet);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("v6"), std::string::npos) << r.error;
}

TEST(OpenPgp, SecretKeyMaterialIsRefused) {
    auto bin = read_fixture("repo/test-key.gpg");
    bin[0] = static_cast<char>(0x95); // old format, tag 5 (secret key), 2-octet length
    const auto r = parse_openpgp_key(bin);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("secret key material"), std::string::npos) << r.error;
}

TEST(OpenPgp, PrivateKeyBlockIsRefused) {
    const auto r = parse_openpgp_key("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ==\n"
                                     "-----END PGP PRIVATE KEY BLOCK-----\n");
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("private key"), std::string::npos) << r.error;
}

TEST(OpenPgp, EmptyInputIsRefused) {
    EXPECT_FALSE(parse_openpgp_key("").key);
}

TEST(ArmorPublicKey, RoundTripsThroughTheParser) {
    const auto binary = gpuprov::testing::read_fixture("repo/test-key.gpg");
    const auto armored = gpuprov::armor_public_key(binary);
    EXPECT_EQ(armored.rfind("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n", 0), 0u);
    const auto parsed = gpuprov::parse_openpgp_key(armored);
    ASSERT_TRUE(parsed.key) << parsed.error;
    EXPECT_EQ(parsed.key->binary, binary);
    // A flipped checksum character is caught: the CRC-24 line is real.
    auto bad = armored;
    const auto eq = bad.rfind("\n=");
    bad[eq + 2] = bad[eq + 2] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(gpuprov::parse_openpgp_key(bad).key);
}
