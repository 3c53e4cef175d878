#pragma once
// Helpers shared by the files of gpuprov_repo; not part of the public interface.
#include <cstdint>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov::repo_detail {

/// Lower-case hex digests (OpenSSL EVP).
[[nodiscard]] std::string sha1_hex(std::string_view data);
[[nodiscard]] std::string sha256_hex(std::string_view data);

/// RFC 4880 section 6.1 checksum of an armored block's payload.
[[nodiscard]] std::uint32_t crc24(std::string_view data);

/// Strict base64 (whitespace ignored, '=' padding only at the end); nullopt on anything else.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

struct Dearmored {
    std::optional<std::string> data; ///< payloads of every armored block, concatenated
    std::string error;
};

/// Decodes every `-----BEGIN PGP <block_type>-----` block in `text`, checking each CRC24 when
/// present (RFC 9580 made it optional). Several blocks are concatenated so the caller sees every
/// packet the file would give gpg, not only the first block's.
[[nodiscard]] Dearmored dearmor(std::string_view text, std::string_view block_type);

inline unsigned byte_at(std::string_view s, std::size_t i) {
    return static_cast<unsigned char>(s[i]);
}

/// One OpenPGP packet (RFC 4880 section 4.2, RFC 9580 section 4.2).
struct OpenPgpPacket {
    int tag = 0;
    std::string_view header; ///< the header bytes, so the packet can be copied as it came
    std::string_view body;
};

struct OpenPgpPacketRead {
    std::optional<OpenPgpPacket> packet;
    std::string error; ///< why there is no packet: damage, or a form key files never use
};

/// Reads the packet at `pos` of a binary key and moves `pos` past it. The one packet reader:
/// parse_openpgp_key checks keys with it and the key policy walks the keys it accepted.
[[nodiscard]] OpenPgpPacketRead read_openpgp_packet(std::string_view data, std::size_t& pos);

/// sys.fetch for http(s); a file:// URL (an offline bundle, docs/air-gapped.md) is read from
/// the local file system instead, with the same result shape, so a bundle's repository goes
/// through the very checks (key, gpgv, SHA-256) a mirror's does.
[[nodiscard]] FetchResult fetch_url(const System& sys, const FetchRequest& req);

} // namespace gpuprov::repo_detail
