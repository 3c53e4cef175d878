#include "text_checks.hpp"

#include <algorithm>
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

std::size_t levenshtein(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
            diagonal = above;
        }
    }
    return row[b.size()];
}

} // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& known) {
    const auto lowered = to_lower(word);
    std::string best;
    std::size_t best_distance = std::string::npos;
    for (const auto& candidate : known) {
        const auto d = levenshtein(lowered, to_lower(candidate));
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    // Beyond a third of the word, a "did you mean" guesses rather than corrects.
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    return best_distance <= limit ? best : std::string();
}

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
            if (name != "distro" && name != "arch" && name != "pkgarch") {
                fail(at, "'" + what + "' has an unknown template '{" + std::string(name) +
                             "}'; allowed: {distro} {arch} {pkgarch}");
            }
            i = close;
            continue;
        }
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                        std::string_view("-._~:/%+=,@").find(c) != std::string_view::npos;
        if (!ok) {
            fail(at, "'" + what + "' contains " + show_char(c) +
                         "; a repository URL may hold letters, digits, - . _ ~ : / % + = , @ "
                         "and the {distro} {arch} {pkgarch} templates");
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
