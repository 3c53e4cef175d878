#include "text_checks.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cctype>
#include <gpuprov/strings.hpp>

namespace gpuprov::profile_detail {
namespace {

constexpr std::string_view k_shell_meta = ";|&$`\\<>()'\"*?!";

std::string show_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
        return "a newline";
    }
    if (c == '\t') {
        return "a tab";
    }
    if (c == ' ') {
        return "a space";
    }
    if (u < 0x20 || u == 0x7f) {
        return "control character " + std::to_string(u);
    }
    if (u >= 0x80) {
        return "a non-ASCII byte";
    }
    return std::string("'") + c + "'";
}

} // namespace

void check_safe(std::string_view value, const SourcePos& at, const std::string& what) {
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        const bool bad = u <= 0x20 || u >= 0x7f || k_shell_meta.find(c) != std::string_view::npos;
        if (bad) {
            fail(at, "'" + what + "' contains " + show_char(c) +
                         "; values that reach commands or files may not contain whitespace, "
                         "control characters, non-ASCII bytes or any of ; | & $ ` \\ < > ( ) ' "
                         "\" * ? ! (remove it)");
        }
    }
}

void check_one_line(std::string_view value, const SourcePos& at, const std::string& what) {
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            fail(at, "'" + what + "' contains " + show_char(c) + "; keep it on one line");
        }
    }
}

void check_url(std::string_view value, bool allow_insecure, const SourcePos& at,
               const std::string& what) {
    check_safe(value, at, what);
    std::string_view rest;
    if (starts_with(value, "https://")) {
        rest = value.substr(8);
    } else if (starts_with(value, "http://")) {
        if (!allow_insecure) {
            fail(at, "'" + what +
                         "' uses http://, which anyone on the path can alter; use https://, or "
                         "set allow_insecure: true on this repository for a trusted internal "
                         "mirror");
        }
        rest = value.substr(7);
    } else {
        fail(at, "'" + what + "' must start with https:// (got '" + std::string(value) + "')");
    }
    if (rest.empty() || rest.front() == '/' || rest.front() == '{') {
        fail(at, "'" + what + "' has no host name after the scheme");
    }
    for (std::size_t i = 0; i < rest.size(); ++i) {
        const char c = rest[i];
        if (c == '{') {
            const auto close = rest.find('}', i);
            const auto name = close == std::string_view::npos ? std::string_view{}
                                                              : rest.substr(i + 1, close - i - 1);
            if (name != "distro" && name != "arch" && name != "pkgarch" && name != "pkgformat") {
                fail(at, "'" + what + "' has an unknown template '{" + std::string(name) +
                             "}'; allowed: {distro} {arch} {pkgarch} {pkgformat}");
            }
            i = close;
            continue;
        }
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                        std::string_view("-._~:/%+=,@").find(c) != std::string_view::npos;
        if (!ok) {
            fail(at, "'" + what + "' contains " + show_char(c) +
                         "; a repository URL may hold letters, digits, - . _ ~ : / % + = , @ "
                         "and the {distro} {arch} {pkgarch} {pkgformat} templates");
        }
    }
}

void check_abs_path(std::string_view value, const SourcePos& at, const std::string& what) {
    check_safe(value, at, what);
    if (value.empty() || value.front() != '/') {
        fail(at, "'" + what + "' must be an absolute path starting with / (got '" +
                     std::string(value) + "')");
    }
    for (const auto& part : split(value, '/')) {
        if (part == "..") {
            fail(at, "'" + what + "' may not contain '..'; write the path it resolves to");
        }
    }
    for (const char c : value) {
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                        std::string_view("/._-+@").find(c) != std::string_view::npos;
        if (!ok) {
            fail(at, "'" + what + "' contains " + show_char(c) +
                         "; a path may hold letters, digits and / . _ - + @");
        }
    }
}

void check_node_address(std::string_view value, const SourcePos& at, const std::string& what) {
    check_safe(value, at, what);
    const std::string text(value);
    std::array<unsigned char, 16> buf{};
    if (inet_pton(AF_INET, text.c_str(), buf.data()) == 1 ||
        inet_pton(AF_INET6, text.c_str(), buf.data()) == 1) {
        return;
    }
    const std::string expected = "; expected an IPv4 address (10.0.0.11), an IPv6 address or a "
                                 "host name, one node per entry";
    const bool dotted_digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.';
    });
    if (dotted_digits || text.find(':') != std::string::npos) {
        fail(at, "'" + what + "' is not a valid IP address: '" + text + "'" + expected);
    }
    // RFC 1123 host names: IMEX resolves entries that are not addresses ("Treating node config
    // entry '...' as a host name", IMEX 580's log in kubernetes-sigs/dra-driver-nvidia-gpu#1465).
    const auto labels = split(text, '.');
    const bool ok =
        text.size() <= 253 && std::all_of(labels.begin(), labels.end(), [](const auto& l) {
            return !l.empty() && l.size() <= 63 && l.front() != '-' && l.back() != '-' &&
                   std::all_of(l.begin(), l.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
                   });
        });
    if (!ok) {
        fail(at, "'" + what + "' is not an address or host name: '" + text + "'" + expected);
    }
}

std::string normalise_fingerprint(std::string_view value, const SourcePos& at,
                                  const std::string& what) {
    std::string hex;
    for (const char c : value) {
        if (c == ' ') {
            continue;
        }
        if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
            fail(at, "'" + what + "' contains " + show_char(c) +
                         "; expected the key's full fingerprint, 40 hex digits (spaces allowed), "
                         "as `gpg --show-keys KEYFILE` prints it");
        }
        hex += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (hex.size() != 40) {
        fail(at, "'" + what + "' has " + std::to_string(hex.size()) +
                     " hex digits; expected the key's full fingerprint, 40 hex digits (a short "
                     "key id such as 3BF863CC is not enough to pin a key)");
    }
    return hex;
}

} // namespace gpuprov::profile_detail
