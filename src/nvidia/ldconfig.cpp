#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

std::vector<LdconfigEntry> parse_ldconfig(std::string_view output) {
    std::vector<LdconfigEntry> entries;
    for (const auto& line : lines(output)) {
        // "\tlibnccl.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnccl.so.2"
        const auto arrow = line.find(" => ");
        if (arrow == std::string::npos) {
            continue;
        }
        auto left = trim(std::string_view(line).substr(0, arrow));
        const auto paren = left.find(" (");
        LdconfigEntry e;
        e.soname = std::string(trim(left.substr(0, paren)));
        e.path = std::string(trim(std::string_view(line).substr(arrow + 4)));
        if (!e.soname.empty()) {
            entries.push_back(std::move(e));
        }
    }
    return entries;
}

const LdconfigEntry* find_library(const std::vector<LdconfigEntry>& entries,
                                  std::string_view prefix) {
    for (const auto& e : entries) {
        if (starts_with(e.soname, prefix)) {
            return &e;
        }
    }
    return nullptr;
}

} // namespace gpuprov
