// Xid events in a kernel log (journalctl -k, dmesg, syslog). At most one event per line that
// holds the marker; the code is the decimal after "): " (at most 6 digits); the line's prefix
// does not matter (documented: "any prefix"), so prefixing every line changes nothing.
#include "fuzz_input.hpp"

#include <gpuprov/gpu_health.hpp>
#include <gpuprov/strings.hpp>

namespace {

std::size_t count_of(std::string_view text, std::string_view needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + needle.size())) {
        ++n;
    }
    return n;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using gpuprov::fuzz::require;
    const auto input = gpuprov::fuzz::text(data, size);
    const auto events = gpuprov::parse_xid_events(input);
    require(events.size() <= count_of(input, "NVRM: Xid ("), "one event per marker at most");
    for (const auto& e : events) {
        require(!e.device.empty(), "the device is named");
        require(e.device.find('\n') == std::string::npos, "the device is on its line");
        require(e.xid >= 0 && e.xid <= 999999, "the code is at most 6 digits");
    }
    std::string prefixed;
    for (const auto& line : gpuprov::lines(input)) {
        prefixed += "Dec 03 14:00:00 host kernel: " + line + "\n";
    }
    const auto again = gpuprov::parse_xid_events(prefixed);
    require(again.size() == events.size(), "a line prefix adds or drops no event");
    for (std::size_t i = 0; i < events.size(); ++i) {
        require(again[i].device == events[i].device && again[i].xid == events[i].xid,
                "a line prefix changes no event");
    }
    return 0;
}
