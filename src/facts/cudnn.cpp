// cuDNN version from its header, the one place every packaging (deb, rpm, tarball) agrees on.
// The three CUDNN_MAJOR/MINOR/PATCHLEVEL defines are read instead of CUDNN_VERSION because that
// is an expression whose multiplier changed in cuDNN 9 (x1000 before, x10000 since).
#include "detectors.hpp"

#include <array>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

std::optional<int> define_value(const std::string& line, std::string_view name) {
    auto rest = trim(line);
    if (!starts_with(rest, "#")) {
        return std::nullopt;
    }
    rest = trim(rest.substr(1));
    if (!starts_with(rest, "define")) {
        return std::nullopt;
    }
    rest = trim(rest.substr(6));
    if (!starts_with(rest, name) || rest.size() == name.size() ||
        (rest[name.size()] != ' ' && rest[name.size()] != '\t')) {
        return std::nullopt;
    }
    const auto value = parse_int(rest.substr(name.size()));
    if (!value || *value < 0 || *value > 1'000'000) {
        return std::nullopt;
    }
    return static_cast<int>(*value);
}

} // namespace

std::optional<InstalledCudnn> parse_cudnn_header(std::string_view content) {
    std::optional<int> major;
    std::optional<int> minor;
    std::optional<int> patch;
    for (const auto& line : lines(content)) {
        if (!major) {
            major = define_value(line, "CUDNN_MAJOR");
        }
        if (!minor) {
            minor = define_value(line, "CUDNN_MINOR");
        }
        if (!patch) {
            patch = define_value(line, "CUDNN_PATCHLEVEL");
        }
    }
    if (!major || !minor) {
        return std::nullopt;
    }
    InstalledCudnn cudnn;
    cudnn.major = *major;
    cudnn.minor = *minor;
    cudnn.patch = patch.value_or(0);
    return cudnn;
}

namespace facts_detail {

std::optional<InstalledCudnn> read_cudnn(const System& sys) {
    // Debian packages install versioned headers per multiarch triplet, with
    // /usr/include/cudnn_version.h as an alternatives link to the active one; rpm and tarball
    // installs put it in /usr/include or under the CUDA tree.
    static const std::array<const char*, 6> candidates{
        "/usr/include/cudnn_version.h",
        "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
        "/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",
        "/usr/include/aarch64-linux-gnu/cudnn_version_v9.h",
        "/usr/include/aarch64-linux-gnu/cudnn_version_v8.h",
        "/usr/local/cuda/include/cudnn_version.h",
    };
    for (const char* path : candidates) {
        const auto content = read_resolved(sys, path);
        if (!content) {
            continue;
        }
        if (auto cudnn = parse_cudnn_header(*content)) {
            cudnn->header = path;
            return cudnn;
        }
    }
    return std::nullopt;
}

} // namespace facts_detail

} // namespace gpuprov
