// OpenPGP transferable public keys (RFC 4880 section 11.1, RFC 9580 section 10.1): enough of the
// packet layer to find the primary key, compute its fingerprint and refuse anything that would
// let a key file carry more trust than the one pinned fingerprint.
#include "internal.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <vector>

namespace gpuprov {

namespace {

using repo_detail::dearmor;
using repo_detail::sha1_hex;

enum Tag : int {
    tag_signature = 2,
    tag_secret_key = 5,
    tag_public_key = 6,
    tag_secret_subkey = 7,
    tag_marker = 10,
    tag_trust = 12,
    tag_user_id = 13,
    tag_public_subkey = 14,
    tag_user_attribute = 17,
};

using repo_detail::byte_at;
using repo_detail::OpenPgpPacket;

/// GnuPG reads no MPI longer than this (MAX_EXTERN_MPI_BITS, g10/parse-packet.c) and drops a key
/// that holds one ("mpi too large"); no real key comes near it (RSA 4096 is 4096 bits).
constexpr unsigned kMaxMpiBits = 16384;

/// The number of significant bits in a byte (0 for 0).
unsigned bit_length(unsigned byte) {
    unsigned n = 0;
    for (; byte != 0; byte >>= 1) {
        ++n;
    }
    return n;
}

/// How reading one MPI (RFC 4880 section 3.2) went.
enum class MpiStatus { ok, truncated, too_large, leading_zeros };

struct MpiRead {
    MpiStatus status = MpiStatus::ok;
    unsigned bits = 0;
};

/// Reads the MPI at `pos` and moves `pos` past it, unless it is truncated or over gpg's limit.
/// `leading_zeros` is an MPI whose bit count does not start at its most significant set bit:
/// readable, but gpg re-encodes it.
MpiRead read_mpi(std::string_view body, std::size_t& pos) {
    if (body.size() - pos < 2) {
        return {MpiStatus::truncated, 0};
    }
    const auto bits = (byte_at(body, pos) << 8) | byte_at(body, pos + 1);
    if (bits > kMaxMpiBits) {
        return {MpiStatus::too_large, bits};
    }
    const std::size_t bytes = (bits + 7) / 8;
    if (body.size() - pos - 2 < bytes) {
        return {MpiStatus::truncated, bits};
    }
    pos += 2;
    const bool exact = bytes == 0 || bits == 8 * (bytes - 1) + bit_length(byte_at(body, pos));
    pos += bytes;
    return {exact ? MpiStatus::ok : MpiStatus::leading_zeros, bits};
}

/// Why the algorithm-specific fields of a v4 public-key packet (RFC 4880 section 5.5.2, RFC 6637
/// section 9, RFC 9580 section 5.5.5) are not what gpg can load, or empty. gpg (g10/parse-packet.c
/// parse_key) reads exactly these fields, skips whatever follows them and computes the
/// fingerprint over its own re-encoding, so bytes after the fields or an MPI with leading zero
/// bits give gpg and gpgv another fingerprint than the one in the file: both are refused, like
/// what gpg cannot read at all. Algorithms this does not know gpg keeps as they are; so does this.
std::string key_material_problem(std::string_view body) {
    enum Field { mpi, oid, kdf };
    std::vector<Field> fields;
    const auto algo = byte_at(body, 5);
    switch (algo) {
    case 1:
    case 2:
    case 3:
        fields = {mpi, mpi}; // RSA: n, e
        break;
    case 16:
    case 20:
        fields = {mpi, mpi, mpi}; // Elgamal: p, g, y
        break;
    case 17:
        fields = {mpi, mpi, mpi, mpi}; // DSA: p, q, g, y
        break;
    case 18:
        fields = {oid, mpi, kdf}; // ECDH: curve, point, KDF parameters
        break;
    case 19:
    case 22:
        fields = {oid, mpi}; // ECDSA, EdDSA: curve, point
        break;
    default:
        return {};
    }
    std::size_t pos = 6;
    for (const auto field : fields) {
        if (field == mpi) {
            const auto read = read_mpi(body, pos);
            switch (read.status) {
            case MpiStatus::truncated:
                return read.bits == 0
                           ? fmt::format("the key's algorithm {} material ends before its MPIs do",
                                         algo)
                           : fmt::format("the key's algorithm {} material ends inside a {}-bit "
                                         "number",
                                         algo, read.bits);
            case MpiStatus::too_large:
                return fmt::format("the key holds a {}-bit number; gpg reads none over {} bits, so "
                                   "apt could not use this key",
                                   read.bits, kMaxMpiBits);
            case MpiStatus::leading_zeros:
                return fmt::format("the key's algorithm {} material has a {}-bit number with "
                                   "leading zero bits; gpg re-encodes it, so gpg's fingerprint "
                                   "for this key is not the one computed from the file",
                                   algo, read.bits);
            case MpiStatus::ok:
                break;
            }
        } else {
            // A one-octet length, then that many octets; 0 and 255 are reserved (RFC 6637 9).
            if (body.size() - pos < 1) {
                return fmt::format("the key's algorithm {} material ends before its {}", algo,
                                   field == oid ? "curve OID" : "KDF parameters");
            }
            const std::size_t length = byte_at(body, pos++);
            if (length == 0 || length == 0xFF || body.size() - pos < length) {
                return fmt::format("the key's algorithm {} {} field is malformed", algo,
                                   field == oid ? "curve OID" : "KDF parameters");
            }
            pos += length;
        }
    }
    if (pos != body.size()) {
        return fmt::format("the key packet has {} bytes after its algorithm {} material; gpg "
                           "skips them, so gpg's fingerprint for this key is not the one computed "
                           "from the file",
                           body.size() - pos, algo);
    }
    return {};
}

/// Why a public-key or public-subkey packet body is not a v4 key gpg can load, or empty.
std::string key_packet_problem(std::string_view body) {
    if (body.empty()) {
        return "empty public-key packet";
    }
    const auto version = byte_at(body, 0);
    if (version == 5 || version == 6) {
        return fmt::format("v{} OpenPGP keys are not supported (only v4, which is what apt and "
                           "every NVIDIA repository use)",
                           version);
    }
    if (version != 4) {
        return fmt::format("v{} OpenPGP keys are obsolete and not accepted", version);
    }
    // gpg refuses a v4 key packet under 12 bytes ("packet(6) too short", parse_key).
    if (body.size() < 12 || body.size() > 0xFFFF) {
        return fmt::format("malformed v4 public-key packet ({} bytes)", body.size());
    }
    return key_material_problem(body);
}

/// v4 fingerprint (RFC 4880 section 12.2): SHA-1 over 0x99, a two-octet length and the body of
/// a public-key packet that key_packet_problem accepted.
std::string v4_fingerprint(std::string_view body) {
    std::string hashed;
    hashed += static_cast<char>(0x99);
    hashed += static_cast<char>((body.size() >> 8) & 0xFF);
    hashed += static_cast<char>(body.size() & 0xFF);
    hashed += body;
    return to_upper(sha1_hex(hashed));
}

/// The number of MPIs gpg reads from a signature made with `algo` (g10/misc.c pubkey_get_nsig:
/// RSA one, DSA, ECDSA, EdDSA and Elgamal two); for any other algorithm it keeps the rest of the
/// packet unread, so anything goes. Checked against gpg 2.2.40 for algorithms 0 to 110.
int signature_mpi_count(unsigned algo) {
    switch (algo) {
    case 1:
    case 2:
    case 3:
        return 1;
    case 17:
    case 19:
    case 20:
    case 22:
        return 2;
    default:
        return 0;
    }
}

/// gpg reads no signature subpacket area over this (parse_signature: "hashed data too long").
constexpr std::size_t kMaxSubpacketArea = 10000;

/// Why a signature packet is one gpg refuses to read, or empty. gpg ends the whole import at a
/// signature packet it cannot parse ("read_block: read error: Invalid packet", g10/import.c),
/// so apt could not read a keyring holding one. gpg's parse_signature (g10/parse-packet.c) reads,
/// and this checks the same way (every case compared with gpg 2.2.40 --show-keys):
///   - version 2 to 4 (RFC 4880 section 5.2 defines 3 and 4); under 16 bytes gpg keeps the
///     packet unread and goes on, which is refused here as damage;
///   - v2/v3: version, hashed length, class, time, key id, algorithms and the hash's first two
///     bytes, 19 bytes in all (section 5.2.2);
///   - v4: version, class, algorithms, then the hashed and the unhashed subpacket areas, each a
///     two-byte length of at most 10000 and that many bytes, then the hash's two bytes
///     (section 5.2.3);
///   - then the signature's MPIs for the algorithms gpg knows, each within the packet and at
///     most 16384 bits. Bytes after them gpg skips.
/// The subpackets themselves and the signatures' validity are gpgv's to judge, not gpg's reader.
std::string signature_problem(std::string_view body) {
    const auto too_short = [&] {
        return fmt::format("a signature packet of {} bytes is too short for gpg to read",
                           body.size());
    };
    // gpg keeps a packet under 16 bytes as an unreadable signature and shows the key anyway;
    // it is damage all the same, and refused like a damaged key packet.
    if (body.size() < 16) {
        return fmt::format("a signature packet of {} bytes, shorter than any signature can be: "
                           "the key file is damaged",
                           body.size());
    }
    const auto version = byte_at(body, 0);
    if (version < 2 || version > 4) {
        return fmt::format("a signature packet has version {}, which gpg cannot read", version);
    }
    std::size_t pos = 0;
    unsigned algo = 0;
    if (version == 4) {
        algo = byte_at(body, 2);
        pos = 4;
        for (const auto* area : {"hashed", "unhashed"}) {
            if (body.size() - pos < 2) {
                return too_short();
            }
            const std::size_t length = (byte_at(body, pos) << 8) | byte_at(body, pos + 1);
            pos += 2;
            if (length > kMaxSubpacketArea) {
                return fmt::format("a signature's {} subpacket area of {} bytes is over the {} "
                                   "gpg reads, so gpg cannot read the key",
                                   area, length, kMaxSubpacketArea);
            }
            if (body.size() - pos < length) {
                return too_short();
            }
            pos += length;
        }
    } else {
        algo = byte_at(body, 15);
        pos = 17;
        if (body.size() < pos) {
            return too_short();
        }
    }
    if (body.size() - pos < 2) {
        return too_short();
    }
    pos += 2;
    for (int i = 0; i < signature_mpi_count(algo); ++i) {
        const auto read = read_mpi(body, pos);
        if (read.status == MpiStatus::truncated) {
            return fmt::format("a signature packet ends inside its algorithm {} value, which gpg "
                               "cannot read",
                               algo);
        }
        if (read.status == MpiStatus::too_large) {
            return fmt::format("a signature holds a {}-bit number; gpg reads none over {} bits, "
                               "so gpg cannot read the key",
                               read.bits, kMaxMpiBits);
        }
    }
    return {};
}

/// The class (RFC 4880 section 5.2.1) of a signature packet that signature_problem accepted.
unsigned signature_class(std::string_view body) {
    return byte_at(body, byte_at(body, 0) == 4 ? 1 : 2);
}

/// Whether a signature class certifies a user ID: 0x10 to 0x13, and 0x30 revoking one.
bool certifies_user_id(unsigned sig_class) {
    return (sig_class >= 0x10 && sig_class <= 0x13) || sig_class == 0x30;
}

/// gpg refuses a user ID packet over 2048 bytes ("packet(13) too large", MAX_UID_PACKET_LENGTH).
constexpr std::size_t kMaxUserIdBytes = 2048;

KeyParseResult refuse(std::string why) {
    return {std::nullopt, std::move(why)};
}

/// A short, printable excerpt, so "not an OpenPGP key" also says what came instead (often an
/// HTML error page from a proxy or captive portal).
std::string excerpt(std::string_view data) {
    std::string out;
    for (const char c : trim(data).substr(0, 40)) {
        out += std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '.';
    }
    return out;
}

} // namespace

KeyParseResult parse_openpgp_key(std::string_view data) {
    if (data.empty()) {
        return refuse("empty key file");
    }
    std::string decoded;
    if ((byte_at(data, 0) & 0x80u) != 0) {
        decoded = std::string(data);
    } else if (data.find("-----BEGIN PGP PUBLIC KEY BLOCK-----") != std::string_view::npos) {
        auto armored = dearmor(data, "PUBLIC KEY BLOCK");
        if (!armored.data) {
            return refuse(armored.error);
        }
        decoded = std::move(*armored.data);
    } else if (data.find("-----BEGIN PGP PRIVATE KEY BLOCK-----") != std::string_view::npos) {
        return refuse("this is a private key block; only the public key belongs on a host");
    } else {
        return refuse(fmt::format("not an OpenPGP key (neither armored nor binary); it starts "
                                  "with \"{}\"",
                                  excerpt(data)));
    }

    OpenPgpKey key;
    int primaries = 0;
    bool user_id_seen = false; // a user ID or user attribute packet

    std::size_t pos = 0;
    while (pos < decoded.size()) {
        auto read = repo_detail::read_openpgp_packet(decoded, pos);
        if (!read.packet) {
            return refuse(read.error);
        }
        const auto& p = *read.packet;
        if (p.tag == tag_secret_key || p.tag == tag_secret_subkey) {
            return refuse("key file holds secret key material; refusing to copy it onto hosts");
        }
        if (primaries == 0 && p.tag != tag_public_key && p.tag != tag_marker) {
            return refuse(fmt::format("key data does not start with a public-key packet (found "
                                      "packet type {})",
                                      p.tag));
        }
        switch (p.tag) {
        case tag_public_key: {
            ++primaries;
            if (auto problem = key_packet_problem(p.body); !problem.empty()) {
                return refuse(std::move(problem));
            }
            if (primaries == 1) {
                key.fingerprint = v4_fingerprint(p.body);
            }
            break;
        }
        case tag_user_id:
            if (p.body.size() > kMaxUserIdBytes) {
                return refuse(fmt::format("a user ID of {} bytes; gpg reads none over {}",
                                          p.body.size(), kMaxUserIdBytes));
            }
            key.user_ids.emplace_back(p.body);
            user_id_seen = true;
            break;
        case tag_public_subkey:
            if (auto problem = key_packet_problem(p.body); !problem.empty()) {
                return refuse("a subkey: " + problem);
            }
            break;
        case tag_signature:
            if (auto problem = signature_problem(p.body); !problem.empty()) {
                return refuse(std::move(problem));
            }
            // RFC 4880 section 11.1 puts each certification after the user ID it certifies; gpg
            // refuses the whole key when one of the key's own comes first ("no user ID for
            // signature", g10/import.c chk_self_sigs). Refused whoever made it: it certifies
            // nothing, and the issuer is in subpackets this parser leaves to gpgv.
            if (const auto sig_class = signature_class(p.body);
                !user_id_seen && certifies_user_id(sig_class)) {
                return refuse(fmt::format("a user ID certification (signature class 0x{:02x}) "
                                          "comes before any user ID",
                                          sig_class));
            }
            break;
        case tag_user_attribute:
            user_id_seen = true;
            break;
        case tag_marker:
            // RFC 4880 section 5.8: the body is "PGP"; gpg refuses the file on any other
            // ("invalid marker packet").
            if (p.body != "PGP") {
                return refuse("a marker packet whose body is not \"PGP\"; gpg cannot read it");
            }
            continue;
        case tag_trust:
            // Local to the exporting keyring (trust) or meaningless (marker): not copied, so the
            // keyring apt sees holds only what the key's owner published.
            continue;
        default:
            return refuse(fmt::format("unexpected OpenPGP packet type {} in a public key", p.tag));
        }
        key.binary += p.header;
        key.binary += p.body;
    }
    if (primaries == 0) {
        return refuse("key file holds no public key");
    }
    if (primaries > 1) {
        return refuse(fmt::format("key file holds {} primary keys; refusing to trust more than "
                                  "the pinned one",
                                  primaries));
    }
    return {std::move(key), {}};
}

namespace repo_detail {

OpenPgpPacketRead read_openpgp_packet(std::string_view data, std::size_t& pos) {
    const auto start = pos;
    const auto need = [&](std::size_t n) { return data.size() - pos >= n; };
    const auto first = byte_at(data, pos++);
    if ((first & 0x80u) == 0) {
        return {std::nullopt, fmt::format("byte {} is not an OpenPGP packet header", start)};
    }
    OpenPgpPacket p;
    std::size_t length = 0;
    if ((first & 0x40u) != 0) {
        p.tag = static_cast<int>(first & 0x3Fu);
        if (!need(1)) {
            return {std::nullopt, "truncated packet header"};
        }
        const auto o1 = byte_at(data, pos++);
        if (o1 < 192) {
            length = o1;
        } else if (o1 < 224) {
            if (!need(1)) {
                return {std::nullopt, "truncated packet header"};
            }
            length = ((o1 - 192) << 8) + byte_at(data, pos++) + 192;
        } else if (o1 == 255) {
            if (!need(4)) {
                return {std::nullopt, "truncated packet header"};
            }
            for (int i = 0; i < 4; ++i) {
                length = (length << 8) | byte_at(data, pos++);
            }
        } else {
            // Partial body lengths exist for streamed data packets only; a key never uses them.
            return {std::nullopt, fmt::format("packet {} uses a partial body length, which "
                                              "key packets never do",
                                              p.tag)};
        }
    } else {
        p.tag = static_cast<int>((first >> 2) & 0x0Fu);
        const auto type = first & 0x03u;
        if (type == 3) {
            return {std::nullopt, fmt::format("packet {} has an indeterminate length", p.tag)};
        }
        const std::size_t octets = type == 0 ? 1 : type == 1 ? 2 : 4;
        if (!need(octets)) {
            return {std::nullopt, "truncated packet header"};
        }
        for (std::size_t i = 0; i < octets; ++i) {
            length = (length << 8) | byte_at(data, pos++);
        }
    }
    if (!need(length)) {
        return {std::nullopt, fmt::format("packet {} claims {} bytes but only {} remain; the "
                                          "key is truncated",
                                          p.tag, length, data.size() - pos)};
    }
    p.header = data.substr(start, pos - start);
    p.body = data.substr(pos, length);
    pos += length;
    return {p, {}};
}

} // namespace repo_detail

} // namespace gpuprov
