#include "fake_system.hpp"

#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>
#include <optional>

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

namespace {

/// The test key's self-signature (old format tag 2 at byte 325, body 334 bytes: v4, RSA, a
/// 56-byte hashed area, a 10-byte unhashed area, the hash's two bytes, a 2048-bit value) split
/// into its fields, so a test can rebuild it with one field changed.
struct SelfSignature {
    std::string key_and_uid; // the packets before the signature
    std::string head;        // version, class, public-key algorithm, hash algorithm
    std::string hashed;
    std::string unhashed;
    std::string hash_prefix;
    std::string value; // the MPIs

    static SelfSignature of_test_key() {
        const auto bin = read_fixture("repo/test-key.gpg");
        SelfSignature s;
        s.key_and_uid = bin.substr(0, 325);
        const auto body = std::string_view(bin).substr(328);
        s.head = std::string(body.substr(0, 4));
        s.hashed = std::string(body.substr(6, 56));
        s.unhashed = std::string(body.substr(64, 10));
        s.hash_prefix = std::string(body.substr(74, 2));
        s.value = std::string(body.substr(76));
        return s;
    }

    static std::string be16(std::size_t n) {
        return {static_cast<char>((n >> 8) & 0xFF), static_cast<char>(n & 0xFF)};
    }

    /// The body with the areas' real lengths, or the ones given.
    [[nodiscard]] std::string body(std::optional<std::size_t> hashed_length = {},
                                   std::optional<std::size_t> unhashed_length = {}) const {
        return head + be16(hashed_length.value_or(hashed.size())) + hashed +
               be16(unhashed_length.value_or(unhashed.size())) + unhashed + hash_prefix + value;
    }

    /// The key file with `sig_body` as its signature packet (new format, 5-octet length).
    [[nodiscard]] std::string file(const std::string& sig_body) const {
        std::string header = {static_cast<char>(0xC2), static_cast<char>(0xFF)};
        for (int shift = 24; shift >= 0; shift -= 8) {
            header += static_cast<char>((sig_body.size() >> shift) & 0xFF);
        }
        return key_and_uid + header + sig_body;
    }
};

} // namespace

// CI's fuzz pass found a signature packet gpuprov accepted and gpg refused ("packet(2) too
// short"): gpg's parse_signature ends the import at any signature whose fields overrun the
// packet. Each case here was checked with gpg 2.2.40 (tests/fixtures/repo/oracle/README.md).
TEST(OpenPgp, SignaturePacketIsReadFieldByFieldLikeGpg) {
    const auto s = SelfSignature::of_test_key();
    ASSERT_EQ(s.head[0], 4);
    ASSERT_EQ(s.head[2], 1) << "RSA";
    ASSERT_TRUE(parse_openpgp_key(s.file(s.body())).key) << "the rebuilt key is the test key";

    const auto refused = [&](const std::string& body, std::string_view why) {
        const auto r = parse_openpgp_key(s.file(body));
        EXPECT_FALSE(r.key) << why;
        EXPECT_NE(r.error.find("gpg"), std::string::npos) << r.error;
    };
    const auto after_hashed = 2 + s.unhashed.size() + s.hash_prefix.size() + s.value.size();
    refused(s.body(after_hashed + 1), "hashed area longer than the packet");
    refused(s.body(after_hashed - 1), "hashed area leaves one byte: no unhashed length");
    refused(s.body({}, s.unhashed.size() + s.hash_prefix.size() + s.value.size() + 1),
            "unhashed area longer than the packet");
    auto no_prefix = s;
    no_prefix.hash_prefix = "";
    no_prefix.value = "";
    refused(no_prefix.body(), "no hash prefix");
    auto truncated = s;
    truncated.value.resize(truncated.value.size() - 5);
    refused(truncated.body(), "RSA value cut short");
    auto huge = s;
    huge.value[0] = 0x40;
    huge.value[1] = 0x01;
    refused(huge.body(), "a 16385-bit value");
    auto dsa = s;
    dsa.head[2] = 17;
    refused(dsa.body(), "DSA needs two values, the RSA signature has one");
    auto big_area = s;
    big_area.unhashed.resize(10001, '\0');
    refused(big_area.body(), "unhashed area over 10000 bytes");
    refused(std::string{3, 5, 0x13} + std::string(13, '\0'), "v3 signature of 16 bytes");
    // Under 16 bytes gpg keeps the packet unread and shows the key; refused as damage.
    const auto tiny = parse_openpgp_key(s.file(s.head));
    EXPECT_FALSE(tiny.key);
    EXPECT_NE(tiny.error.find("4 bytes, shorter than any signature can be"), std::string::npos)
        << tiny.error;

    // What gpg reads, gpuprov accepts: bytes after the value, a hashed area of exactly 10000
    // bytes, an empty value, and anything after the prefix for an algorithm gpg keeps opaque.
    const auto accepted = [&](const std::string& body, std::string_view why) {
        const auto r = parse_openpgp_key(s.file(body));
        EXPECT_TRUE(r.key) << why << ": " << r.error;
    };
    auto trailing = s;
    trailing.value += std::string(3, '\0');
    accepted(trailing.body(), "bytes after the value");
    auto full_area = s;
    for (std::size_t i = full_area.hashed.size(); i < 10000; i += 2) {
        full_area.hashed += std::string{1, 0}; // one-octet length 1, type 0: a reserved subpacket
    }
    ASSERT_EQ(full_area.hashed.size(), 10000u);
    accepted(full_area.body(), "hashed area of 10000 bytes");
    auto zero = s;
    zero.value = std::string(2, '\0');
    accepted(zero.body(), "a 0-bit value");
    auto opaque = s;
    opaque.head[2] = 99;
    opaque.value = "";
    accepted(opaque.body(), "algorithm 99 without a value");
}

