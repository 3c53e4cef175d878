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

std::optional<std::uint64_t> mib(std::string_view v) {
    auto d = number(v);
    // 2^64 and above do not convert (undefined behaviour; fuzz/fuzz_smi_query found "1e55").
    if (!d || *d < 0 || *d >= 18446744073709551616.0) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(*d);
}

std::optional<bool> enabled(std::string_view v) {
    return nvidia_detail::smi_enabled(v);
}

std::string text(std::string_view v) {
    return is_smi_sentinel(v) ? std::string() : std::string(v);
}

} // namespace

std::vector<std::string> smi_query_argv() {
    return {"nvidia-smi", "--query-gpu=" + std::string(kSmiQueryFields),
            "--format=csv,noheader,nounits"};
}

std::vector<SmiGpu> parse_smi_query(std::string_view csv) {
    std::vector<SmiGpu> gpus;
    for (const auto& line : lines(csv)) {
        // GPU names never contain commas, so a plain split is exact for this field list.
        auto raw = split(line, ',');
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
        g.uuid = text(f[1]);
        g.name = text(f[2]);
        g.bus_id = text(f[3]);
        g.driver_version = text(f[4]);
        g.memory_total_mib = mib(f[5]);
        g.memory_used_mib = mib(f[6]);
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
