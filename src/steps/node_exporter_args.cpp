#include "node_exporter_args.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>
#include <vector>

namespace gpuprov::steps {

namespace {

constexpr std::string_view kFlag = "--collector.textfile.directory";

// The last `ARGS=` assignment: where its value lies in the file and how it is quoted.
struct ArgsLine {
    std::size_t value_begin = 0; ///< offset of the value in the file (inside the quotes)
    std::size_t value_end = 0;
    char quote = 0; ///< '"', '\'' or 0 (bare)
    std::string problem;
};

std::optional<ArgsLine> find_args(std::string_view file) {
    std::optional<ArgsLine> found;
    std::size_t offset = 0;
    int number = 0;
    while (offset < file.size()) {
        auto end = file.find('\n', offset);
        if (end == std::string_view::npos) {
            end = file.size();
        }
        ++number;
        const auto line = file.substr(offset, end - offset);
        const auto indent = line.find_first_not_of(" \t");
        if (indent != std::string_view::npos && line.substr(indent).starts_with("ARGS=")) {
            ArgsLine a;
            const auto start = offset + indent + 5;
            const auto rest = file.substr(start, end - start);
            const auto fail = [&](std::string_view why) {
                a.problem = fmt::format("{} line {}: {}", kNodeExporterDefaults, number, why);
            };
            if (!rest.empty() && (rest[0] == '"' || rest[0] == '\'')) {
                a.quote = rest[0];
                const auto close = rest.find(a.quote, 1);
                if (close == std::string_view::npos) {
                    fail("ARGS continues past the line (no closing quote)");
                } else if (!trim(rest.substr(close + 1)).empty() &&
                           !trim(rest.substr(close + 1)).starts_with("#")) {
                    fail("text after ARGS's closing quote");
                } else if (a.quote == '"' && rest.substr(1, close - 1).find_first_of("\\$`") !=
                                                 std::string_view::npos) {
                    fail("ARGS uses escapes or expansions gpuprov does not edit");
                }
                a.value_begin = start + 1;
                a.value_end = start + (close == std::string_view::npos ? rest.size() : close);
            } else {
                const auto space = rest.find_first_of(" \t");
                if (space != std::string_view::npos && !trim(rest.substr(space)).empty() &&
                    !trim(rest.substr(space)).starts_with("#")) {
                    fail("unquoted ARGS with more than one word");
                }
                a.value_begin = start;
                a.value_end = start + std::min(space, rest.size());
            }
            if (!rest.empty() && rest.back() == '\\') {
                fail("ARGS continues on the next line");
            }
            found = a;
        }
        offset = end + 1;
    }
    return found;
}

// The flag in ARGS's words: where its value is (offsets in the file), if present.
struct FlagValue {
    std::size_t begin = 0;
    std::size_t end = 0;
};

std::vector<FlagValue> flag_values(std::string_view file, const ArgsLine& a) {
    std::vector<FlagValue> out;
    std::size_t i = a.value_begin;
    bool take_next = false;
    while (i < a.value_end) {
        while (i < a.value_end && (file[i] == ' ' || file[i] == '\t')) {
            ++i;
        }
        auto j = i;
        while (j < a.value_end && file[j] != ' ' && file[j] != '\t') {
            ++j;
        }
        if (i == j) {
            break;
        }
        const auto word = file.substr(i, j - i);
        if (take_next) {
            out.push_back({i, j});
            take_next = false;
        } else if (word == kFlag) {
            take_next = true; // "--collector.textfile.directory DIR"
        } else if (word.starts_with(std::string(kFlag) + "=")) {
            out.push_back({i + kFlag.size() + 1, j});
        }
        i = j;
    }
    return out;
}

} // namespace

std::optional<std::string> node_exporter_textfile_dir(std::string_view file) {
    const auto a = find_args(file);
    if (!a) {
        return std::string(kNodeExporterDefaultTextfileDir);
    }
    if (!a->problem.empty()) {
        return std::nullopt;
    }
    const auto values = flag_values(file, *a);
    if (values.empty()) {
        return std::string(kNodeExporterDefaultTextfileDir);
    }
    return std::string(
        file.substr(values.front().begin, values.front().end - values.front().begin));
}

NodeExporterArgs merge_node_exporter_args(std::string_view file, std::string_view dir) {
    NodeExporterArgs out;
    out.content = std::string(file);
    const auto a = find_args(file);
    const auto flag = fmt::format("{}={}", kFlag, dir);
    if (!a) {
        if (dir == kNodeExporterDefaultTextfileDir) {
            return out;
        }
        if (!out.content.empty() && out.content.back() != '\n') {
            out.content += '\n';
        }
        out.content += fmt::format("ARGS=\"{}\"\n", flag);
        out.changed = true;
        return out;
    }
    if (!a->problem.empty()) {
        out.problem = fmt::format("{}; add {} to ARGS yourself", a->problem, flag);
        return out;
    }
    const auto values = flag_values(file, *a);
    for (const auto& v : values) {
        if (file.substr(v.begin, v.end - v.begin) == dir) {
            return out;
        }
    }
    if (!values.empty()) {
        out.content.replace(values.front().begin, values.front().end - values.front().begin, dir);
    } else if (dir == kNodeExporterDefaultTextfileDir) {
        return out;
    } else {
        const bool empty = trim(file.substr(a->value_begin, a->value_end - a->value_begin)).empty();
        auto insert = empty ? flag : " " + flag;
        if (a->quote == 0) {
            // A bare value gains a space: quote the whole value.
            out.content.insert(a->value_end, insert + "\"");
            out.content.insert(a->value_begin, "\"");
        } else {
            out.content.insert(a->value_end, insert);
        }
    }
    out.changed = true;
    return out;
}

} // namespace gpuprov::steps
