// /etc/os-release (and /usr/lib/os-release): parse_os_release, then classify_os as detection
// does. The profile spelling and repo slug name a directory on NVIDIA's server, so they must
// stay plain words whatever the file holds.
#include "fuzz_input.hpp"

#include <gpuprov/facts.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto os = gpuprov::parse_os_release(gpuprov::fuzz::text(data, size));
    gpuprov::classify_os(os);
    for (const char c : os.repo_slug) {
        gpuprov::fuzz::require(c != '/' && c != '.' && c != '\n', "repo_slug is one path word");
    }
    (void)gpuprov::end_of_life_warning(os, "2026-12-01");
    return 0;
}
