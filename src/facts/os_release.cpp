// os-release(5): shell-style KEY=VALUE lines. Parsed by hand instead of by a shell so a hostile or
// broken file can only lose fields, never run anything.
#include "detectors.hpp"

#include <algorithm>
#include <cctype>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>
#include <string_view>

namespace gpuprov {

namespace {

bool valid_key(std::string_view key) {
    return !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
        return std::isupper(c) != 0 || std::isdigit(c) != 0 || c == '_';
    });
}

/// The value as the shell would see it, or nullopt for an unterminated quote (the line is
/// dropped rather than guessed at).
std::optional<std::string> unquote(std::string_view raw) {
    std::string out;
    std::size_t i = 0;
    while (i < raw.size()) {
        const char c = raw[i];
        if (c == '"') {
            // Inside double quotes the shell only treats \ specially before $ " \ and `.
            ++i;
            bool closed = false;
            for (; i < raw.size(); ++i) {
                if (raw[i] == '\\' && i + 1 < raw.size() &&
                    std::string_view("$\"\\`").find(raw[i + 1]) != std::string_view::npos) {
                    out += raw[++i];
                } else if (raw[i] == '"') {
                    closed = true;
                    ++i;
                    break;
                } else {
                    out += raw[i];
                }
            }
            if (!closed) {
                return std::nullopt;
            }
        } else if (c == '\'') {
            const auto end = raw.find('\'', i + 1);
            if (end == std::string_view::npos) {
                return std::nullopt;
            }
            out += raw.substr(i + 1, end - i - 1);
            i = end + 1;
        } else if (c == '\\' && i + 1 < raw.size()) {
            out += raw[i + 1];
            i += 2;
        } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
            // An unquoted blank ends the word; anything after it is not part of the value.
            break;
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

} // namespace

OsInfo parse_os_release(std::string_view content) {
    OsInfo os;
    std::string version_codename;
    std::string ubuntu_codename;
    for (const auto& line_str : lines(content)) {
        const auto line = trim(line_str);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            continue;
        }
        const auto key = line.substr(0, eq);
        if (!valid_key(key)) {
            continue;
        }
        auto value = unquote(line.substr(eq + 1));
        if (!value) {
            continue;
        }
        if (key == "ID") {
            os.id = to_lower(trim(*value));
        } else if (key == "ID_LIKE") {
            os.id_like = split_words(to_lower(*value));
        } else if (key == "VERSION_ID") {
            os.version_id = trim(*value);
        } else if (key == "VERSION_CODENAME") {
            version_codename = trim(*value);
        } else if (key == "UBUNTU_CODENAME") {
            ubuntu_codename = trim(*value);
        } else if (key == "PRETTY_NAME") {
            os.pretty_name = *value;
        }
    }
    // Some Ubuntu derivatives and older point releases set only UBUNTU_CODENAME.
    os.codename = !version_codename.empty() ? version_codename : ubuntu_codename;
    return os;
}

namespace facts_detail {

OsInfo read_os(const System& sys) {
    // os-release(5): /etc wins; /usr/lib is the vendor copy for images without /etc.
    auto content = read_resolved(sys, "/etc/os-release");
    if (!content) {
        content = read_resolved(sys, "/usr/lib/os-release");
    }
    if (!content) {
        return {};
    }
    auto os = parse_os_release(*content);
    classify_os(os);
    return os;
}

} // namespace facts_detail

} // namespace gpuprov
