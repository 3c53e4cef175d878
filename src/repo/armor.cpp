#include "internal.hpp"

#include <fmt/format.h>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::repo_detail {

std::uint32_t crc24(std::string_view data) {
    std::uint32_t crc = 0xB704CEu;
    for (const char c : data) {
        crc ^= static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << 16;
        for (int i = 0; i < 8; ++i) {
            crc <<= 1;
            if ((crc & 0x1000000u) != 0) {
                crc ^= 0x1864CFBu;
            }
        }
    }
    return crc & 0xFFFFFFu;
}

namespace {

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// An armor header line ("Version: GnuPG v2", "Comment: ..."). Base64 never holds ':', so the
/// test cannot mistake a body line for a header. gpg (g10/armor.c parse_header_line) takes the
/// first ':' as the end of the key, looking with strchr, so never past a NUL, and wants a space
/// after it; a line it calls an "invalid armor header" is no header here either.
bool is_header_line(std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= line.size() ||
        line[colon + 1] != ' ') {
        return false;
    }
    return line.substr(0, colon).find_first_of(std::string_view(" \t\0", 3)) ==
           std::string_view::npos;
}

} // namespace

std::optional<std::string> base64_decode(std::string_view text) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    std::size_t padding = 0;
    std::size_t symbols = 0;
    for (const char c : text) {
        if (is_space(c)) {
            continue;
        }
        if (c == '=') {
            ++padding;
            ++symbols;
            continue;
        }
        const int v = base64_value(c);
        if (v < 0 || padding != 0) {
            return std::nullopt;
        }
        ++symbols;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFFu);
        }
    }
    if (padding > 2 || symbols % 4 != 0) {
        return std::nullopt;
    }
    return out;
}

Dearmored dearmor(std::string_view text, std::string_view block_type) {
    const auto begin_line = fmt::format("-----BEGIN PGP {}-----", block_type);
    const auto end_line = fmt::format("-----END PGP {}-----", block_type);
    const auto all = lines(text);
    std::string payload;
    int blocks = 0;
    std::size_t i = 0;
    while (i < all.size()) {
        if (const auto line = trim(all[i]); line != begin_line) {
            // gpg takes a BEGIN line with bytes after its dashes for the start of a block and
            // decodes what follows; read otherwise, the same file gives two parsers two keys.
            if (starts_with(line, begin_line)) {
                return {std::nullopt, fmt::format("armored block {}: bytes after the dashes of "
                                                  "its '{}' line",
                                                  blocks + 1, begin_line)};
            }
            ++i;
            continue;
        }
        ++blocks;
        ++i;
        while (i < all.size() && is_header_line(trim(all[i]))) {
            ++i;
        }
        std::string body;
        std::optional<std::string> checksum;
        bool ended = false;
        for (; i < all.size(); ++i) {
            const auto line = trim(all[i]);
            if (line == end_line) {
                ended = true;
                ++i;
                break;
            }
            if (!line.empty() && line.front() == '=') {
                checksum = std::string(line.substr(1));
            } else if (checksum) {
                return {std::nullopt, fmt::format("armored block {}: data after the checksum "
                                                  "line",
                                                  blocks)};
            } else {
                body += line;
            }
        }
        if (!ended) {
            return {std::nullopt,
                    fmt::format("armored block {} has no '{}' line", blocks, end_line)};
        }
        auto data = base64_decode(body);
        if (!data) {
            return {std::nullopt, fmt::format("armored block {}: invalid base64", blocks)};
        }
        if (checksum) {
            // Exactly four radix-64 characters after '=' (RFC 4880 section 6.2); gpg calls
            // anything else, whitespace inside included, a "malformed CRC".
            const auto crc_bytes =
                checksum->size() == 4 && checksum->find_first_of(" \t\r\n\v\f") == std::string::npos
                    ? base64_decode(*checksum)
                    : std::nullopt;
            if (!crc_bytes || crc_bytes->size() != 3) {
                return {std::nullopt, fmt::format("armored block {}: malformed checksum '={}'",
                                                  blocks, *checksum)};
            }
            const auto want =
                (static_cast<std::uint32_t>(static_cast<unsigned char>((*crc_bytes)[0])) << 16) |
                (static_cast<std::uint32_t>(static_cast<unsigned char>((*crc_bytes)[1])) << 8) |
                static_cast<std::uint32_t>(static_cast<unsigned char>((*crc_bytes)[2]));
            const auto got = crc24(*data);
            if (got != want) {
                return {std::nullopt,
                        fmt::format("armored block {}: CRC24 checksum mismatch (file says {:06X}, "
                                    "data gives {:06X}); the key was damaged in transit",
                                    blocks, want, got)};
            }
        }
        payload += *data;
    }
    if (blocks == 0) {
        return {std::nullopt, fmt::format("no '{}' line", begin_line)};
    }
    return {std::move(payload), {}};
}

} // namespace gpuprov::repo_detail

namespace gpuprov {

std::string armor_public_key(std::string_view binary) {
    // RFC 4880 §6: base64 in 64-column lines, then "=" and the base64 of the CRC-24.
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const auto encode = [](std::string_view in) {
        std::string out;
        for (std::size_t i = 0; i < in.size(); i += 3) {
            std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16;
            if (i + 1 < in.size()) {
                v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
            }
            if (i + 2 < in.size()) {
                v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 2]));
            }
            out += kAlphabet[(v >> 18) & 63];
            out += kAlphabet[(v >> 12) & 63];
            out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
            out += i + 2 < in.size() ? kAlphabet[v & 63] : '=';
        }
        return out;
    };
    const auto body = encode(binary);
    std::string out = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n";
    for (std::size_t i = 0; i < body.size(); i += 64) {
        out += body.substr(i, 64) + "\n";
    }
    const auto crc = repo_detail::crc24(binary);
    const std::string crc_bytes{static_cast<char>((crc >> 16) & 0xFF),
                                static_cast<char>((crc >> 8) & 0xFF),
                                static_cast<char>(crc & 0xFF)};
    out += "=" + encode(crc_bytes) + "\n-----END PGP PUBLIC KEY BLOCK-----\n";
    return out;
}

} // namespace gpuprov
