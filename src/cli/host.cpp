#include "cli_common.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/local_system.hpp>
#include <string_view>
#include <unistd.h>

namespace gpuprov::cli {

bool GlobalOptions::color() const {
    // no-color.org: NO_COLOR "present and not an empty string" turns colour off; an empty one
    // does not. A dumb terminal cannot show it either.
    const char* no_color_env = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    return !no_color && (no_color_env == nullptr || *no_color_env == '\0') &&
           (term == nullptr || std::string_view(term) != "dumb") && ::isatty(1) != 0;
}

bool foreign_root(const GlobalOptions& opts) {
    return !opts.root.empty() && std::filesystem::path(opts.root) != "/" &&
           std::filesystem::weakly_canonical(opts.root) != "/";
}

System& host_system(const GlobalOptions& opts) {
    std::error_code ec;
    if (!std::filesystem::is_directory(opts.root, ec)) {
        // A typo must not silently inspect an empty view of nothing.
        throw UsageError(fmt::format("--root {}: {}; --root must name an existing directory "
                                     "(a mounted image or a fixture tree)",
                                     opts.root,
                                     std::filesystem::exists(opts.root, ec) ? "not a directory"
                                                                            : "no such directory"));
    }
    static LocalSystem sys(opts.root);
    return sys;
}

} // namespace gpuprov::cli
