// GPUs from sysfs PCI attributes rather than lspci or nvidia-smi: they are present before any
// driver is installed, cost no process start, and do not depend on an up-to-date pci.ids.
#include "detectors.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <gpuprov/matrix.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::facts_detail {

namespace {

constexpr std::uint16_t nvidia_vendor = 0x10de;
constexpr std::uint32_t display_class = 0x03;        // base class: VGA, 3D controller, ...
constexpr std::uint32_t bridge_other_class = 0x0680; // how NVSwitch functions enumerate
constexpr std::uint32_t infiniband_class = 0x0207;   // network controller, InfiniBand

/// sysfs prints these attributes as "0x10de\n".
std::optional<std::uint32_t> read_hex(const System& sys, const std::string& path) {
    const auto content = sys.read_file(path);
    if (!content) {
        return std::nullopt;
    }
    auto text = trim(*content);
    if (starts_with(text, "0x") || starts_with(text, "0X")) {
        text.remove_prefix(2);
    }
    std::uint32_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
    if (text.empty() || ec != std::errc{} || ptr != end) {
        return std::nullopt;
    }
    return value;
}

void name_from_matrix(PciGpu& gpu, const Matrix& matrix) {
    const auto* known = matrix.gpu_by_device(gpu.device_id);
    if (known == nullptr) {
        return;
    }
    gpu.model = known->model;
    gpu.also_model = known->also_model;
    gpu.name = known->name;
    gpu.architecture = known->architecture;
    gpu.compute_capability = known->compute_capability;
    gpu.memory_gib = known->memory_gib;
    gpu.nvswitch_system = known->nvswitch;
}

} // namespace

void read_pci(const System& sys, const Matrix& matrix, HostFacts& facts) {
    const std::string root = "/sys/bus/pci/devices/";
    for (const auto& address : sys.list_dir(root)) {
        const auto dir = root + address + "/";
        // Vendor first: on a big server almost every function is someone else's, and this
        // keeps the cost to two small reads (vendor, class) for each of them.
        const auto vendor = read_hex(sys, dir + "vendor");
        if (!vendor) {
            continue;
        }
        if (*vendor != nvidia_vendor) {
            // ConnectX HCAs in InfiniBand mode (Mellanox's 0x15b3 or NVIDIA's own ids).
            if (const auto cls = read_hex(sys, dir + "class");
                cls && (*cls >> 8) == infiniband_class) {
                facts.ib_hca_pci.push_back(address);
            }
            continue;
        }
        const auto cls = read_hex(sys, dir + "class");
        const auto device = read_hex(sys, dir + "device");
        if (!cls || !device || *device > 0xffff) {
            continue;
        }
        if ((*cls >> 8) == bridge_other_class) {
            ++facts.nvswitch_count;
            continue;
        }
        if ((*cls >> 16) != display_class) {
            continue; // the GPU's HDMI audio or USB-C functions
        }
        PciGpu gpu;
        gpu.address = address;
        gpu.vendor_id = nvidia_vendor;
        gpu.device_id = static_cast<std::uint16_t>(*device);
        gpu.class_code = *cls;
        if (const auto link = sys.read_link(dir + "driver")) {
            gpu.driver = link->filename().string();
        }
        name_from_matrix(gpu, matrix);
        facts.gpus.push_back(std::move(gpu));
    }
    std::sort(facts.ib_hca_pci.begin(), facts.ib_hca_pci.end());
    std::sort(facts.gpus.begin(), facts.gpus.end(),
              [](const PciGpu& a, const PciGpu& b) { return a.address < b.address; });
}

} // namespace gpuprov::facts_detail
