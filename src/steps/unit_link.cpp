#include "unit_link.hpp"

#include <fmt/format.h>
#include <gpuprov/units.hpp>

namespace gpuprov::steps {

namespace {

std::string wants_link(std::string_view unit, std::string_view target) {
    return fmt::format("/etc/systemd/system/{}.wants/{}", target, unit);
}

/// The packaged copies are one file on merged-/usr hosts, reached either way.
bool same_packaged(const std::string& a, const std::string& b, std::string_view unit) {
    const auto lib = "/lib/systemd/system/" + std::string(unit);
    const auto usr = "/usr/lib/systemd/system/" + std::string(unit);
    return (a == lib || a == usr) && (b == lib || b == usr);
}

} // namespace

std::string unit_link_problem(const System& sys, std::string_view unit, std::string_view target) {
    std::string expected;
    for (const char* dir :
         {"/etc/systemd/system/", "/lib/systemd/system/", "/usr/lib/systemd/system/"}) {
        if (sys.exists(dir + std::string(unit))) {
            expected = dir + std::string(unit);
            break;
        }
    }
    const auto link = wants_link(unit, target);
    const auto points_at = sys.read_link(link);
    if (!points_at) {
        return sys.exists(link) ? link + " is not a symbolic link" : "no wants link " + link;
    }
    if (expected.empty()) {
        return fmt::format("{} has no unit file", unit);
    }
    const auto got = points_at->string();
    if (got != expected && !same_packaged(got, expected, unit)) {
        return fmt::format("{} points at {}, not {}", link, got, expected);
    }
    return {};
}

void ensure_unit_enabled(System& sys, std::string_view unit, bool start, std::string_view target) {
    if (unit_link_problem(sys, unit, target).empty()) {
        return;
    }
    const auto link = wants_link(unit, target);
    if (sys.read_link(link) || sys.exists(link)) {
        sys.remove_file(link);
    }
    enable_unit(sys, unit, start, target);
}

} // namespace gpuprov::steps
