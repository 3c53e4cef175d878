// The health query: ECC counters and clock throttle reasons, mapped by the CSV header.
#include "smi_values.hpp"

#include <algorithm>
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

using nvidia_detail::smi_number;

// The throttle reason of a column, under either name nvidia-smi has used for it.
std::optional<std::string> throttle_reason(std::string_view column) {
    for (const std::string_view prefix : {"clocks_event_reasons.", "clocks_throttle_reasons."}) {
        if (starts_with(column, prefix)) {
            const auto reason = column.substr(prefix.size());
            // The bitmasks are not reasons of their own, nor is a bare prefix.
            if (reason.empty() || reason == "supported" || reason == "active") {
                return std::nullopt;
            }
            return std::string(reason);
        }
    }
    return std::nullopt;
}

void set_field(SmiHealth& h, const std::string& column, std::string_view value) {
    if (column == "uuid") {
        h.uuid = nvidia_detail::is_smi_sentinel(value) ? "" : std::string(value);
    } else if (column == "ecc.mode.current") {
        h.ecc_enabled = nvidia_detail::smi_enabled(value);
    } else if (column == "ecc.errors.corrected.volatile.total") {
        h.ecc_corrected_volatile = smi_number(value);
    } else if (column == "ecc.errors.corrected.aggregate.total") {
        h.ecc_corrected_aggregate = smi_number(value);
    } else if (column == "ecc.errors.uncorrected.volatile.total") {
        h.ecc_uncorrected_volatile = smi_number(value);
    } else if (column == "ecc.errors.uncorrected.aggregate.total") {
        h.ecc_uncorrected_aggregate = smi_number(value);
    } else if (const auto reason = throttle_reason(column)) {
        if (value == "Active" || value == "Not Active") {
            h.throttle.emplace_back(*reason, value == "Active");
        }
    }
}

} // namespace

std::vector<std::string> smi_health_argv() {
    return {"nvidia-smi", "--query-gpu=" + std::string(kSmiHealthFields), "--format=csv,nounits"};
}

std::vector<SmiHealth> parse_smi_health(std::string_view csv) {
    std::vector<SmiHealth> out;
    std::vector<std::string> columns;
    for (const auto& line : lines(csv)) {
        const auto raw = split(line, ',');
        if (columns.empty()) {
            // The header: the first line that names the index column (a warning line such as
            // "WARNING: infoROM is corrupted" may come before it).
            for (const auto& r : raw) {
                columns.push_back(nvidia_detail::csv_column_name(r));
            }
            if (std::find(columns.begin(), columns.end(), "index") == columns.end()) {
                columns.clear();
            }
            continue;
        }
        if (raw.size() != columns.size()) {
            continue;
        }
        SmiHealth h;
        bool indexed = false;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const auto value = trim(raw[i]);
            if (columns[i] == "index") {
                const auto index = parse_int32(value);
                indexed = index.has_value();
                h.index = index.value_or(0);
            } else {
                set_field(h, columns[i], value);
            }
        }
        if (indexed) {
            out.push_back(std::move(h));
        }
    }
    return out;
}

} // namespace gpuprov
