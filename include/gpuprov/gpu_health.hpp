#pragma once
// Parsers for the GPU health signals `gpuprov metrics` exports beside the gauges of
// nvidia_smi.hpp: ECC error counts and clock throttle reasons (a second nvidia-smi query),
// NVLink error counters (`nvidia-smi nvlink -e`) and Xid events from the kernel log. Each is a
// pure function over one real format (captures under tests/fixtures/cmd/, docs/metrics.md).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuprov {

/// The health fields, asked by their old names: nvidia-smi R535 and later renamed
/// clocks_throttle_reasons.* to clocks_event_reasons.* and still accept the old names as
/// aliases (`nvidia-smi --help-query-gpu` of 580.173 and 610.43), older drivers know only them.
inline constexpr std::string_view kSmiHealthFields =
    "index,uuid,ecc.mode.current,ecc.errors.corrected.volatile.total,"
    "ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.volatile.total,"
    "ecc.errors.uncorrected.aggregate.total,clocks_throttle_reasons.gpu_idle,"
    "clocks_throttle_reasons.applications_clocks_setting,clocks_throttle_reasons.sw_power_cap,"
    "clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.hw_thermal_slowdown,"
    "clocks_throttle_reasons.hw_power_brake_slowdown,clocks_throttle_reasons.sw_thermal_slowdown,"
    "clocks_throttle_reasons.sync_boost";

/// `nvidia-smi --query-gpu=<kSmiHealthFields> --format=csv,nounits`: with the header line, so
/// the parser maps columns by name (it prints the canonical names, e.g. clocks_event_reasons.*).
[[nodiscard]] std::vector<std::string> smi_health_argv();

/// One GPU's row. Values nvidia-smi cannot read ([N/A], [Not Supported], ...) are absent.
struct SmiHealth {
    int index = 0;
    std::string uuid;
    std::optional<bool> ecc_enabled;
    std::optional<double> ecc_corrected_volatile;
    std::optional<double> ecc_corrected_aggregate;
    std::optional<double> ecc_uncorrected_volatile;
    std::optional<double> ecc_uncorrected_aggregate;
    /// Throttle (clock event) reasons by the field's last part ("hw_thermal_slowdown"), true
    /// when nvidia-smi says "Active".
    std::vector<std::pair<std::string, bool>> throttle;
};

/// Rows of the query with its header line, in either the canonical (clocks_event_reasons) or
/// the old (clocks_throttle_reasons) field names, with or without units. Columns it does not
/// know are ignored, so the full `--query-gpu` capture of an exporter parses too; rows whose
/// field count differs from the header's, or without a numeric index, are skipped.
[[nodiscard]] std::vector<SmiHealth> parse_smi_health(std::string_view csv);

/// One `NVRM: Xid (PCI:0000:01:00): 79, ...` line of the kernel log.
struct XidEvent {
    std::string device; ///< as the driver prints it, "0000:01:00" (domain:bus:device)
    int xid = 0;
};
/// Every Xid line in a kernel log (journalctl -k, dmesg or syslog; any prefix), in order.
/// Lines without a numeric code are skipped.
[[nodiscard]] std::vector<XidEvent> parse_xid_events(std::string_view log);

/// One counter of `nvidia-smi nvlink -e`: "\t Link 3: CRC Errors: 0" under "GPU 0: ...".
struct NvlinkErrorCount {
    int gpu = 0;
    std::string uuid; ///< from the GPU line, "" when it has none
    int link = 0;
    std::string counter; ///< "replay", "recovery", "crc": the name before "Errors", lower case
    double value = 0;
};
/// Counters whose value is a number; "N/A" and lines of other shapes are skipped.
[[nodiscard]] std::vector<NvlinkErrorCount> parse_nvlink_errors(std::string_view output);

} // namespace gpuprov
