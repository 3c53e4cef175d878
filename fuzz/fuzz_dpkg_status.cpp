// /var/lib/dpkg/status: the package database and the installed-version map facts keep, and
// the dependency walk run on what was parsed.
#include "fuzz_input.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/package_db.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = gpuprov::fuzz::text(data, size);
    const auto db = gpuprov::parse_dpkg_db(input);
    for (const auto& p : db.records()) {
        (void)gpuprov::installed_requires(db, p.name);
    }
    (void)gpuprov::parse_dpkg_status(input);
    return 0;
}
