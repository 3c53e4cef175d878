// The health families of `gpuprov metrics`: ECC error counters, clock throttle reasons, NVLink
// error counters and Xid events (docs/metrics.md).
#include "metrics_writer.hpp"

#include <map>
#include <tuple>

namespace gpuprov::metrics_detail {

namespace {

void ecc_metrics(const MetricsSnapshot& s, Writer& w) {
    w.family("gpuprov_gpu_ecc_mode_enabled",
             "Whether ECC is enabled on the GPU (ecc.mode.current).");
    for (const auto& h : s.health) {
        if (h.ecc_enabled) {
            w.sample("gpuprov_gpu_ecc_mode_enabled", gpu_labels(h.index, h.uuid),
                     *h.ecc_enabled ? 1 : 0);
        }
    }
    w.family("gpuprov_gpu_ecc_errors_total",
             "ECC errors: volatile since the driver loaded, aggregate over the GPU's life.",
             "counter");
    for (const auto& h : s.health) {
        const std::pair<const char*, const std::optional<double>*> counts[] = {
            {R"(error="corrected",scope="volatile")", &h.ecc_corrected_volatile},
            {R"(error="corrected",scope="aggregate")", &h.ecc_corrected_aggregate},
            {R"(error="uncorrected",scope="volatile")", &h.ecc_uncorrected_volatile},
            {R"(error="uncorrected",scope="aggregate")", &h.ecc_uncorrected_aggregate},
        };
        for (const auto& [labels, value] : counts) {
            // ECC off or not supported ([N/A]): left out, not reported as 0.
            if (value->has_value()) {
                w.sample("gpuprov_gpu_ecc_errors_total", gpu_labels(h.index, h.uuid) + "," + labels,
                         **value);
            }
        }
    }
}

void throttle_metrics(const MetricsSnapshot& s, Writer& w) {
    w.family("gpuprov_gpu_clock_throttle_active",
             "Whether a clock throttle (clock event) reason holds the GPU's clocks down.");
    for (const auto& h : s.health) {
        for (const auto& [reason, active] : h.throttle) {
            w.sample("gpuprov_gpu_clock_throttle_active",
                     gpu_labels(h.index, h.uuid) + "," + label("reason", reason), active ? 1 : 0);
        }
    }
}

void nvlink_metrics(const std::vector<NvlinkErrorCount>& counts, Writer& w) {
    w.family("gpuprov_nvlink_errors_total",
             "NVLink error counters per GPU and link (nvidia-smi nvlink -e).", "counter");
    for (const auto& c : counts) {
        w.sample("gpuprov_nvlink_errors_total",
                 gpu_labels(c.gpu, c.uuid) + "," + label("link", std::to_string(c.link)) + "," +
                     label("counter", c.counter),
                 c.value);
    }
}

void xid_metrics(const std::optional<std::vector<XidEvent>>& xids, Writer& w) {
    w.family("gpuprov_kernel_log_up",
             "Whether the kernel log was read for Xid events (journalctl -k, else dmesg).");
    w.sample("gpuprov_kernel_log_up", "", xids ? 1 : 0);
    if (!xids) {
        return;
    }
    std::map<std::tuple<std::string, int>, int> counts;
    for (const auto& e : *xids) {
        ++counts[{e.device, e.xid}];
    }
    w.family("gpuprov_xid_errors_total",
             "Xid events the NVIDIA driver logged since boot, per device and Xid code.", "counter");
    for (const auto& [key, n] : counts) {
        const auto& [device, xid] = key;
        w.sample("gpuprov_xid_errors_total",
                 label("pci_device", device) + "," + label("xid", std::to_string(xid)), n);
    }
}

} // namespace

void health_metrics(const MetricsSnapshot& s, Writer& w) {
    if (s.health_up) {
        w.family("gpuprov_gpu_health_query_up",
                 "Whether the ECC and throttle-reason query of nvidia-smi answered.");
        w.sample("gpuprov_gpu_health_query_up", "", *s.health_up ? 1 : 0);
    }
    ecc_metrics(s, w);
    throttle_metrics(s, w);
    if (s.nvlink) {
        nvlink_metrics(*s.nvlink, w);
    }
    xid_metrics(s.xids, w);
}

} // namespace gpuprov::metrics_detail
