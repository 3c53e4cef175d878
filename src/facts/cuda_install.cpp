// Installed CUDA toolkits, found by their versioned directories: several can be installed side by
// side, and /usr/local/cuda only says which one is the default.
#include "detectors.hpp"

#include <algorithm>
#include <gpuprov/strings.hpp>
#include <gpuprov/version.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

std::optional<std::string> parse_cuda_version_json(std::string_view content) {
    const auto doc = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object()) {
        return std::nullopt;
    }
    const auto cuda = doc.find("cuda");
    if (cuda == doc.end() || !cuda->is_object()) {
        return std::nullopt;
    }
    const auto version = cuda->find("version");
    if (version == cuda->end() || !version->is_string()) {
        return std::nullopt;
    }
    auto text = version->get<std::string>();
    if (!DottedVersion::parse(text)) {
        return std::nullopt;
    }
    return text;
}

std::optional<std::string> parse_cuda_version_txt(std::string_view content) {
    static constexpr std::string_view marker = "CUDA Version ";
    const auto at = content.find(marker);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    auto rest = content.substr(at + marker.size());
    const auto end = rest.find_first_of(" \t\r\n");
    const auto token = rest.substr(0, end);
    if (!DottedVersion::parse(token)) {
        return std::nullopt;
    }
    return std::string(token);
}

std::optional<std::string> parse_cuda_h_version(std::string_view content) {
    static constexpr std::string_view marker = "#define CUDA_VERSION ";
    const auto at = content.find(marker);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    auto rest = content.substr(at + marker.size());
    const auto value = parse_int(rest.substr(0, rest.find('\n')));
    // major * 1000 + minor * 10 since CUDA 2.x; anything else is not that define.
    if (!value || *value < 1000 || *value % 10 != 0) {
        return std::nullopt;
    }
    return std::to_string(*value / 1000) + "." + std::to_string(*value % 1000 / 10);
}

namespace facts_detail {

std::vector<InstalledCuda> read_cuda_installs(const System& sys) {
    std::vector<InstalledCuda> found;
    for (const auto& name : sys.list_dir("/usr/local")) {
        if (!starts_with(name, "cuda-")) {
            continue;
        }
        const auto dir = "/usr/local/" + name;
        std::optional<std::string> version;
        if (const auto json = sys.read_file(dir + "/version.json")) {
            version = parse_cuda_version_json(*json);
        } else if (const auto txt = sys.read_file(dir + "/version.txt")) {
            // version.txt was dropped in CUDA 11.1; older toolkits have only this.
            version = parse_cuda_version_txt(*txt);
        } else if (const auto header = sys.read_file(dir + "/include/cuda.h")) {
            // A 1 MB read, paid only by toolkits that ship neither version file.
            version = parse_cuda_h_version(*header);
        }
        // A directory without any of these is a leftover of a removed toolkit, not a usable
        // install.
        if (version) {
            found.push_back({dir, *version});
        }
    }
    // Numeric order: "cuda-12.10" is newer than "cuda-12.4", which a name sort gets wrong.
    std::sort(found.begin(), found.end(), [](const InstalledCuda& a, const InstalledCuda& b) {
        const auto va = DottedVersion::parse(a.version);
        const auto vb = DottedVersion::parse(b.version);
        return *va < *vb; // both parsed when they were accepted above
    });
    return found;
}

std::optional<std::string> read_cuda_default_link(const System& sys) {
    return link_target(sys, "/usr/local/cuda");
}

} // namespace facts_detail

} // namespace gpuprov
