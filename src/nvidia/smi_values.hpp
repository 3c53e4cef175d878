#pragma once
// The value rules every nvidia-smi CSV parser shares: the sentinels it prints instead of a
// value, and numbers with or without a unit suffix.
#include <cmath>
#include <cstdint>
#include <gpuprov/strings.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov::nvidia_detail {

/// nvidia-smi prints these instead of a value; "N/A" without brackets appears in some fields
/// (mig.mode.current on GPUs without MIG, fabric.health.* of R580) and older drivers.
inline bool is_smi_sentinel(std::string_view v) {
    return v.empty() || v == "N/A" || v == "[N/A]" || v == "[Not Supported]" ||
           v == "[Insufficient Permissions]" || v == "[Unknown Error]" || v == "[GPU is lost]" ||
           (v.size() > 2 && v.front() == '[' && v.back() == ']');
}

/// A finite number, or nullopt for a sentinel or text. A unit suffix after a space
/// ("85.12 W", "0 us" of --format=csv without nounits) is dropped.
inline std::optional<double> smi_number(std::string_view v) {
    if (is_smi_sentinel(v)) {
        return std::nullopt;
    }
    if (const auto space = v.find(' '); space != std::string_view::npos) {
        v = v.substr(0, space);
    }
    auto d = parse_double(v);
    if (!d || !std::isfinite(*d)) {
        return std::nullopt;
    }
    return d;
}

/// A size or count as a 64-bit integer; negative, non-finite and 2^64 and above are absent (the
/// conversion would be undefined behaviour; fuzz/fuzz_smi_query found "1e55").
inline std::optional<std::uint64_t> smi_u64(std::optional<double> d) {
    if (!d || *d < 0 || *d >= 18446744073709551616.0) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(*d);
}

/// "28C", "77W", "0MiB", "30%" (the table's and `mig -lgi`'s cells): the number before `unit`;
/// a sentinel, or a value without that unit, is absent.
inline std::optional<double> smi_with_unit(std::string_view v, std::string_view unit) {
    v = trim(v);
    if (v.size() <= unit.size() || v.substr(v.size() - unit.size()) != unit) {
        return std::nullopt;
    }
    return smi_number(v.substr(0, v.size() - unit.size()));
}

/// "71424MiB" → 71424.
inline std::optional<std::uint64_t> smi_mib(std::string_view v) {
    return smi_u64(smi_with_unit(v, "MiB"));
}

/// A text value, empty for a sentinel.
inline std::string smi_text(std::string_view v) {
    return is_smi_sentinel(v) ? std::string() : std::string(v);
}

/// A `--format=csv` header cell's field name: "memory.used [MiB]" → "memory.used".
inline std::string csv_column_name(std::string_view header) {
    header = trim(header);
    if (const auto bracket = header.find(" ["); bracket != std::string_view::npos) {
        header = header.substr(0, bracket);
    }
    return std::string(header);
}

/// "Enabled"/"On" → true, "Disabled"/"Off" → false, anything else nullopt.
inline std::optional<bool> smi_enabled(std::string_view v) {
    if (v == "Enabled" || v == "On") {
        return true;
    }
    if (v == "Disabled" || v == "Off") {
        return false;
    }
    return std::nullopt;
}

} // namespace gpuprov::nvidia_detail
