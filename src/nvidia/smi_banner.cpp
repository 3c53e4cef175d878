#include <cctype>
#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

// The dotted number that follows `label` on `line`, or empty.
std::string version_after(std::string_view line, std::string_view label) {
    const auto pos = line.find(label);
    if (pos == std::string_view::npos) {
        return {};
    }
    auto rest = trim(line.substr(pos + label.size()));
    std::size_t n = 0;
    while (n < rest.size() &&
           (std::isdigit(static_cast<unsigned char>(rest[n])) != 0 || rest[n] == '.')) {
        ++n;
    }
    return std::string(rest.substr(0, n));
}

} // namespace

std::optional<SmiBanner> parse_smi_banner(std::string_view table) {
    for (const auto& line : lines(table)) {
        if (line.find("NVIDIA-SMI ") == std::string::npos) {
            continue;
        }
        SmiBanner b;
        b.smi_version = version_after(line, "NVIDIA-SMI ");
        // R610 renamed the labels: "KMD Version:" and "CUDA UMD Version:".
        b.driver_version = version_after(line, "Driver Version:");
        if (b.driver_version.empty()) {
            b.driver_version = version_after(line, "KMD Version:");
        }
        b.cuda_version = version_after(line, "CUDA Version:");
        if (b.cuda_version.empty()) {
            b.cuda_version = version_after(line, "CUDA UMD Version:");
        }
        if (b.driver_version.empty()) {
            continue;
        }
        return b;
    }
    return std::nullopt;
}

SmiFailure classify_smi_failure(std::string_view output) {
    if (output.find("Driver/library version mismatch") != std::string_view::npos) {
        return SmiFailure::version_mismatch;
    }
    // Matched on the start of the message: some captures wrap it after "driver.".
    if (output.find("couldn't communicate with the NVIDIA driver") != std::string_view::npos ||
        output.find("NVIDIA-SMI has failed because it couldn't communicate") !=
            std::string_view::npos) {
        return SmiFailure::driver_not_loaded;
    }
    return SmiFailure::none;
}

} // namespace gpuprov
