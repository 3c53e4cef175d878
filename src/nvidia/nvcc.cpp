#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>
#include <gpuprov/version.hpp>

namespace gpuprov {

std::optional<NvccVersion> parse_nvcc_version(std::string_view output) {
    constexpr std::string_view kRelease = "release ";
    for (const auto& line : lines(output)) {
        const auto pos = line.find(kRelease);
        if (line.find("Cuda compilation tools") == std::string::npos || pos == std::string::npos) {
            continue;
        }
        // "Cuda compilation tools, release 12.2, V12.2.140"
        auto rest = std::string_view(line).substr(pos + kRelease.size());
        const auto comma = rest.find(',');
        NvccVersion v;
        v.release = std::string(trim(rest.substr(0, comma)));
        if (comma != std::string_view::npos) {
            auto tail = trim(rest.substr(comma + 1));
            if (starts_with(tail, "V")) {
                v.version = std::string(tail.substr(1));
            }
        }
        if (!DottedVersion::parse(v.release)) {
            return std::nullopt;
        }
        return v;
    }
    return std::nullopt;
}

} // namespace gpuprov
