// `nvidia-smi -L` and the "MIG devices" box of the default table. Samples:
// tests/fixtures/cmd/nvidia-smi/list-*.txt and table-*-mig-*.txt.
#include "smi_values.hpp"

#include <gpuprov/smi_mig.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/words.hpp>

namespace gpuprov {

namespace {

// "... (UUID: X)" → X, and the text before it; nullopt without the suffix.
std::optional<std::pair<std::string, std::string>> split_uuid(std::string_view line) {
    const auto at = line.rfind(" (UUID: ");
    if (at == std::string_view::npos || line.back() != ')') {
        return std::nullopt;
    }
    const auto uuid = line.substr(at + 8, line.size() - at - 9);
    return std::make_pair(std::string(trim(line.substr(0, at))), std::string(trim(uuid)));
}

} // namespace

std::vector<SmiListGpu> parse_smi_list(std::string_view output) {
    std::vector<SmiListGpu> gpus;
    for (const auto& raw : split(output, '\n')) {
        const auto line = trim(raw);
        const auto parts = split_uuid(line);
        if (!parts) {
            continue;
        }
        const auto& [head, uuid] = *parts;
        if (starts_with(head, "GPU ")) {
            // "GPU 0: NVIDIA H200"
            const auto colon = head.find(':');
            const auto index = colon == std::string::npos
                                   ? std::nullopt
                                   : parse_int32(trim(head.substr(4, colon - 4)));
            if (!index) {
                continue;
            }
            SmiListGpu g;
            g.index = *index;
            g.name = std::string(trim(std::string_view(head).substr(colon + 1)));
            g.uuid = uuid;
            gpus.push_back(std::move(g));
        } else if (starts_with(head, "MIG ") && !gpus.empty()) {
            // "MIG 1c.3g.71gb  Device  0:"
            const auto w = split_words(head);
            if (w.size() != 4 || w[2] != "Device" || w[3].back() != ':') {
                continue;
            }
            const auto device = parse_int32(std::string_view(w[3]).substr(0, w[3].size() - 1));
            if (!device) {
                continue;
            }
            gpus.back().migs.push_back(SmiListMig{*device, w[1], uuid});
        }
    }
    return gpus;
}

std::vector<SmiTableMig> parse_smi_mig_devices(std::string_view table) {
    std::vector<SmiTableMig> out;
    bool in_box = false;
    for (const auto& raw : split(table, '\n')) {
        const auto line = trim(raw);
        if (line.find("MIG devices:") != std::string_view::npos) {
            in_box = true;
            continue;
        }
        if (!in_box) {
            continue;
        }
        if (line.empty() || line.find("Processes:") != std::string_view::npos) {
            break;
        }
        if (line.size() < 2 || line.front() != '|' || line.back() != '|') {
            continue;
        }
        const auto cells = split(line.substr(1, line.size() - 2), '|');
        if (cells.size() < 2) {
            continue;
        }
        const auto ids = split_words(cells[0]);
        if (ids.size() != 4) {
            continue;
        }
        SmiTableMig m;
        const auto gpu = parse_int32(ids[0]);
        const auto gi = parse_int32(ids[1]);
        const auto ci = parse_int32(ids[2]);
        const auto dev = parse_int32(ids[3]);
        if (!gpu || !gi || !ci || !dev) {
            continue; // the header rows ("GPU  GI  CI  MIG")
        }
        m.gpu = *gpu;
        m.gi = *gi;
        m.ci = *ci;
        m.device = *dev;
        // "22MiB / 71424MiB": used / total
        const auto slash = cells[1].find('/');
        if (slash != std::string::npos) {
            m.memory_total_mib =
                nvidia_detail::smi_mib(std::string_view(cells[1]).substr(slash + 1));
        }
        out.push_back(m);
    }
    return out;
}

std::optional<int> mig_profile_slices(std::string_view profile) {
    // "[<n>c.]<g>g.<mem>gb[+me...]"
    auto rest = profile;
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos) {
        return std::nullopt;
    }
    if (rest.substr(0, dot).ends_with('c')) {
        rest = rest.substr(dot + 1);
    }
    const auto g = rest.find("g.");
    if (g == std::string_view::npos || g == 0) {
        return std::nullopt;
    }
    const auto n = parse_int32(rest.substr(0, g));
    if (!n || *n <= 0 || rest.find("gb", g + 2) == std::string_view::npos) {
        return std::nullopt;
    }
    return n;
}

std::vector<SmiGpuInstance> parse_mig_lgi(std::string_view output) {
    std::vector<SmiGpuInstance> out;
    for (const auto& raw : split(output, '\n')) {
        auto line = trim(raw);
        if (line.size() < 2 || line.front() != '|' || line.back() != '|') {
            continue;
        }
        const auto w = split_words(line.substr(1, line.size() - 2));
        // GPU, "MIG", profile, profile id, instance id, start:size
        if (w.size() != 6 || w[1] != "MIG") {
            continue;
        }
        const auto colon = w[5].find(':');
        const auto gpu = parse_int32(w[0]);
        const auto pid = parse_int32(w[3]);
        const auto id = parse_int32(w[4]);
        const auto start =
            colon == std::string::npos ? std::nullopt : parse_int32(w[5].substr(0, colon));
        const auto size =
            colon == std::string::npos ? std::nullopt : parse_int32(w[5].substr(colon + 1));
        if (!gpu || !pid || !id || !start || !size) {
            continue;
        }
        out.push_back(SmiGpuInstance{*gpu, w[2], *pid, *id, *start, *size});
    }
    return out;
}

} // namespace gpuprov
