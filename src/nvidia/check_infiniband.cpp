// InfiniBand for multi-node NCCL: the HCAs have RDMA devices, their InfiniBand ports are ACTIVE
// at the profile's rate, the verbs userspace sees them, GPUDirect RDMA is available and NCCL is
// told which ports to use. Port state comes from sysfs (what ibstat prints, read directly).
#include "infiniband_ports.hpp"
#include "probe.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/gpu_rules.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

using namespace nvidia_detail;

namespace {

constexpr const char* kInfinibandStep = "infiniband";

std::string port_name(const IbDevice& dev, const IbPort& p) {
    return fmt::format("{}:{}", dev.name, p.number);
}

std::string port_text(const IbDevice& dev, const IbPort& p) {
    return fmt::format("{} {} ({}, {})", port_name(dev, p), p.state.empty() ? "?" : p.state,
                       p.phys_state.empty() ? "?" : p.phys_state, p.rate.empty() ? "?" : p.rate);
}

bool is_ib(const IbPort& p) {
    return p.link_layer == "InfiniBand";
}

CheckOutcome devices_outcome(const HostFacts& facts) {
    auto c = make_outcome("infiniband.devices", kInfinibandStep, "/sys/class/infiniband");
    c.expected = "an RDMA device for every InfiniBand HCA";
    const auto missing = hcas_without_rdma_device(facts);
    std::vector<std::string> names;
    for (const auto& dev : facts.infiniband) {
        names.push_back(dev.name + (dev.pci_address.empty() ? "" : " (" + dev.pci_address + ")"));
    }
    c.found = names.empty() ? "none" : join(names, ", ");
    if (!missing.empty()) {
        c.found += "; no RDMA device for " + join(missing, ", ");
    }
    c.fix = "load the HCA's RDMA driver (mlx5_ib for ConnectX: modprobe mlx5_ib) and check "
            "dmesg for its errors";
    settle(c, !facts.infiniband.empty() && missing.empty());
    return c;
}

} // namespace

namespace nvidia_detail {

std::vector<std::string> hcas_without_rdma_device(const HostFacts& facts) {
    std::vector<std::string> missing;
    for (const auto& pci : facts.ib_hca_pci) {
        const bool registered =
            std::any_of(facts.infiniband.begin(), facts.infiniband.end(),
                        [&](const IbDevice& dev) { return dev.pci_address == pci; });
        if (!registered) {
            missing.push_back(pci);
        }
    }
    return missing;
}

std::string ib_port_state_text(const IbDevice& dev, const IbPort& p) {
    return fmt::format("{} {} ({})", port_name(dev, p), p.state.empty() ? "?" : p.state,
                       p.phys_state.empty() ? "?" : p.phys_state);
}

std::string ib_port_advice(const IbPort& p) {
    if (p.phys_state == "Polling") {
        return "no link: check the cable and the switch port";
    }
    if (p.phys_state == "Disabled") {
        return "the port was disabled (ibportstate <lid> <port> enable)";
    }
    if (p.state == "INIT" || p.state == "ARMED") {
        return "link up but no subnet manager configured it: run opensm on one node or enable "
               "the switch's subnet manager";
    }
    return "not ACTIVE";
}

} // namespace nvidia_detail

std::vector<std::string> infiniband_ports_for_nccl(const HostFacts& facts) {
    std::vector<std::string> out;
    for (const auto& dev : facts.infiniband) {
        if (dev.nvswitch) {
            continue; // an NVLink 5 switch's management port (SW_MNG): NVLSM's, not a network
        }
        for (const auto& p : dev.ports) {
            if (is_ib(p)) {
                out.push_back(port_name(dev, p));
            }
        }
    }
    return out;
}

namespace {

// The open kernel modules and Linux 5.12 or later are DMA-BUF's prerequisites (GPU Operator
// docs, "GPUDirect RDMA and GPUDirect Storage").
bool kernel_has_dmabuf(const std::string& kernel) {
    const auto parts = split(kernel.substr(0, kernel.find_first_not_of("0123456789.")), '.');
    const auto major = parts.empty() ? std::nullopt : parse_int(parts[0]);
    const auto minor = parts.size() < 2 ? std::nullopt : parse_int(parts[1]);
    return major && minor && (*major > 5 || (*major == 5 && *minor >= 12));
}

} // namespace

