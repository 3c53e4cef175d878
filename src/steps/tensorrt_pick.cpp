#include "tensorrt_pick.hpp"

#include <gpuprov/strings.hpp>

namespace gpuprov::steps {

std::optional<DottedVersion> cuda_build_of(std::string_view version) {
    // The tag sits in the Debian revision / rpm release: after the last '-'.
    const auto dash = version.rfind('-');
    if (dash == std::string_view::npos) {
        return std::nullopt;
    }
    const auto release = version.substr(dash + 1);
    for (const char* marker : {"+cuda", ".cuda"}) {
        const auto at = release.find(marker);
        if (at != std::string_view::npos) {
            const auto tag = release.substr(at + 5);
            const auto parsed = DottedVersion::parse(tag);
            if (parsed && parsed->parts.size() == 2) {
                return parsed;
            }
        }
    }
    return std::nullopt;
}

bool tensorrt_build_fits(std::string_view version, std::string_view trt_prefix,
                         const DottedVersion& cuda) {
    if (!starts_with(version, std::string(trt_prefix) + ".")) {
        return false;
    }
    const auto built = cuda_build_of(version);
    return built && built->major() == cuda.major() && !(cuda < *built);
}

std::optional<std::string> pick_tensorrt(const PackageIndex& index, std::string_view anchor,
                                         std::string_view trt_prefix, const DottedVersion& cuda) {
    // versions() is newest first in the package manager's order: the newest TensorRT comes
    // first, and within one TensorRT its builds from the highest +cudaX.Y down.
    for (const auto* rec : index.versions(anchor)) {
        if (tensorrt_build_fits(rec->version, trt_prefix, cuda)) {
            return rec->version;
        }
    }
    return std::nullopt;
}

} // namespace gpuprov::steps
