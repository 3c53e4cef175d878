// The `facts --json` document (schema in docs/facts.md). Every key is always present so scripts
// can index without guarding; an unknown value is null, never a made-up default.
#include <fmt/format.h>
#include <gpuprov/facts.hpp>
#include <nlohmann/json.hpp>

namespace gpuprov {

namespace {

using nlohmann::json;

json str_or_null(const std::string& s) {
    return s.empty() ? json(nullptr) : json(s);
}

std::string hex4(std::uint32_t v) {
    return fmt::format("0x{:04x}", v);
}

json os_json(const OsInfo& os) {
    return {
        {"id", str_or_null(os.id)},
        {"id_like", os.id_like},
        {"version_id", str_or_null(os.version_id)},
        {"codename", str_or_null(os.codename)},
        {"pretty_name", str_or_null(os.pretty_name)},
        {"family", str_or_null(os.family)},
        {"repo_slug", str_or_null(os.repo_slug)},
        {"profile_os", str_or_null(os.profile_os)},
        {"end_of_life", str_or_null(os.end_of_life)},
    };
}

json gpu_json(const PciGpu& gpu) {
    return {
        {"address", gpu.address},
        {"vendor_id", hex4(gpu.vendor_id)},
        {"device_id", hex4(gpu.device_id)},
        {"class", fmt::format("0x{:06x}", gpu.class_code)},
        {"driver", str_or_null(gpu.driver)},
        {"model", str_or_null(gpu.model)},
        {"name", str_or_null(gpu.name)},
        {"architecture", str_or_null(gpu.architecture)},
        {"compute_capability", str_or_null(gpu.compute_capability)},
        {"memory_gib", gpu.memory_gib > 0 ? json(gpu.memory_gib) : json(nullptr)},
        {"nvswitch_system", gpu.nvswitch_system},
    };
}

json kernels_json(const HostFacts& facts) {
    json out = json::array();
    for (const auto& k : facts.kernels) {
        out.push_back({{"release", k.release}, {"build_tree", k.build_tree}});
    }
    return out;
}

json infiniband_json(const HostFacts& facts) {
    json devices = json::array();
    for (const auto& dev : facts.infiniband) {
        json ports = json::array();
        for (const auto& p : dev.ports) {
            ports.push_back({
                {"port", p.number},
                {"state", str_or_null(p.state)},
                {"phys_state", str_or_null(p.phys_state)},
                {"rate", str_or_null(p.rate)},
                {"rate_gbps", p.rate_gbps},
                {"link_layer", str_or_null(p.link_layer)},
            });
        }
        devices.push_back({{"name", dev.name},
                           {"pci_address", str_or_null(dev.pci_address)},
                           {"nvswitch", dev.nvswitch},
                           {"ports", std::move(ports)}});
    }
    return {
        {"hca_pci", json(facts.ib_hca_pci)},
        {"devices", std::move(devices)},
        {"peermem_loaded", facts.peermem_loaded},
    };
}

} // namespace

nlohmann::json facts_to_json(const HostFacts& facts) {
    json gpus = json::array();
    for (const auto& gpu : facts.gpus) {
        gpus.push_back(gpu_json(gpu));
    }
    json cuda = json::array();
    for (const auto& c : facts.cuda) {
        cuda.push_back({{"path", c.path}, {"version", c.version}});
    }
    json driver = nullptr;
    if (facts.driver) {
        driver = {{"version", facts.driver->version}, {"open_module", facts.driver->open_module}};
    }
    json cudnn = nullptr;
    if (facts.cudnn) {
        const auto& c = *facts.cudnn;
        cudnn = {
            {"version", fmt::format("{}.{}.{}", c.major, c.minor, c.patch)},
            {"major", c.major},
            {"minor", c.minor},
            {"patch", c.patch},
            {"header", c.header},
        };
    }
    json runfile = nullptr;
    if (facts.runfile_driver) {
        runfile = {{"version", str_or_null(facts.runfile_driver->version)},
                   {"evidence", json(facts.runfile_driver->evidence)}};
    }
    json disk = nullptr;
    if (facts.root_disk) {
        disk = {
            {"path", "/"},
            {"total_bytes", facts.root_disk->total_bytes},
            {"free_bytes", facts.root_disk->free_bytes},
        };
    }
    json el = nullptr;
    if (facts.os.family == "rhel") {
        el = {
            {"kernel_devel", facts.kernel_devel},
            {"kernel_headers_rpm", facts.kernel_headers_rpm},
            {"module_streams", json(facts.module_streams)},
            {"epel", facts.epel},
            {"selinux", str_or_null(facts.selinux)},
        };
    }
    return {
        {"os", os_json(facts.os)},
        {"el", std::move(el)},
        {"arch", str_or_null(facts.arch)},
        {"repo_arch", str_or_null(facts.repo_arch)},
        {"pkg_arch", str_or_null(facts.pkg_arch)},
        {"kernel", str_or_null(facts.kernel)},
        {"kernel_headers", facts.kernel_headers},
        {"kernels", kernels_json(facts)},
        {"gpus", std::move(gpus)},
        {"nvswitch_count", facts.nvswitch_count},
        {"nvlink5_switch_count", facts.nvlink5_switch_count},
        {"infiniband", infiniband_json(facts)},
        {"nouveau_loaded", facts.nouveau_loaded},
        {"nova_core_loaded", facts.nova_core_loaded},
        {"secure_boot", facts.secure_boot ? json(*facts.secure_boot) : json(nullptr)},
        {"driver", std::move(driver)},
        {"cuda", std::move(cuda)},
        {"cuda_default_link",
         facts.cuda_default_link ? json(*facts.cuda_default_link) : json(nullptr)},
        {"cudnn", std::move(cudnn)},
        {"packages", json(facts.packages)},
        {"runfile_driver", std::move(runfile)},
        {"memory_bytes", facts.memory_bytes > 0 ? json(facts.memory_bytes) : json(nullptr)},
        {"root_disk", std::move(disk)},
    };
}

} // namespace gpuprov
