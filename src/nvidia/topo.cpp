#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

bool is_gpu_label(std::string_view s) {
    return starts_with(s, "GPU") && s.size() > 3 &&
           s.substr(3).find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_nvlink(std::string_view cell) {
    return starts_with(cell, "NV") && cell.size() > 2 &&
           cell.substr(2).find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

// Length of a "select graphic rendition" code at the start of s: ESC [ digits/semicolons m, or
// the same without its ESC, as copies pasted into issue trackers keep it ("[4mGPU0"). Drivers
// from R590 underline the header row even into a pipe (sgl-project/sglang#26039: 590.44.01,
// captured by a Python subprocess), so the first GPU label arrives as "\x1b[4mGPU0".
std::size_t sgr_length(std::string_view s) {
    std::size_t i = (!s.empty() && s[0] == '\x1b') ? 1 : 0;
    if (i >= s.size() || s[i] != '[') {
        return 0;
    }
    ++i;
    const auto params = i;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';')) {
        ++i;
    }
    if (i >= s.size() || s[i] != 'm' || (i == params && s[0] != '\x1b')) {
        return 0;
    }
    return i + 1;
}

// A cell without the rendition codes around it. Only at a cell's ends: no cell of the matrix
// holds one inside, and "[" never starts a real cell.
std::string strip_sgr(std::string_view cell) {
    while (const auto n = sgr_length(cell)) {
        cell.remove_prefix(n);
    }
    for (auto at = cell.rfind('['); at != std::string_view::npos; at = cell.rfind('[')) {
        auto from = at;
        if (from > 0 && cell[from - 1] == '\x1b') {
            --from;
        }
        if (sgr_length(cell.substr(from)) != cell.size() - from) {
            break;
        }
        cell = cell.substr(0, from);
    }
    return std::string(trim(cell));
}

// Cells are TAB separated; the self cell is " X " and the affinity columns may be empty.
// Captures pasted from a terminal often have the TABs turned into spaces: a line without a TAB
// is split on runs of blanks, and one that starts with a blank (the header row) gets the empty
// first cell the TAB form has. The GPU×GPU cells never contain a blank, so they come out the
// same either way; only the affinity columns after them ("CPU Affinity") are split further.
std::vector<std::string> topo_cells(std::string_view line) {
    std::vector<std::string> out;
    if (line.find('\t') != std::string_view::npos) {
        for (const auto& c : split(line, '\t')) {
            out.push_back(strip_sgr(trim(c)));
        }
        return out;
    }
    if (trim(line).empty()) {
        return out;
    }
    if (is_blank(line.front())) {
        out.emplace_back();
    }
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_blank(line[i])) {
            ++i;
        }
        auto end = i;
        while (end < line.size() && !is_blank(line[end])) {
            ++end;
        }
        if (end > i) {
            auto cell = strip_sgr(line.substr(i, end - i));
            if (!cell.empty() || out.empty()) {
                out.push_back(std::move(cell));
            }
        }
        i = end;
    }
    return out;
}

} // namespace

std::optional<TopoMatrix> parse_topo_matrix(std::string_view output) {
    const auto all = lines(output);
    std::size_t header = all.size();
    std::vector<std::string> columns;
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto c = topo_cells(all[i]);
        // The header row starts with an empty cell, then GPU0.
        if (c.size() >= 2 && c[0].empty() && is_gpu_label(c[1])) {
            header = i;
            columns = std::move(c);
            break;
        }
        // A copy that lost the header's leading TAB starts with GPU0 itself; a data row's
        // second cell is "X" or a link, never a second label.
        if (c.size() >= 2 && c[0] == "GPU0" && is_gpu_label(c[1])) {
            header = i;
            columns = std::move(c);
            columns.insert(columns.begin(), std::string());
            break;
        }
    }
    if (header == all.size()) {
        return std::nullopt;
    }
    TopoMatrix topo;
    for (std::size_t col = 1; col < columns.size() && is_gpu_label(columns[col]); ++col) {
        topo.gpus.push_back(columns[col]);
    }
    const auto n = topo.gpus.size();
    for (std::size_t i = header + 1; i < all.size() && topo.links.size() < n; ++i) {
        auto c = topo_cells(all[i]);
        if (c.empty() || c[0].empty() || starts_with(c[0], "Legend")) {
            break;
        }
        if (!is_gpu_label(c[0])) {
            continue;
        }
        if (c.size() < n + 1) {
            return std::nullopt;
        }
        topo.links.emplace_back(c.begin() + 1, c.begin() + 1 + static_cast<std::ptrdiff_t>(n));
    }
    if (topo.links.size() != n) {
        return std::nullopt;
    }
    return topo;
}

bool all_pairs_nvlink(const TopoMatrix& topo) {
    const auto n = topo.gpus.size();
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (i != j && !is_nvlink(topo.links[i][j])) {
                return false;
            }
        }
    }
    return n >= 2;
}

bool any_p2p_path(const TopoMatrix& topo) {
    const auto n = topo.gpus.size();
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const auto& cell = topo.links[i][j];
            if (i != j && (is_nvlink(cell) || cell == "PIX" || cell == "PXB")) {
                return true;
            }
        }
    }
    return false;
}

} // namespace gpuprov
