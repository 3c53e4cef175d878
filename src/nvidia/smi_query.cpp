#include "smi_values.hpp"

#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

constexpr std::size_t kFieldCount = 13;

using nvidia_detail::is_smi_sentinel;

std::optional<double> number(std::string_view v) {
    return nvidia_detail::smi_number(v);
}

// --format=csv,nounits: a size is a bare number.
std::optional<std::uint64_t> mib_value(std::string_view v) {
    return nvidia_detail::smi_u64(number(v));
}

std::optional<bool> enabled(std::string_view v) {
    return nvidia_detail::smi_enabled(v);
}

} // namespace

std::vector<std::string> smi_query_argv() {
    return {"nvidia-smi", "--query-gpu=" + std::string(kSmiQueryFields),
            "--format=csv,noheader,nounits"};
}

namespace {

// One value of a `--format=csv` row by its column; nvidia-smi heads a column with the field's
// canonical name even when it was asked for by an alias (gpu_name → name).
void set_field(SmiGpu& g, std::string_view column, std::string_view v) {
    if (column == "uuid") {
        g.uuid = nvidia_detail::smi_text(v);
    } else if (column == "name") {
        g.name = nvidia_detail::smi_text(v);
    } else if (column == "pci.bus_id") {
        g.bus_id = nvidia_detail::smi_text(v);
    } else if (column == "driver_version") {
        g.driver_version = nvidia_detail::smi_text(v);
    } else if (column == "memory.total") {
        g.memory_total_mib = mib_value(v);
    } else if (column == "memory.used") {
        g.memory_used_mib = mib_value(v);
    } else if (column == "utilization.gpu") {
        g.utilization_percent = number(v);
    } else if (column == "temperature.gpu") {
        g.temperature_c = number(v);
    } else if (column == "power.draw") {
        g.power_draw_w = number(v);
    } else if (column == "power.limit") {
        g.power_limit_w = number(v);
    } else if (column == "persistence_mode") {
        g.persistence_mode = enabled(v);
    } else if (column == "mig.mode.current") {
        g.mig_enabled = enabled(v);
    } else if (column == "compute_cap") {
        g.compute_cap = nvidia_detail::smi_text(v);
    }
}

// The header of `--format=csv` output: a line that names the columns. Every query gpuprov
// or a person runs names at least one of these.
std::vector<std::string> header_columns(const std::vector<std::string>& raw) {
    std::vector<std::string> columns;
    bool known = false;
    for (const auto& r : raw) {
        columns.push_back(nvidia_detail::csv_column_name(r));
        const auto& c = columns.back();
        known = known || c == "index" || c == "uuid" || c == "name" || c == "pci.bus_id" ||
                c == "driver_version";
    }
    return known ? columns : std::vector<std::string>{};
}

} // namespace

std::vector<SmiGpu> parse_smi_query(std::string_view csv) {
    std::vector<SmiGpu> gpus;
    // With a header (--format=csv), values are mapped by column name and units are dropped;
    // without one, the fields are kSmiQueryFields in order.
    std::vector<std::string> columns;
    for (const auto& line : lines(csv)) {
        // GPU names never contain commas, so a plain split is exact for these fields.
        auto raw = split(line, ',');
        if (columns.empty() && gpus.empty()) {
            columns = header_columns(raw);
            if (!columns.empty()) {
                continue;
            }
        }
        if (!columns.empty()) {
            if (raw.size() != columns.size()) {
                continue;
            }
            SmiGpu g;
            // Without an index column, rows come in index order.
            g.index = static_cast<int>(gpus.size());
            bool indexed = true;
            for (std::size_t i = 0; i < raw.size(); ++i) {
                const auto v = trim(raw[i]);
                if (columns[i] == "index") {
                    const auto index = parse_int32(v);
                    indexed = index.has_value();
                    g.index = index.value_or(0);
                } else {
                    set_field(g, columns[i], v);
                }
            }
            if (indexed) {
                gpus.push_back(std::move(g));
            }
            continue;
        }
        if (raw.size() != kFieldCount) {
            continue;
        }
        std::vector<std::string_view> f;
        for (const auto& r : raw) {
            f.push_back(trim(r));
        }
        const auto index = parse_int32(f[0]);
        if (!index) {
            continue;
        }
        SmiGpu g;
        g.index = *index;
        g.uuid = nvidia_detail::smi_text(f[1]);
        g.name = nvidia_detail::smi_text(f[2]);
        g.bus_id = nvidia_detail::smi_text(f[3]);
        g.driver_version = nvidia_detail::smi_text(f[4]);
        g.memory_total_mib = mib_value(f[5]);
        g.memory_used_mib = mib_value(f[6]);
        g.utilization_percent = number(f[7]);
        g.temperature_c = number(f[8]);
        g.power_draw_w = number(f[9]);
        g.power_limit_w = number(f[10]);
        g.persistence_mode = enabled(f[11]);
        g.mig_enabled = enabled(f[12]);
        gpus.push_back(std::move(g));
    }
    return gpus;
}

} // namespace gpuprov
