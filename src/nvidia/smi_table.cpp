// The GPU box of the default `nvidia-smi` table, as real drivers print it from R331 (legacy,
// two rows per GPU) to R610 (three rows, "KMD Version" banner). Samples in
// tests/fixtures/cmd/nvidia-smi/table-*.txt.
#include "smi_values.hpp"

#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>

namespace gpuprov {

namespace {

// The cells of a `| a | b | c |` row, trimmed; empty when the line is not such a row.
std::vector<std::string> cells(std::string_view line) {
    line = trim(line);
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') {
        return {};
    }
    std::vector<std::string> out;
    for (const auto& c : split(line.substr(1, line.size() - 2), '|')) {
        out.emplace_back(trim(c));
    }
    return out;
}

// "used / total" halves of a cell.
std::pair<std::string, std::string> halves(std::string_view cell) {
    const auto slash = cell.find('/');
    if (slash == std::string_view::npos) {
        return {std::string(trim(cell)), {}};
    }
    return {std::string(trim(cell.substr(0, slash))), std::string(trim(cell.substr(slash + 1)))};
}

// "   0  NVIDIA H200                    On  ": index, name, persistence mode.
std::optional<SmiTableGpu> first_row(const std::vector<std::string>& c) {
    const auto w = split_words(c[0]);
    if (w.size() < 3) {
        return std::nullopt;
    }
    const auto index = parse_int32(w.front());
    if (!index) {
        return std::nullopt;
    }
    SmiTableGpu g;
    g.index = *index;
    g.persistence_mode = nvidia_detail::smi_enabled(w.back());
    // The name keeps its inner spacing: the text between the index and the last word.
    const std::string_view cell = c[0];
    const auto start = cell.find(w[1], w[0].size());
    const auto end = cell.rfind(w.back());
    g.name = std::string(trim(cell.substr(start, end - start)));
    if (g.name.size() > 3 && g.name.substr(g.name.size() - 3) == "...") {
        g.name_truncated = true;
    }
    const auto bus = split_words(c[1]);
    if (!bus.empty()) {
        g.bus_id = nvidia_detail::smi_text(bus.front());
    }
    if (bus.size() > 1) {
        g.display_active = nvidia_detail::smi_enabled(bus.back());
    }
    g.volatile_ecc = nvidia_detail::smi_text(c[2]);
    return g;
}

// "N/A   28C    P0             77W /  700W | 0MiB / 143771MiB | 0%      Default".
void second_row(const std::vector<std::string>& c, SmiTableGpu& g) {
    const auto w = split_words(c[0]);
    if (w.size() >= 3) {
        g.fan_percent = nvidia_detail::smi_with_unit(w[0], "%");
        g.temperature_c = nvidia_detail::smi_with_unit(w[1], "C");
        g.perf_state = nvidia_detail::smi_text(w[2]);
        const auto rest = c[0].find(w[2], c[0].find(w[1]) + w[1].size()) + w[2].size();
        const auto [draw, cap] = halves(std::string_view(c[0]).substr(rest));
        g.power_draw_w = nvidia_detail::smi_with_unit(draw, "W");
        g.power_cap_w = nvidia_detail::smi_with_unit(cap, "W");
    }
    const auto [used, total] = halves(c[1]);
    g.memory_used_mib = nvidia_detail::smi_mib(used);
    g.memory_total_mib = nvidia_detail::smi_mib(total);
    const auto u = split_words(c[2]);
    if (!u.empty()) {
        g.utilization_percent = nvidia_detail::smi_with_unit(u[0], "%");
        const auto mode = c[2].find(u[0]) + u[0].size();
        g.compute_mode = nvidia_detail::smi_text(trim(std::string_view(c[2]).substr(mode)));
    }
}

// The `|===+===+===|` line that opens the GPU box (three columns; the MIG devices box has
// four, the processes box one).
bool opens_gpu_box(std::string_view line) {
    line = trim(line);
    if (!starts_with(line, "|=")) {
        return false;
    }
    std::size_t joints = 0;
    for (const char ch : line) {
        joints += ch == '+' ? 1 : 0;
    }
    return joints == 2;
}

} // namespace

std::vector<SmiTableGpu> parse_smi_table(std::string_view table) {
    std::vector<SmiTableGpu> gpus;
    bool in_box = false;
    std::size_t row = 0; // rows seen of the current GPU
    for (const auto& line : lines(table)) {
        if (!in_box) {
            in_box = opens_gpu_box(line);
            continue;
        }
        const auto t = trim(line);
        if (starts_with(t, "+") || starts_with(t, "|-")) { // between two GPUs, or the box's end
            row = 0;
            continue;
        }
        const auto c = cells(t);
        if (c.size() != 3) { // a blank line or another box: the GPU box is over
            break;
        }
        if (row == 0) {
            auto g = first_row(c);
            if (!g) {
                break;
            }
            gpus.push_back(std::move(*g));
        } else if (row == 1) {
            second_row(c, gpus.back());
        } else if (row == 2) {
            gpus.back().mig_enabled = nvidia_detail::smi_enabled(c[2]);
        }
        ++row;
    }
    return gpus;
}

} // namespace gpuprov
