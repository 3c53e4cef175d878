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

// Cells are TAB separated; the self cell is " X " and the affinity columns may be empty.
std::vector<std::string> cells(std::string_view line) {
    std::vector<std::string> out;
    for (const auto& c : split(line, '\t')) {
        out.emplace_back(trim(c));
    }
    return out;
}

} // namespace

std::optional<TopoMatrix> parse_topo_matrix(std::string_view output) {
    const auto all = lines(output);
    std::size_t header = all.size();
    std::vector<std::string> columns;
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto c = cells(all[i]);
        // The header row starts with an empty cell, then GPU0.
        if (c.size() >= 2 && c[0].empty() && is_gpu_label(c[1])) {
            header = i;
            columns = std::move(c);
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
        auto c = cells(all[i]);
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
