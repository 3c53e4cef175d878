// Secure Boot from the UEFI variable itself: mokutil may not be installed, and its exit status
// does not tell the states apart.
#include "detectors.hpp"

#include <string>

namespace gpuprov {

std::optional<bool> parse_secure_boot_efivar(std::string_view bytes) {
    // efivarfs prefixes every variable with its 4-byte attribute mask; the value follows.
    if (bytes.size() < 5) {
        return std::nullopt;
    }
    switch (static_cast<unsigned char>(bytes[4])) {
    case 0:
        return false;
    case 1:
        return true;
    default:
        return std::nullopt;
    }
}

namespace facts_detail {

std::optional<bool> read_secure_boot(const System& sys) {
    if (!sys.exists("/sys/firmware/efi")) {
        return std::nullopt; // legacy BIOS boot: there is no Secure Boot to speak of
    }
    const std::string efivars = "/sys/firmware/efi/efivars";
    const auto var = sys.read_file(efivars + "/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c");
    if (!var) {
        // An empty efivars means efivarfs is not mounted: unknown. Variables without SecureBoot
        // among them mean firmware that has no Secure Boot at all: off.
        if (sys.list_dir(efivars).empty()) {
            return std::nullopt;
        }
        return false;
    }
    return parse_secure_boot_efivar(*var);
}

} // namespace facts_detail

} // namespace gpuprov
