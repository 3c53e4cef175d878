#include <array>
#include <cctype>
#include <ctime>
#include <fmt/format.h>
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

std::vector<std::string> words_of(std::string_view s) {
    std::vector<std::string> out;
    for (auto& w : split(trim(s), ' ')) {
        if (!w.empty()) {
            out.push_back(std::move(w));
        }
    }
    return out;
}

/// The value of a field of the Release's first paragraph (names compare case-insensitively).
std::optional<std::string> release_field(std::string_view release, std::string_view name) {
    const auto want = to_lower(name);
    for (const auto& line : lines(release)) {
        if (trim(line).empty()) {
            break;
        }
        if (line.front() == ' ' || line.front() == '\t') {
            continue;
        }
        const auto colon = line.find(':');
        if (colon != std::string::npos && to_lower(trim(line.substr(0, colon))) == want) {
            return std::string(trim(line.substr(colon + 1)));
        }
    }
    return std::nullopt;
}

std::string how_long(std::chrono::seconds d) {
    const auto s = d.count();
    if (s >= 86400) {
        return fmt::format("{}d {}h", s / 86400, s % 86400 / 3600);
    }
    if (s >= 3600) {
        return fmt::format("{}h {}min", s / 3600, s % 3600 / 60);
    }
    return fmt::format("{}min {}s", s / 60, s % 60);
}

} // namespace

std::optional<std::chrono::system_clock::time_point> parse_release_date(std::string_view text) {
    // RFC 2822 as Release files write it: "Tue, 01 Dec 2026 00:00:00 UTC" (the weekday is
    // optional; the zone UTC, GMT, Z or +hhmm/-hhmm). Parsed by hand: strptime's %a and %b
    // follow the locale.
    auto w = words_of(text);
    if (!w.empty() && w[0].size() == 4 && w[0].back() == ',') {
        w.erase(w.begin());
    }
    if (w.size() != 5) {
        return std::nullopt;
    }
    static constexpr std::array<std::string_view, 12> months = {
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
    std::tm tm{};
    const auto day = parse_int(w[0]);
    const auto year = parse_int(w[2]);
    int month = -1;
    for (std::size_t i = 0; i < months.size(); ++i) {
        if (to_lower(w[1]) == months[i]) {
            month = static_cast<int>(i);
        }
    }
    const auto hms = split(w[3], ':');
    if (!day || !year || month < 0 || hms.size() != 3 || *day < 1 || *day > 31 || *year < 1970 ||
        *year > 9999) {
        return std::nullopt;
    }
    const auto h = parse_int(hms[0]);
    const auto m = parse_int(hms[1]);
    const auto sec = parse_int(hms[2]);
    if (!h || !m || !sec || *h < 0 || *h > 23 || *m < 0 || *m > 59 || *sec < 0 || *sec > 60) {
        return std::nullopt;
    }
    long long offset = 0;
    const auto& zone = w[4];
    if (zone.size() == 5 && (zone[0] == '+' || zone[0] == '-')) {
        const auto hhmm = parse_int(zone.substr(1));
        if (!hhmm || zone.find_first_not_of("0123456789", 1) != std::string::npos) {
            return std::nullopt;
        }
        offset = (*hhmm / 100 * 3600 + *hhmm % 100 * 60) * (zone[0] == '-' ? -1 : 1);
    } else if (zone != "UTC" && zone != "GMT" && zone != "Z") {
        return std::nullopt;
    }
    tm.tm_year = static_cast<int>(*year - 1900);
    tm.tm_mon = month;
    tm.tm_mday = static_cast<int>(*day);
    tm.tm_hour = static_cast<int>(*h);
    tm.tm_min = static_cast<int>(*m);
    tm.tm_sec = static_cast<int>(*sec);
    const auto t = ::timegm(&tm);
    return std::chrono::system_clock::from_time_t(t) - std::chrono::seconds(offset);
}

std::optional<std::chrono::system_clock::time_point> release_date(std::string_view release) {
    const auto text = clearsigned_text(release);
    const auto value = release_field(text ? std::string_view(*text) : release, "Date");
    return value ? parse_release_date(*value) : std::nullopt;
}

std::string release_date_problem(std::string_view release,
                                 std::chrono::system_clock::time_point now) {
    using std::chrono::duration_cast;
    using std::chrono::seconds;
    for (const auto* name : {"Date", "Valid-Until"}) {
        const auto value = release_field(release, name);
        if (!value) {
            continue;
        }
        const auto when = parse_release_date(*value);
        if (!when) {
            return fmt::format("has an unreadable {} '{}'", name, *value);
        }
        if (std::string_view(name) == "Date" && *when > now + kReleaseMaxFutureTime) {
            return fmt::format("is not valid yet (its Date, {}, is {} ahead of this host's clock; "
                               "check the clock, or the mirror's)",
                               *value, how_long(duration_cast<seconds>(*when - now)));
        }
        if (std::string_view(name) == "Valid-Until" && *when < now) {
            return fmt::format("is expired (Valid-Until {}, {} ago): a mirror that stopped "
                               "syncing, or an old copy replayed",
                               *value, how_long(duration_cast<seconds>(now - *when)));
        }
    }
    return {};
}

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
