// InfiniBand findings: why multi-node NCCL would not use the fabric on this host. Read from
// sysfs only (port files, /sys/module), so doctor needs no rdma-core.
#include "doctor_parts.hpp"
#include "infiniband_ports.hpp"

#include <fmt/format.h>
#include <gpuprov/checks.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov::nvidia_detail {

namespace {

// NCCL uses ACTIVE ports only; with none it logs "NET/IB : No device found." and runs over
// NET/Socket (TCP) at a fraction of the fabric's bandwidth.
constexpr const char* kFallback =
    "NCCL uses only ACTIVE ports and otherwise falls back to NET/Socket (TCP)";

void hca_without_device(const DoctorContext& ctx, std::vector<Finding>& out) {
    const auto missing = hcas_without_rdma_device(ctx.facts);
    if (missing.empty()) {
        return;
    }
    Finding f{.id = "ib-hca-without-rdma-device", .severity = "error"};
    f.summary = fmt::format("InfiniBand HCA {} has no RDMA device: its RDMA driver is not loaded",
                            join(missing, ", "));
    f.evidence.push_back({"PCI class 0x0207 functions", join(ctx.facts.ib_hca_pci, "\n")});
    std::vector<std::string> names;
    for (const auto& dev : ctx.facts.infiniband) {
        names.push_back(dev.name + " " + dev.pci_address);
    }
    f.evidence.push_back({"/sys/class/infiniband", names.empty() ? "empty" : join(names, "\n")});
    f.fix = "modprobe mlx5_ib (ConnectX) and read dmesg for its errors; install the distro's "
            "rdma-core: " +
            apply_hint(ctx.options, "infiniband");
    out.push_back(std::move(f));
}

void ports_not_active(const DoctorContext& ctx, std::vector<Finding>& out) {
    std::vector<std::string> lines_out;
    int active = 0;
    for (const auto& dev : ctx.facts.infiniband) {
        if (dev.nvswitch) {
            continue; // NVLSM's port to an NVLink 5 switch, not one NCCL uses
        }
        for (const auto& p : dev.ports) {
            if (p.link_layer != "InfiniBand") {
                continue;
            }
            if (p.state == "ACTIVE") {
                ++active;
                continue;
            }
            lines_out.push_back(ib_port_state_text(dev, p) + ": " + ib_port_advice(p));
        }
    }
    if (lines_out.empty()) {
        return;
    }
    Finding f{.id = "ib-port-not-active", .severity = active == 0 ? "error" : "warning"};
    f.summary = fmt::format("{} InfiniBand port(s) not ACTIVE ({} ACTIVE); {}", lines_out.size(),
                            active, kFallback);
    f.evidence.push_back(
        {"/sys/class/infiniband/*/ports/*/{state,phys_state}", join(lines_out, "\n")});
    f.fix = "bring each port up as its line says; `ibstat` shows the same states, and the port "
            "must read ACTIVE before NCCL uses it";
    out.push_back(std::move(f));
}

void no_gpudirect(const DoctorContext& ctx, std::vector<Finding>& out) {
    if (ctx.facts.infiniband.empty() || !ctx.facts.driver || ctx.facts.peermem_loaded ||
        dmabuf_possible(ctx.facts)) {
        return;
    }
    Finding f{.id = "ib-no-gpudirect-rdma", .severity = "warning"};
    f.summary = "GPUDirect RDMA is unavailable: nvidia_peermem is not loaded and DMA-BUF needs "
                "the open kernel module on Linux 5.12+; NCCL stages GPU buffers through host "
                "memory";
    f.evidence.push_back({"/proc/driver/nvidia/version", ctx.facts.driver->open_module
                                                             ? "open kernel module"
                                                             : "proprietary kernel module"});
    f.evidence.push_back({"kernel", ctx.facts.kernel});
    f.evidence.push_back({"/sys/module/nvidia_peermem", "absent"});
    f.fix = "modprobe nvidia-peermem (needs DOCA-OFED's peer-memory API), or move to the open "
            "driver flavor on a 5.12+ kernel for DMA-BUF: " +
            apply_hint(ctx.options, "infiniband");
    out.push_back(std::move(f));
}

} // namespace

void diagnose_infiniband(const DoctorContext& ctx, std::vector<Finding>& out) {
    hca_without_device(ctx, out);
    ports_not_active(ctx, out);
    no_gpudirect(ctx, out);
}

} // namespace gpuprov::nvidia_detail
