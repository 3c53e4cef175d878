#include <algorithm>
#include <chrono>
#include <gpuprov/dkms.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {
// dkms lives in /usr/sbin (Debian, Ubuntu, EL); /sbin and /usr/bin on older or merged-/usr
// layouts. Without it there is nothing to ask, and that is not an error.
constexpr const char* kDkmsPaths[] = {"/usr/sbin/dkms", "/usr/bin/dkms", "/sbin/dkms"};
} // namespace

std::vector<DkmsEntry> nvidia_entries(std::vector<DkmsEntry> all) {
    std::erase_if(all, [](const DkmsEntry& e) { return !starts_with(e.module, "nvidia"); });
    return all;
}

const DkmsEntry* installed_for(const std::vector<DkmsEntry>& entries, const std::string& kernel) {
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const DkmsEntry& e) {
        return e.kernel == kernel && starts_with(e.state, "installed");
    });
    return it == entries.end() ? nullptr : &*it;
}

std::vector<DkmsEntry> nvidia_dkms_status(const System& sys, bool log_output) {
    const bool have = std::any_of(std::begin(kDkmsPaths), std::end(kDkmsPaths),
                                  [&](const char* p) { return sys.exists(p); });
    if (!have) {
        return {};
    }
    // dkms status reads every module's tree; 60 s covers a slow disk with many kernels.
    const auto r = sys.query({.argv = {"dkms", "status"},
                              .timeout = std::chrono::seconds{60},
                              .log_output = log_output});
    if (!r.ok()) {
        return {};
    }
    return nvidia_entries(parse_dkms_status(r.out));
}

} // namespace gpuprov
