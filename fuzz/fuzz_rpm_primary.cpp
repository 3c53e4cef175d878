// rpm-md primary.xml (and primary.xml.gz through gunzip, with a small cap so a gzip bomb is a
// refusal, not an out-of-memory).
#include "fuzz_input.hpp"

#include <gpuprov/repo.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = gpuprov::fuzz::text(data, size);
    constexpr std::size_t cap = 1u << 20;
    if (const auto xml = gpuprov::gunzip(input, cap)) {
        gpuprov::fuzz::require(xml->size() <= cap, "gunzip honours max_bytes");
        (void)gpuprov::parse_primary_xml(*xml);
    }
    for (const auto& r : gpuprov::parse_primary_xml(input)) {
        gpuprov::fuzz::require(!r.name.empty() && !r.version.empty() && r.architecture != "src",
                               "source rpms and nameless packages are skipped");
    }
    return 0;
}
