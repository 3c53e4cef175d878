// GPUs from sysfs PCI attributes (facts' read_pci), through the unit tests' FakeSystem so the
// real reader runs unchanged. The input is NUL-separated fields, four per PCI function:
// vendor, class, device (as sysfs prints them, "0x10de\n") and the driver link's target
// (empty: no driver bound). scripts/fuzz.sh builds the seeds from tests/fixtures/hosts.
#include "detectors.hpp" // src/facts: read_pci
#include "fake_system.hpp"
#include "fuzz_input.hpp"

#include <cstdio>
#include <gpuprov/matrix.hpp>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> fields(1);
    for (const char c : gpuprov::fuzz::text(data, size)) {
        if (c == '\0') {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    gpuprov::testing::FakeSystem sys;
    sys.add_dir("/sys/bus/pci/devices");
    constexpr std::size_t max_functions = 64;
    for (std::size_t i = 0; i + 3 < fields.size() && i / 4 < max_functions; i += 4) {
        char address[16];
        std::snprintf(address, sizeof address, "0000:%02zx:00.0", i / 4);
        const std::string dir = std::string("/sys/bus/pci/devices/") + address + "/";
        sys.add_file(dir + "vendor", fields[i]);
        sys.add_file(dir + "class", fields[i + 1]);
        sys.add_file(dir + "device", fields[i + 2]);
        if (!fields[i + 3].empty()) {
            sys.add_link(dir + "driver", fields[i + 3]);
        }
    }
    gpuprov::HostFacts facts;
    gpuprov::facts_detail::read_pci(sys, gpuprov::Matrix::builtin(), facts);
    for (const auto& gpu : facts.gpus) {
        gpuprov::fuzz::require(gpu.vendor_id == 0x10de && (gpu.class_code >> 16) == 0x03,
                               "only NVIDIA display controllers are GPUs");
    }
    return 0;
}
