// A driver installed by NVIDIA's .run installer. It leaves nvidia-installer (and its
// nvidia-uninstall link) in /usr/bin, its log in /var/log/nvidia-installer.log, and its libraries
// (libnvidia-ml.so.<version>, ...) in the distro's library directory with no package owning them.
// Installing the packaged driver over it is the conflict NVIDIA's driver installation guide warns
// about ("uninstall the runfile installation first": `nvidia-installer --uninstall`).
#include <gpuprov/facts.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

const char* const kInstallers[] = {"/usr/bin/nvidia-uninstall", "/usr/bin/nvidia-installer"};
const char* const kLibDirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                "/usr/lib64", "/usr/lib"};
constexpr std::string_view kMl = "libnvidia-ml.so.";

/// "550.90.07" from "libnvidia-ml.so.550.90.07"; nullopt for the soname link "libnvidia-ml.so.1".
std::optional<std::string> library_version(std::string_view name) {
    if (!starts_with(name, kMl)) {
        return std::nullopt;
    }
    const auto v = name.substr(kMl.size());
    if (v.find('.') == std::string_view::npos) {
        return std::nullopt;
    }
    for (const char c : v) {
        if (c != '.' && (c < '0' || c > '9')) {
            return std::nullopt;
        }
    }
    return std::string(v);
}

/// A package carries the driver at `version` when its version contains it ("550.90.07-1",
/// "550.90.07-0ubuntu1", "3:550.90.07-1.el9"): the libraries are then the package's.
bool packaged(const std::map<std::string, std::string>& packages, const std::string& version) {
    for (const auto& [name, v] : packages) {
        if (v.find(version) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

std::optional<std::string> parse_installer_log_version(std::string_view log) {
    for (const auto& line : lines(log)) {
        const std::string_view marker = "installer version: ";
        if (starts_with(line, marker)) {
            const auto v = trim(std::string_view(line).substr(marker.size()));
            if (!v.empty()) {
                return std::string(v);
            }
        }
    }
    return std::nullopt;
}

std::optional<RunfileDriver>
detect_runfile_driver(const System& sys, const std::map<std::string, std::string>& packages) {
    RunfileDriver found;
    for (const char* path : kInstallers) {
        if (sys.exists(path)) {
            found.evidence.push_back(std::string(path) + " (the runfile's installer) exists");
            break;
        }
    }
    for (const char* dir : kLibDirs) {
        for (const auto& name : sys.list_dir(dir)) {
            const auto version = library_version(name);
            if (version && !packaged(packages, *version)) {
                found.version = *version;
                found.evidence.push_back(std::string(dir) + "/" + name +
                                         " belongs to no installed package");
            }
        }
    }
    if (found.evidence.empty()) {
        return std::nullopt;
    }
    // The log alone may outlive an uninstall; with other evidence it names the version.
    if (const auto log = sys.read_file("/var/log/nvidia-installer.log")) {
        if (const auto v = parse_installer_log_version(*log)) {
            found.evidence.push_back("/var/log/nvidia-installer.log: installer version " + *v);
            if (found.version.empty()) {
                found.version = *v;
            }
        }
    }
    return found;
}

} // namespace gpuprov
