#pragma once
// `gpuprov metrics`: GPU gauges and provisioning state in the Prometheus text exposition
// format 0.0.4, for node_exporter's textfile collector (docs/metrics.md).
#include <filesystem>
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/system.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

struct MetricsSnapshot {
    bool smi_up = false; ///< nvidia-smi answered
    std::vector<SmiGpu> gpus;
    std::optional<Journal> journal;
    /// From the host facts (the CLI fills them): NVIDIA GPUs on the PCI bus, so an alert can
    /// compare them with the GPUs nvidia-smi sees; -1 when unknown.
    int gpus_on_pci = -1;
    std::optional<bool> driver_loaded; ///< /proc/driver/nvidia/version readable
    /// The profile's monitoring.temperature_alert_c, exported for the alert rule to compare with.
    std::optional<int> temperature_alert_c;

    /// The next-boot forecast (gpuprov/forecast.hpp; the CLI fills it, from what is installed,
    /// without the upgrade look-ahead): whether the kernel the boot loader boots next has
    /// working GPUs, and which kernel that is.
    struct NextBoot {
        bool ready = false;
        std::string kernel;
    };
    std::optional<NextBoot> next_boot;

    /// The health query (ECC, throttle reasons) answered; asked only when nvidia-smi is up.
    std::optional<bool> health_up;
    std::vector<SmiHealth> health;
    /// `nvidia-smi nvlink -e`; nullopt when it was not asked or failed (no NVLink).
    std::optional<std::vector<NvlinkErrorCount>> nvlink;
    /// Xid events in the kernel log since boot; nullopt when no kernel log could be read.
    std::optional<std::vector<XidEvent>> xids;
};

/// Runs the nvidia-smi queries (GPUs, then health and NVLink errors when it answered), reads
/// the kernel log for Xid events (journalctl -k, else dmesg) and the journal (an unreadable
/// journal counts as none).
[[nodiscard]] MetricsSnapshot collect_metrics(const System& sys);
/// The exposition text: # HELP and # TYPE for every family, one sample per line.
[[nodiscard]] std::string render_metrics(const MetricsSnapshot& snapshot);
/// Writes DIR/gpuprov.prom atomically, so the collector never reads half a file.
void write_textfile(System& sys, const std::filesystem::path& dir, std::string_view text);

/// A label value escaped per the format: backslash, double quote and newline.
[[nodiscard]] std::string escape_label_value(std::string_view value);
/// Seconds since the epoch of an RFC 3339 timestamp ("2026-03-01T10:00:00Z", offsets and
/// fractions allowed), or nullopt.
[[nodiscard]] std::optional<double> parse_rfc3339(std::string_view text);

} // namespace gpuprov
