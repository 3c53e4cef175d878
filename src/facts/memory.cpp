// Installed RAM, as the kernel reports it (MemTotal excludes firmware-reserved memory, so a
// "256 GiB" host shows slightly less; profile checks allow for that).
#include "detectors.hpp"

#include <gpuprov/strings.hpp>
#include <limits>

namespace gpuprov {

std::optional<std::uint64_t> parse_meminfo_total(std::string_view content) {
    for (const auto& line : lines(content)) {
        if (!starts_with(line, "MemTotal:")) {
            continue;
        }
        auto rest = trim(std::string_view(line).substr(9));
        // /proc/meminfo always says kB (meaning KiB); any other unit is not this file.
        if (rest.size() < 2 || rest.substr(rest.size() - 2) != "kB") {
            return std::nullopt;
        }
        const auto kib = parse_int(rest.substr(0, rest.size() - 2));
        if (!kib || *kib < 0 ||
            static_cast<std::uint64_t>(*kib) > std::numeric_limits<std::uint64_t>::max() / 1024) {
            return std::nullopt;
        }
        return static_cast<std::uint64_t>(*kib) * 1024;
    }
    return std::nullopt;
}

namespace facts_detail {

std::uint64_t read_memory(const System& sys) {
    const auto content = sys.read_file("/proc/meminfo");
    return content ? parse_meminfo_total(*content).value_or(0) : 0;
}

} // namespace facts_detail

} // namespace gpuprov
