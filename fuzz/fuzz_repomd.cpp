// rpm-md repodata/repomd.xml: the primary entry, whose location must stay inside the
// repository (documented: nullopt when absolute or with "..").
#include "fuzz_input.hpp"

#include <gpuprov/repo.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto e = gpuprov::repomd_entry(gpuprov::fuzz::text(data, size), "primary");
    if (e) {
        gpuprov::fuzz::require(e->sha256.size() == 64, "sha256 has 64 hex digits");
        gpuprov::fuzz::require(!e->location.empty() && e->location.front() != '/' &&
                                   e->location.find("..") == std::string::npos,
                               "location stays inside the repository");
    }
    return 0;
}
