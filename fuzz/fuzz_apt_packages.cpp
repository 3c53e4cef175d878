// A repository's Packages index (deb822), then the index gpuprov builds and queries from it.
#include "fuzz_input.hpp"

#include <gpuprov/repo.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto records = gpuprov::parse_packages_file(gpuprov::fuzz::text(data, size));
    for (const auto& r : records) {
        gpuprov::fuzz::require(!r.name.empty() && !r.version.empty(),
                               "records without Package or Version are skipped");
    }
    const gpuprov::PackageIndex index(std::move(records));
    for (const auto& name : index.names_with_prefix("")) {
        const auto versions = index.versions(name);
        gpuprov::fuzz::require(!versions.empty() && versions.front() == index.newest(name),
                               "newest is the first of versions");
        (void)index.newest_with_prefix(name, "5");
    }
    return 0;
}
