#include <cctype>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

constexpr std::string_view signed_begin = "-----BEGIN PGP SIGNED MESSAGE-----";
constexpr std::string_view signature_begin = "-----BEGIN PGP SIGNATURE-----";
constexpr std::string_view signature_end = "-----END PGP SIGNATURE-----";

bool is_hex(std::string_view s) {
    for (const char c : s) {
        if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
            return false;
        }
    }
    return !s.empty();
}

} // namespace

std::optional<std::string> clearsigned_text(std::string_view message) {
    const auto all = lines(message);
    std::size_t i = 0;
    // Like apt, nothing may precede the armor: text before it would be read by a careless parser
    // but is covered by no signature.
    if (all.empty() || trim(all[0]) != signed_begin) {
        return std::nullopt;
    }
    for (i = 1; i < all.size() && !trim(all[i]).empty(); ++i) {
        if (!starts_with(all[i], "Hash: ")) {
            return std::nullopt;
        }
    }
    if (i == all.size()) {
        return std::nullopt;
    }
    ++i;
    std::string text;
    bool first = true;
    for (; i < all.size(); ++i) {
        std::string_view line = all[i];
        if (trim(line) == signature_begin) {
            break;
        }
        if (starts_with(line, "-")) {
            if (!starts_with(line, "- ")) {
                return std::nullopt; // an armor line inside the signed text: two messages
            }
            line.remove_prefix(2);
        }
        if (!first) {
            text += '\n';
        }
        text += line;
        first = false;
    }
    if (i == all.size()) {
        return std::nullopt;
    }
    for (++i; i < all.size() && trim(all[i]) != signature_end; ++i) {
        if (starts_with(all[i], "-----")) {
            return std::nullopt;
        }
    }
    if (i == all.size()) {
        return std::nullopt;
    }
    for (++i; i < all.size(); ++i) {
        if (!trim(all[i]).empty()) {
            return std::nullopt; // unsigned data appended after the signature
        }
    }
    text += '\n';
    return text;
}

std::optional<ReleaseEntry> release_entry(std::string_view release, std::string_view file) {
    std::string plain;
    if (starts_with(trim(release), signed_begin)) {
        auto text = clearsigned_text(release);
        if (!text) {
            return std::nullopt;
        }
        plain = std::move(*text);
    } else {
        plain = std::string(release);
    }
    bool in_sha256 = false;
    for (const auto& line : lines(plain)) {
        if (line.empty()) {
            in_sha256 = false;
            continue;
        }
        if (line.front() != ' ' && line.front() != '\t') {
            const auto colon = line.find(':');
            in_sha256 = colon != std::string::npos && to_lower(line.substr(0, colon)) == "sha256";
            continue;
        }
        if (!in_sha256) {
            continue;
        }
        std::vector<std::string> words;
        for (auto& w : split(trim(line), ' ')) {
            if (!w.empty()) {
                words.push_back(std::move(w));
            }
        }
        if (words.size() != 3 || words[2] != file || words[0].size() != 64 || !is_hex(words[0])) {
            continue;
        }
        const auto size = parse_int(words[1]);
        if (!size || *size < 0) {
            continue;
        }
        return ReleaseEntry{to_lower(words[0]), static_cast<std::uint64_t>(*size)};
    }
    return std::nullopt;
}

} // namespace gpuprov