// Found by the gpg oracle on a fresh fuzz corpus: with the user ID packet gone, the key's own
// certification comes first and gpg refuses the key ("no user ID for signature").
TEST(OpenPgp, CertificationBeforeAnyUserIdIsRefused) {
    const auto s = SelfSignature::of_test_key();
    const auto key_packet = s.key_and_uid.substr(0, 272);
    const auto user_id = s.key_and_uid.substr(272);
    ASSERT_EQ(static_cast<unsigned char>(user_id[0]), 0xB4u) << "old format, tag 13";
    const auto sig = s.file(s.body()).substr(s.key_and_uid.size());
    ASSERT_TRUE(parse_openpgp_key(key_packet + user_id + sig).key);
    for (const auto& file : {key_packet + sig, key_packet + sig + user_id + sig}) {
        const auto r = parse_openpgp_key(file);
        EXPECT_FALSE(r.key);
        EXPECT_NE(r.error.find("certification (signature class 0x13) comes before any user ID"),
                  std::string::npos)
            << r.error;
    }
    // A key alone, or a user attribute (RFC 4880 section 5.12) before it, is what gpg reads.
    EXPECT_TRUE(parse_openpgp_key(key_packet).key);
    const std::string attribute = {static_cast<char>(0xD1), 2, 1, 0}; // new format, tag 17
    EXPECT_TRUE(parse_openpgp_key(key_packet + attribute + sig).key);
    // A direct-key signature (class 0x1F) belongs before the user IDs.
    auto direct = s;
    direct.head[1] = 0x1F;
    EXPECT_TRUE(parse_openpgp_key(key_packet + direct.file(direct.body()).substr(325)).key);
}

// Found by the gpg oracle on a grown fuzz corpus: gpg ends an armor header's key at the first
// ':' it finds with strchr, so never past a NUL, and wants a space after it; any other line
// before the body is an "invalid armor header" and gpg reads no key.
TEST(OpenPgp, ArmorHeaderIsWhatGpgTakesForOne) {
    const auto with_header = [](std::string header) {
        return edited_armor([&](auto& l) { l.insert(l.begin() + 1, header); });
    };
    EXPECT_TRUE(parse_openpgp_key(with_header("Comment: fine")).key);
    for (const auto& header :
         {std::string("Co\0mment: x", 12), std::string("a:b: c"), std::string("Comment:x")}) {
        const auto r = parse_openpgp_key(with_header(header));
        EXPECT_FALSE(r.key) << header;
        EXPECT_NE(r.error.find("armored block 1"), std::string::npos) << r.error;
    }
}

// Found by the gpg oracle on a fresh fuzz run: whitespace inside the checksum line was skipped
// ("=Ts3<tabs>Q" read as "=Ts3Q"); gpg calls it a "malformed CRC" and reads no key.
TEST(OpenPgp, ChecksumIsExactlyFourCharacters) {
    const auto with_checksum = [](const std::function<std::string(std::string)>& edit) {
        return edited_armor([&](auto& l) { l[checksum_line(l)] = edit(l[checksum_line(l)]); });
    };
    EXPECT_TRUE(parse_openpgp_key(with_checksum([](std::string c) { return c; })).key);
    const auto split = parse_openpgp_key(
        with_checksum([](std::string c) { return c.substr(0, 4) + "\t\t" + c.substr(4); }));
    EXPECT_FALSE(split.key);
    EXPECT_NE(split.error.find("malformed checksum"), std::string::npos) << split.error;
}

// Found by the gpg oracle on a fresh fuzz run: gpg starts a block at a BEGIN line with bytes
// after its dashes and decodes what follows; gpuprov skipped such a line and read a later
// block, so the two read different keys from one file. Refused now.
TEST(OpenPgp, BeginLineWithBytesAfterItsDashesIsRefused) {
    const auto armored = edited_armor([](auto& l) { l[0] += std::string("\0\0x", 3); });
    const auto r = parse_openpgp_key(armored);
    EXPECT_FALSE(r.key);
    EXPECT_NE(r.error.find("bytes after the dashes"), std::string::npos) << r.error;
    const auto later = parse_openpgp_key(armored + read_fixture("repo/test-key.asc"));
    EXPECT_FALSE(later.key) << "a good block after the damaged one does not make it good";
}
