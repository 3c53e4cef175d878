// The health query (ECC counters, throttle reasons), mapped by its header. Rows come only after
// a header naming "index", one per line at most; ECC counts are finite numbers (smi_number's
// contract) and a sentinel is never kept as a UUID; a throttle reason is a named reason, not
// one of the bitmask columns.
#include "fuzz_input.hpp"
#include "smi_values.hpp"

#include <cmath>
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/strings.hpp>

namespace {

bool finite_or_absent(const std::optional<double>& v) {
    return !v || std::isfinite(*v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using gpuprov::fuzz::require;
    const auto input = gpuprov::fuzz::text(data, size);
    const auto rows = gpuprov::parse_smi_health(input);
    const auto n_lines = gpuprov::lines(input).size();
    require(rows.empty() || rows.size() < n_lines, "rows follow a header line");
    for (const auto& r : rows) {
        require(finite_or_absent(r.ecc_corrected_volatile) &&
                    finite_or_absent(r.ecc_corrected_aggregate) &&
                    finite_or_absent(r.ecc_uncorrected_volatile) &&
                    finite_or_absent(r.ecc_uncorrected_aggregate),
                "ECC counts are finite");
        require(!gpuprov::nvidia_detail::is_smi_sentinel(r.uuid) || r.uuid.empty(),
                "a sentinel is not a UUID");
        for (const auto& [reason, active] : r.throttle) {
            (void)active;
            require(!reason.empty() && reason != "supported" && reason != "active",
                    "a throttle reason is named and not a bitmask");
        }
    }
    return 0;
}