bool dmabuf_possible(const HostFacts& facts) {
    return kernel_has_dmabuf(facts.kernel) && facts.driver && facts.driver->open_module;
}

GpuDirectMode gpudirect_mode(const Profile& profile, const HostFacts& facts) {
    if (!profile.infiniband) {
        return GpuDirectMode::off;
    }
    const auto mode = profile.infiniband->gpudirect_rdma;
    if (mode != GpuDirectMode::automatic) {
        return mode;
    }
    // The flavor the profile installs, or the loaded module's when it installs none.
    const bool open = profile.driver
                          ? driver_flavor(profile, facts, Matrix::builtin()).flavor == "open"
                          : facts.driver && facts.driver->open_module;
    return open && kernel_has_dmabuf(facts.kernel) ? GpuDirectMode::dmabuf : GpuDirectMode::peermem;
}

std::vector<std::string> parse_ibv_devinfo_list(std::string_view out) {
    // rdma-core's `ibv_devinfo -l`: "N HCAs found:" then one tab-indented name per line.
    std::vector<std::string> names;
    bool header = false;
    for (const auto& line : lines(out)) {
        const auto t = trim(line);
        if (!header) {
            header = t.find("HCA") != std::string_view::npos &&
                     t.find("found:") != std::string_view::npos;
            continue;
        }
        if (!t.empty()) {
            names.emplace_back(t);
        }
    }
    return names;
}

