// The one place that decides which gpuprov binary systemd units run, and where profiles the
// resume unit runs are kept.
#include "resume.hpp"

#include <gpuprov/engine.hpp>
#include <gpuprov/error.hpp>

namespace gpuprov {

namespace {
constexpr const char* kPackagedPath = "/usr/bin/gpuprov";
constexpr const char* kLocalPath = "/usr/local/bin/gpuprov";
} // namespace

std::string units_gpuprov_path(const System& sys) {
    // A package owns /usr/bin/gpuprov and keeps it current; anything else is gpuprov's own
    // copy in /usr/local/bin, which apply installs (gpuprov_binary_change).
    return sys.exists(kPackagedPath) ? kPackagedPath : kLocalPath;
}

std::optional<Change> gpuprov_binary_change(const System& sys, const std::string& self_path,
                                            bool changes_pending) {
    if (self_path.empty() || self_path == kLocalPath || units_gpuprov_path(sys) != kLocalPath) {
        return std::nullopt;
    }
    const bool missing = !sys.exists(kLocalPath);
    if (!missing && !changes_pending) {
        return std::nullopt;
    }
    const auto self = sys.read_file(self_path);
    if (!self) {
        return std::nullopt;
    }
    if (!missing && sys.read_file(kLocalPath) == self) {
        return std::nullopt;
    }
    return Change{.kind = Change::Kind::file,
                  .target = kLocalPath,
                  .detail = "install this gpuprov (" + self_path +
                            ") for the systemd units that run gpuprov (mode 0755)"};
}

void install_gpuprov_binary(System& sys, const std::string& self_path) {
    const auto self = sys.read_file(self_path);
    if (!self) {
        throw HostError("cannot read the running gpuprov binary " + self_path +
                        " to install it as " + kLocalPath);
    }
    sys.write_file_atomic(kLocalPath, *self, 0755);
}

std::string installed_profile_path(const std::string& profile_name) {
    std::string safe;
    for (const char c : profile_name) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        safe += plain ? c : '_';
    }
    if (safe.empty() || safe.front() == '.') {
        safe = "profile" + safe;
    }
    return detail::kInstalledProfileDir + safe + ".yaml";
}

} // namespace gpuprov
