#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>
#include <limits>
#include <vector>

namespace gpuprov {

std::string_view trim(std::string_view s) {
    const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!s.empty() && is_space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && is_space(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto pos = s.find(sep, start);
        if (pos == std::string_view::npos) {
            out.emplace_back(s.substr(start));
            return out;
        }
        out.emplace_back(s.substr(start, pos - start));
        start = pos + 1;
    }
}

std::vector<std::string> split_words(std::string_view s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto end = s.find_first_of(" \t", i);
        const auto word = trim(s.substr(i, end == std::string_view::npos ? s.npos : end - i));
        if (!word.empty()) {
            out.emplace_back(word);
        }
        if (end == std::string_view::npos) {
            break;
        }
        i = end + 1;
    }
    return out;
}

std::vector<std::string> lines(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < s.size()) {
        auto pos = s.find('\n', start);
        if (pos == std::string_view::npos) {
            pos = s.size();
        }
        auto line = s.substr(start, pos - start);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        out.emplace_back(line);
        start = pos + 1;
    }
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string to_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string to_upper(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i != 0) {
            out += sep;
        }
        out += parts[i];
    }
    return out;
}

std::optional<long long> parse_int(std::string_view s) {
    s = trim(s);
    long long value = 0;
    const auto* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (ec != std::errc{} || ptr != end || s.empty()) {
        return std::nullopt;
    }
    return value;
}

std::optional<int> parse_int32(std::string_view s) {
    const auto value = parse_int(s);
    if (!value || *value < std::numeric_limits<int>::min() ||
        *value > std::numeric_limits<int>::max()) {
        return std::nullopt;
    }
    return static_cast<int>(*value);
}

std::optional<double> parse_double(std::string_view s) {
    s = trim(s);
    if (s.empty()) {
        return std::nullopt;
    }
    std::string copy(s);
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) {
        return std::nullopt;
    }
    return value;
}

std::string tail_lines(std::string_view s, std::size_t max_lines) {
    auto all = lines(s);
    if (all.size() > max_lines) {
        all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(max_lines));
    }
    return join(all, "\n");
}

std::string indent_lines(std::string_view text, std::string_view prefix) {
    std::string out;
    for (const auto& line : lines(text)) {
        out += prefix;
        out += line;
        out += '\n';
    }
    return out;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    if (from.empty()) {
        return s;
    }
    std::size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
        s.replace(pos, from.size(), to);
        pos += to.size();
    }
    return s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
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

std::string nearest(std::string_view word, const std::vector<std::string>& known) {
    const auto lowered = to_lower(word);
    std::string best;
    std::size_t best_distance = std::string::npos;
    for (const auto& candidate : known) {
        const auto d = edit_distance(lowered, to_lower(candidate));
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    // Beyond a third of the word, a "did you mean" guesses rather than corrects.
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    return best_distance <= limit ? best : std::string();
}

} // namespace gpuprov
