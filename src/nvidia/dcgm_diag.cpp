// `dcgmi diag`'s result table. Its rows are "| name | value |" with a 25-character name cell
// and a 46-character value cell; section rules carry the category ("|-----  Deployment  ---+",
// "+-----  Hardware  ---+"). DCGM wraps a long value at 45 characters onto rows with an empty
// name, cutting words anywhere ("is currently disab" / "led."), so wrapped pieces are joined
// without adding spaces. Captures: tests/fixtures/cmd/smoke/dcgmi-diag-*.txt.
#include <algorithm>
#include <cctype>
#include <gpuprov/smoke.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

/// "|-----  Deployment  --------+----|" -> "Deployment"; empty when not a section rule.
std::string section_of(std::string_view line) {
    if (line.size() < 8 || (line[0] != '|' && line[0] != '+') || line.substr(1, 5) != "-----") {
        return {};
    }
    const auto plus = line.find('+', 1);
    const auto name = trim(line.substr(6, plus == std::string_view::npos ? line.npos : plus - 6));
    std::string out(name);
    while (!out.empty() && out.back() == '-') {
        out.pop_back();
    }
    return std::string(trim(out));
}

/// The value cell of a wrapped row, as DCGM cut it: the 45 characters after the cell's leading
/// space (spaces at the cut are part of the text).
std::string piece(std::string_view cell) {
    return std::string(cell.size() > 1 ? cell.substr(1, 45) : cell);
}

std::string squeeze(std::string_view s) {
    std::string out;
    for (const char c : trim(s)) {
        if (c == ' ' && !out.empty() && out.back() == ' ') {
            continue;
        }
        out += c;
    }
    return out;
}

std::string_view trim_right(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

bool lower_equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

} // namespace

std::vector<const DcgmDiagRow*> DcgmDiagReport::failed() const {
    std::vector<const DcgmDiagRow*> out;
    for (const auto& r : rows) {
        if (lower_equal(r.result, "fail")) {
            out.push_back(&r);
        }
    }
    return out;
}

DcgmDiagReport parse_dcgm_diag(std::string_view out) {
    DcgmDiagReport rep;
    std::string category;
    std::string open_detail; // the raw pieces of a wrapped Error/Warning/Info text
    const auto close_detail = [&] {
        if (!open_detail.empty() && !rep.rows.empty()) {
            rep.rows.back().details.push_back(squeeze(open_detail));
        }
        open_detail.clear();
    };
    for (const auto& raw : lines(out)) {
        const std::string_view line = trim_right(raw);
        if (const auto s = section_of(line); !s.empty()) {
            close_detail();
            category = s;
            continue;
        }
        // "| name | value |": exactly three bars.
        if (line.size() < 4 || line.front() != '|' || line.back() != '|' ||
            std::count(line.begin(), line.end(), '|') != 3) {
            continue;
        }
        const auto bar = line.find('|', 1);
        const auto name = trim(line.substr(1, bar - 1));
        const auto cell = line.substr(bar + 1, line.size() - bar - 2);
        const auto value = trim(cell);
        if (name == "Diagnostic" && value == "Result") {
            continue;
        }
        if (category == "Metadata") {
            if (name == "DCGM Version") {
                rep.dcgm_version = std::string(value);
            } else if (name == "Driver Version Detected") {
                rep.driver = std::string(value);
            }
            continue;
        }
        if (name.empty()) {
            if (!open_detail.empty()) {
                open_detail += piece(cell);
            } else if (!rep.rows.empty() && !value.empty()) {
                rep.rows.back().details.emplace_back(value); // DCGM 4: "GPU0: Pass"
            }
            continue;
        }
        close_detail();
        if (name == "Error" || name == "Warning" || name == "Info") {
            open_detail = std::string(name) + ": " + piece(cell);
            continue;
        }
        DcgmDiagRow row;
        row.category = category;
        row.name = std::string(name);
        const auto space = value.find(' ');
        row.result = std::string(value.substr(0, space));
        rep.rows.push_back(std::move(row));
    }
    close_detail();
    return rep;
}

} // namespace gpuprov
