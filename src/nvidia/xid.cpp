// Xid events from the kernel log. The NVIDIA driver logs each as
//   NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.
// (older drivers without "PCI:", e.g. "NVRM: Xid (0000:03:00): 14, ..."); journalctl, dmesg
// and syslog only differ in what precedes "NVRM:".
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

std::vector<XidEvent> parse_xid_events(std::string_view log) {
    constexpr std::string_view kMarker = "NVRM: Xid (";
    std::vector<XidEvent> out;
    for (const auto& line : lines(log)) {
        const auto at = line.find(kMarker);
        if (at == std::string::npos) {
            continue;
        }
        std::string_view rest = std::string_view(line).substr(at + kMarker.size());
        const auto close = rest.find("): ");
        if (close == std::string_view::npos) {
            continue;
        }
        std::string_view device = rest.substr(0, close);
        if (starts_with(device, "PCI:")) {
            device.remove_prefix(4);
        }
        rest.remove_prefix(close + 3);
        std::size_t digits = 0;
        while (digits < rest.size() && digits < 6 && rest[digits] >= '0' && rest[digits] <= '9') {
            ++digits;
        }
        const auto code = parse_int32(rest.substr(0, digits));
        if (digits == 0 || !code || device.empty()) {
            continue;
        }
        out.push_back({std::string(device), *code});
    }
    return out;
}

} // namespace gpuprov
