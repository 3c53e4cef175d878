// The NVIDIA kernel module that is loaded now (not what is installed: after a package upgrade
// the two differ until reboot, which is exactly what doctor needs to see).
#include "detectors.hpp"

#include <algorithm>
#include <cctype>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

/// "580.142", "515.76", "34.1.1": digits with at least one dot, nothing else.
bool is_version_token(std::string_view token) {
    bool dot = false;
    bool digit_before = false;
    for (const char c : token) {
        if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
            digit_before = true;
        } else if (c == '.' && digit_before) {
            dot = true;
            digit_before = false;
        } else {
            return false;
        }
    }
    return dot && digit_before;
}

std::optional<std::string> first_version_token(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) {
            ++i;
        }
        auto end = i;
        while (end < s.size() && std::isspace(static_cast<unsigned char>(s[end])) == 0) {
            ++end;
        }
        if (end > i && is_version_token(s.substr(i, end - i))) {
            return std::string(s.substr(i, end - i));
        }
        i = end;
    }
    return std::nullopt;
}

} // namespace

std::optional<LoadedDriver> parse_proc_driver_version(std::string_view content) {
    for (const auto& line : lines(content)) {
        if (!starts_with(line, "NVRM version:")) {
            continue;
        }
        // The version is the first number after "Module"; the build date and host that follow
        // also contain digits, and the arch before it ("x86_64") must not match either.
        const auto module = line.find("Module");
        if (module == std::string::npos) {
            return std::nullopt;
        }
        const auto version = first_version_token(std::string_view(line).substr(module + 6));
        if (!version) {
            return std::nullopt;
        }
        LoadedDriver driver;
        driver.version = *version;
        driver.open_module = line.find("Open Kernel Module") != std::string::npos;
        return driver;
    }
    return std::nullopt;
}

namespace facts_detail {

std::optional<LoadedDriver> read_loaded_driver(const System& sys) {
    if (const auto proc = sys.read_file("/proc/driver/nvidia/version")) {
        if (auto driver = parse_proc_driver_version(*proc)) {
            return driver;
        }
    }
    // Only the version is published here; open_module stays false because sysfs does not say.
    if (const auto sys_version = sys.read_file("/sys/module/nvidia/version")) {
        const auto version = trim(*sys_version);
        if (is_version_token(version)) {
            LoadedDriver driver;
            driver.version = std::string(version);
            return driver;
        }
    }
    return std::nullopt;
}

} // namespace facts_detail

} // namespace gpuprov
