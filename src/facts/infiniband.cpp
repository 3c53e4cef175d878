// RDMA devices from sysfs (Documentation/ABI/stable/sysfs-class-infiniband): what ibstat and
// ibstatus print, read without running them, so facts work before rdma-core is installed.
#include "detectors.hpp"

#include <algorithm>
#include <charconv>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::string read_line(const System& sys, const std::string& path) {
    const auto content = sys.read_file(path);
    return content ? std::string(trim(*content)) : std::string();
}

} // namespace

bool vpd_marks_nvswitch(std::string_view vpd) {
    return vpd.find("SW_MNG") != std::string_view::npos;
}

std::string parse_ib_state(std::string_view text) {
    // "4: ACTIVE" → "ACTIVE"; a value without the number is taken as it is.
    text = trim(text);
    if (const auto colon = text.find(':'); colon != std::string_view::npos) {
        text = trim(text.substr(colon + 1));
    }
    return std::string(text);
}

double parse_ib_rate_gbps(std::string_view text) {
    // "200 Gb/sec (4X HDR)", "25 Gb/sec (1X EDR)", "2.5 Gb/sec (1X SDR)": the number before
    // "Gb/sec"; anything else (an empty or odd file) is 0, which no minimum accepts.
    text = trim(text);
    const auto space = text.find(' ');
    if (space == std::string_view::npos || !starts_with(text.substr(space + 1), "Gb/sec")) {
        return 0;
    }
    double value = 0;
    const auto number = text.substr(0, space);
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    return ec == std::errc{} && ptr == number.data() + number.size() ? value : 0;
}

namespace facts_detail {

std::vector<IbDevice> read_infiniband(const System& sys) {
    const std::string root = "/sys/class/infiniband/";
    std::vector<IbDevice> out;
    for (const auto& name : sys.list_dir(root)) {
        IbDevice dev;
        dev.name = name;
        // device → ../../../0000:0c:00.0 (the PCI function); its last component is the address.
        if (const auto link = sys.read_link(root + name + "/device")) {
            dev.pci_address = link->filename().string();
        }
        // As NVIDIA's driver container finds NVLink 5 switches (gpu-driver-container
        // ubuntu24.04/nvidia-driver `_assert_nvlink5_system`, since 23db140, 2025-03-14: `grep -q
        // "SW_MNG" /sys/class/infiniband/*/device/vpd`): the bytes anywhere in the binary VPD.
        if (const auto vpd = read_resolved(sys, root + name + "/device/vpd")) {
            dev.nvswitch = vpd_marks_nvswitch(*vpd);
        }
        const auto ports_dir = root + name + "/ports/";
        for (const auto& port : sys.list_dir(ports_dir)) {
            IbPort p;
            if (const auto n = parse_int(port); n && *n > 0 && *n < 256) {
                p.number = static_cast<int>(*n);
            } else {
                continue;
            }
            const auto dir = ports_dir + port + "/";
            p.state = parse_ib_state(read_line(sys, dir + "state"));
            p.phys_state = parse_ib_state(read_line(sys, dir + "phys_state"));
            p.rate = read_line(sys, dir + "rate");
            p.rate_gbps = parse_ib_rate_gbps(p.rate);
            p.link_layer = read_line(sys, dir + "link_layer");
            dev.ports.push_back(std::move(p));
        }
        std::sort(dev.ports.begin(), dev.ports.end(),
                  [](const IbPort& a, const IbPort& b) { return a.number < b.number; });
        out.push_back(std::move(dev));
    }
    std::sort(out.begin(), out.end(),
              [](const IbDevice& a, const IbDevice& b) { return a.name < b.name; });
    return out;
}

} // namespace facts_detail

} // namespace gpuprov
