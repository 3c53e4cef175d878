// OpenPGP transferable public keys (RFC 4880 section 11.1, RFC 9580 section 10.1): enough of the
// packet layer to find the primary key, compute its fingerprint and refuse anything that would
// let a key file carry more trust than the one pinned fingerprint.
#include "internal.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>

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

struct Packet {
    int tag = 0;
    std::string_view header; ///< the header bytes, so the packet can be copied as it came
    std::string_view body;
};

struct PacketReadResult {
    std::optional<Packet> packet;
    std::string error;
};

unsigned byte_at(std::string_view s, std::size_t i) {
    return static_cast<unsigned char>(s[i]);
}

PacketReadResult read_packet(std::string_view data, std::size_t& pos) {
    const auto start = pos;
    const auto need = [&](std::size_t n) { return data.size() - pos >= n; };
    const auto first = byte_at(data, pos++);
    if ((first & 0x80u) == 0) {
        return {std::nullopt, fmt::format("byte {} is not an OpenPGP packet header", start)};
    }
    Packet p;
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

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

/// v4 fingerprint: SHA-1 over 0x99, a two-octet length and the public-key packet body.
std::optional<std::string> v4_fingerprint(std::string_view body, std::string& error) {
    if (body.empty()) {
        error = "empty public-key packet";
        return std::nullopt;
    }
    const auto version = byte_at(body, 0);
    if (version == 5 || version == 6) {
        error = fmt::format("v{} OpenPGP keys are not supported (only v4, which is what apt and "
                            "every NVIDIA repository use)",
                            version);
        return std::nullopt;
    }
    if (version != 4) {
        error = fmt::format("v{} OpenPGP keys are obsolete and not accepted", version);
        return std::nullopt;
    }
    if (body.size() < 6 || body.size() > 0xFFFF) {
        error = fmt::format("malformed v4 public-key packet ({} bytes)", body.size());
        return std::nullopt;
    }
    std::string hashed;
    hashed += static_cast<char>(0x99);
    hashed += static_cast<char>((body.size() >> 8) & 0xFF);
    hashed += static_cast<char>(body.size() & 0xFF);
    hashed += body;
    return upper(sha1_hex(hashed));
}

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
    std::size_t pos = 0;
    while (pos < decoded.size()) {
        auto read = read_packet(decoded, pos);
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
            std::string error;
            auto fpr = v4_fingerprint(p.body, error);
            if (!fpr) {
                return refuse(error);
            }
            if (primaries == 1) {
                key.fingerprint = std::move(*fpr);
            }
            break;
        }
        case tag_user_id:
            key.user_ids.emplace_back(p.body);
            break;
        case tag_public_subkey:
        case tag_signature:
        case tag_user_attribute:
            break;
        case tag_marker:
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

} // namespace gpuprov
