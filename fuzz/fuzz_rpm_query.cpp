// The output of rpm -qa --qf <kRpmQueryFormat>, and the dependency walk over what it gave.
#include "fuzz_input.hpp"

#include <gpuprov/package_db.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto db = gpuprov::parse_rpm_query(gpuprov::fuzz::text(data, size));
    for (const auto& p : db.records()) {
        (void)gpuprov::installed_requires(db, p.name);
    }
    return 0;
}
