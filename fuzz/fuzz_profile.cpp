// A profile as text through the whole loader (YAML, extends, schema, matrix checks): any input
// either loads or is refused with ProfileError; anything else escaping is a finding. The source
// sits in a directory that does not exist, so a relative `extends:` reads no host file.
#include "fuzz_input.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        (void)gpuprov::load_profile_text(gpuprov::fuzz::text(data, size),
                                         "/nonexistent/gpuprov-fuzz/profile.yaml",
                                         gpuprov::Matrix::builtin());
    } catch (const gpuprov::ProfileError&) {
        // the refusal bad input must get
    }
    return 0;
}
