// `nvidia-smi nvlink -e`. Every count is exported as a Prometheus counter
// (gpuprov_nvlink_errors_total), so a value is a finite, non-negative number; it belongs to a
// GPU line seen before it (index >= 0), and each input line yields one count at most.
#include "fuzz_input.hpp"

#include <cmath>
#include <gpuprov/gpu_health.hpp>
#include <gpuprov/strings.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using gpuprov::fuzz::require;
    const auto input = gpuprov::fuzz::text(data, size);
    const auto counts = gpuprov::parse_nvlink_errors(input);
    require(counts.size() <= gpuprov::lines(input).size(), "one count per line at most");
    for (const auto& c : counts) {
        require(c.gpu >= 0, "a count belongs to a GPU line");
        require(!c.counter.empty(), "the counter is named");
        require(std::isfinite(c.value) && c.value >= 0, "a counter is finite and not negative");
    }
    return 0;
}
