// What the smoke tests print: the CUDA program's and the PyTorch probe's "gpuprov-smoke" lines
// and nccl-tests' output, each parser on the same input. Counts are never negative (the CUDA
// device count is checked for it), every device and error comes from its own tagged line, the
// wrong-row count of all_reduce_perf is bounded by the rows and the bandwidth is a number.
#include "fuzz_input.hpp"

#include <cmath>
#include <gpuprov/smoke.hpp>
#include <gpuprov/strings.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using gpuprov::fuzz::require;
    const auto input = gpuprov::fuzz::text(data, size);
    const auto n_lines = gpuprov::lines(input).size();

    const auto cuda = gpuprov::parse_cuda_smoke(input);
    require(!cuda.device_count || *cuda.device_count >= 0, "the device count is not negative");
    require(cuda.devices.size() + cuda.errors.size() <= n_lines,
            "one device or error per line at most");

    const auto nccl = gpuprov::parse_all_reduce_perf(input);
    require(!nccl.wrong_rows ||
                (*nccl.wrong_rows >= 0 && static_cast<std::size_t>(*nccl.wrong_rows) <= n_lines),
            "wrong rows are counted among the lines");
    require(!nccl.avg_bus_bandwidth || std::isfinite(*nccl.avg_bus_bandwidth),
            "the bus bandwidth is a finite number");

    const auto torch = gpuprov::parse_torch_smoke(input);
    require(torch.torch_missing || torch.missing_text.empty(),
            "an ImportError text only with torch missing");
    return 0;
}
