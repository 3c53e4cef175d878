#include "cli_common.hpp"

#include <cstdlib>
#include <gpuprov/local_system.hpp>
#include <unistd.h>

namespace gpuprov::cli {

bool GlobalOptions::color() const {
    return !no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(1) != 0;
}

System& host_system(const GlobalOptions& opts) {
    static LocalSystem sys(opts.root);
    return sys;
}

} // namespace gpuprov::cli
