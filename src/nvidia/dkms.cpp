#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

std::vector<DkmsEntry> parse_dkms_status(std::string_view output) {
    std::vector<DkmsEntry> entries;
    for (const auto& line : lines(output)) {
        // The state follows the first ": " (kernel releases and versions contain no ": ").
        const auto colon = line.find(": ");
        if (colon == std::string::npos) {
            continue;
        }
        DkmsEntry e;
        e.state = std::string(trim(std::string_view(line).substr(colon + 2)));
        std::vector<std::string> parts;
        for (const auto& p : split(std::string_view(line).substr(0, colon), ',')) {
            parts.emplace_back(trim(p));
        }
        std::size_t next = 1;
        if (const auto slash = parts[0].find('/'); slash != std::string::npos) {
            e.module = parts[0].substr(0, slash);
            e.version = parts[0].substr(slash + 1);
        } else if (parts.size() >= 2) {
            // dkms < 2.8: "nvidia, 460.91.03, 5.11.0-36-generic, x86_64: installed"
            e.module = parts[0];
            e.version = parts[1];
            next = 2;
        } else {
            continue;
        }
        if (next < parts.size()) {
            e.kernel = parts[next];
        }
        if (next + 1 < parts.size()) {
            e.arch = parts[next + 1];
        }
        entries.push_back(std::move(e));
    }
    return entries;
}

} // namespace gpuprov