std::vector<CheckOutcome> check_infiniband(const VerifyInput& in, const System& sys) {
    std::vector<CheckOutcome> out;
    if (!in.profile.infiniband) {
        return out;
    }
    const auto& want = *in.profile.infiniband;
    const auto& facts = in.facts;
    if (facts.ib_hca_pci.empty() && facts.infiniband.empty()) {
        if (want.required) {
            auto c =
                make_outcome("infiniband.hca", kInfinibandStep, "/sys/bus/pci/devices/*/class");
            c.expected = "an InfiniBand HCA (PCI class 0x0207)";
            c.found = "none";
            c.fix = "this host has no InfiniBand adapter; set infiniband.required: false to "
                    "provision it for single-node work";
            settle(c, false);
            out.push_back(c);
        }
        return out;
    }
    out.push_back(devices_outcome(facts));

    // Ports: InfiniBand link layer only (a RoCE port of the same HCA is Ethernet).
    auto ports =
        make_outcome("infiniband.ports", kInfinibandStep, "/sys/class/infiniband/*/ports/*/state");
    ports.expected = fmt::format("at least {} InfiniBand port(s) ACTIVE", want.min_active_ports);
    std::vector<std::string> seen;
    std::vector<std::string> down;
    std::vector<std::string> advice;
    int active = 0;
    for (const auto& dev : facts.infiniband) {
        for (const auto& p : dev.ports) {
            if (!is_ib(p)) {
                continue;
            }
            seen.push_back(port_text(dev, p));
            if (p.state == "ACTIVE") {
                ++active;
                continue;
            }
            // Named in `found`, so the one-line report says which port and in what state.
            down.push_back(ib_port_state_text(dev, p));
            advice.push_back(port_name(dev, p) + ": " + ib_port_advice(p));
        }
    }
    ports.found = fmt::format("{} ACTIVE", active);
    if (!down.empty()) {
        ports.found += "; not ACTIVE: " + join(down, ", ");
    }
    ports.excerpt = join(seen, "\n");
    ports.fix = advice.empty()
                    ? "this host has fewer InfiniBand ports than "
                      "infiniband.min_active_ports (RoCE ports do not count)"
                    : join(advice, "; ") + "; NCCL uses a port only once it reads ACTIVE";
    settle(ports, active >= want.min_active_ports);
    out.push_back(ports);

    if (want.min_rate_gbps) {
        auto rate = make_outcome("infiniband.rate", kInfinibandStep,
                                 "/sys/class/infiniband/*/ports/*/rate");
        rate.expected =
            fmt::format("every ACTIVE InfiniBand port at least {} Gb/s", *want.min_rate_gbps);
        std::vector<std::string> slow;
        for (const auto& dev : facts.infiniband) {
            for (const auto& p : dev.ports) {
                if (is_ib(p) && p.state == "ACTIVE" && p.rate_gbps < *want.min_rate_gbps) {
                    slow.push_back(port_name(dev, p) + " " + p.rate);
                }
            }
        }
        rate.found = active == 0    ? "no ACTIVE InfiniBand port to measure"
                     : slow.empty() ? "all at or above"
                                    : "slower: " + join(slow, ", ");
        rate.fix = active == 0
                       ? "bring a port up first (infiniband.ports)"
                       : "a port that trained below its speed: check the cable's rating and the "
                         "switch port's speed (ibportstate, the switch's CLI); reseat or replace "
                         "the cable";
        settle(rate, slow.empty() && active > 0);
        out.push_back(rate);
    }

    // The verbs userspace (rdma-core's provider for the HCA) lists the devices.
    const std::vector<std::string> argv{"ibv_devinfo", "-l"};
    auto verbs = make_outcome("infiniband.verbs", kInfinibandStep, display_argv(argv));
    verbs.expected = "every RDMA device listed";
    // A device the kernel registered but ibv_devinfo does not list has no verbs provider
    // (libmlx5 for ConnectX): libibverbs says so on stderr, kept in the excerpt.
    verbs.fix = "install the distro's RDMA userspace with the verbs providers (libibverbs lists "
                "only devices a provider library drives): gpuprov apply " +
                in.profile.name + " --only infiniband";
    const auto r = probe(sys, argv);
    const auto listed = r.ok() ? parse_ibv_devinfo_list(r.out) : std::vector<std::string>{};
    std::vector<std::string> unlisted;
    for (const auto& dev : facts.infiniband) {
        if (std::find(listed.begin(), listed.end(), dev.name) == listed.end()) {
            unlisted.push_back(dev.name);
        }
    }
    verbs.found = r.ok() ? (listed.empty() ? "no devices" : join(listed, ", ")) : failure_text(r);
    if (r.ok() && !unlisted.empty()) {
        verbs.found += "; missing " + join(unlisted, ", ");
    }
    verbs.excerpt = head_lines(output_of(r), 4);
    settle(verbs, r.ok() && !listed.empty() && unlisted.empty());
    out.push_back(verbs);

    const auto mode = gpudirect_mode(in.profile, facts);
    if (mode == GpuDirectMode::peermem) {
        auto c = make_outcome("infiniband.peermem", kInfinibandStep, "/sys/module/nvidia_peermem");
        c.expected = "nvidia_peermem loaded";
        const bool loaded = sys.exists("/sys/module/nvidia_peermem");
        c.found = loaded ? "loaded" : "not loaded";
        c.fix = "modprobe nvidia-peermem; it needs MLNX_OFED/DOCA-OFED's peer-memory API (the "
                "distro's inbox RDMA stack lacks it: dmesg shows 'Unknown symbol "
                "ib_register_peer_memory_client'); or use DMA-BUF (infiniband.gpudirect_rdma: "
                "dmabuf, open kernel modules, Linux 5.12+)";
        settle(c, loaded);
        out.push_back(c);
    } else if (mode == GpuDirectMode::dmabuf) {
        auto c = make_outcome("infiniband.dmabuf", kInfinibandStep,
                              "/proc/driver/nvidia/version, uname -r");
        c.expected = "open kernel module on Linux 5.12 or later";
        c.found =
            fmt::format("{} module, kernel {}",
                        facts.driver ? (facts.driver->open_module ? "open" : "proprietary") : "no",
                        facts.kernel.empty() ? "?" : facts.kernel);
        c.fix = "DMA-BUF needs driver.flavor: open and a 5.12+ kernel; else set "
                "infiniband.gpudirect_rdma: peermem (needs DOCA-OFED)";
        settle(c, dmabuf_possible(facts));
        out.push_back(c);
    }

    if (want.nccl_conf) {
        auto c = make_outcome("infiniband.nccl-conf", kInfinibandStep, "/etc/nccl.conf");
        const auto wanted = infiniband_ports_for_nccl(facts);
        c.expected = "NCCL_IB_HCA==" + join(wanted, ",");
        const auto text = sys.read_file("/etc/nccl.conf");
        std::string found;
        for (const auto& line : lines(text.value_or(""))) {
            if (starts_with(trim(line), "NCCL_IB_HCA=")) {
                found = std::string(trim(line));
            }
        }
        c.found = text ? (found.empty() ? "no NCCL_IB_HCA line" : found) : "missing";
        c.fix = "gpuprov apply " + in.profile.name + " --only infiniband";
        settle(c, !wanted.empty() && found == c.expected);
        out.push_back(c);
    }
    return out;
}

} // namespace gpuprov
