// `nvidia-smi nvlink -e`: per GPU a "GPU 0: NAME (UUID: GPU-...)" line, then per link
// "\t Link 0: Replay Errors: 0" lines (tests/fixtures/cmd/README.md).
#include <cmath>
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

// "GPU 3: NVIDIA A100-SXM4-40GB (UUID: GPU-...)" → index 3 and the UUID. A GPU line whose index
// is unreadable (or negative) gives index -1, so its links are credited to no GPU rather than the
// one before.
bool gpu_line(std::string_view line, int& index, std::string& uuid) {
    if (!starts_with(line, "GPU ")) {
        return false;
    }
    const auto colon = line.find(':');
    const auto n = parse_int32(line.substr(4, colon == std::string_view::npos ? 0 : colon - 4));
    index = n && *n >= 0 ? *n : -1;
    uuid.clear();
    constexpr std::string_view kUuid = "(UUID: ";
    if (const auto at = line.find(kUuid); at != std::string_view::npos) {
        const auto end = line.find(')', at);
        if (end != std::string_view::npos) {
            uuid = std::string(line.substr(at + kUuid.size(), end - at - kUuid.size()));
        }
    }
    return true;
}

} // namespace

std::vector<NvlinkErrorCount> parse_nvlink_errors(std::string_view output) {
    std::vector<NvlinkErrorCount> out;
    int gpu = -1;
    std::string uuid;
    for (const auto& raw : lines(output)) {
        const auto line = trim(raw);
        if (gpu_line(line, gpu, uuid) || gpu < 0 || !starts_with(line, "Link ")) {
            continue;
        }
        // "Link 3: CRC Errors: 0"
        const auto first = line.find(": ");
        const auto second = first == std::string_view::npos ? first : line.find(": ", first + 2);
        if (second == std::string_view::npos) {
            continue;
        }
        const auto link = parse_int32(line.substr(5, first - 5));
        std::string_view name = trim(line.substr(first + 2, second - first - 2));
        // A counter (exported as one): a finite count, never negative ("nan", "-1" are no counts).
        const auto value = parse_double(line.substr(second + 2));
        constexpr std::string_view kErrors = " Errors";
        if (!link || !value || !std::isfinite(*value) || *value < 0 ||
            name.size() <= kErrors.size() || name.substr(name.size() - kErrors.size()) != kErrors) {
            continue;
        }
        name.remove_suffix(kErrors.size());
        std::string counter = to_lower(name);
        for (auto& c : counter) {
            if (c == ' ') {
                c = '_';
            }
        }
        out.push_back({gpu, uuid, *link, std::move(counter), *value});
    }
    return out;
}

} // namespace gpuprov
