#pragma once
// Which TensorRT build to install: every package of a TensorRT release carries one version
// "<trt>-1+cudaX.Y" (deb; rpm: "<trt>-1.cudaX.Y"), one build per CUDA minor NVIDIA built it with.
#include <gpuprov/matrix.hpp>
#include <gpuprov/repo.hpp>
#include <gpuprov/version.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpuprov::steps {

/// The CUDA release a package version was built for: "10.4.0.26-1+cuda12.6" and
/// "10.4.0.26-1.cuda12.6" give 12.6; nullopt when the version carries no cuda tag.
[[nodiscard]] std::optional<DottedVersion> cuda_build_of(std::string_view version);

/// Whether an installed or offered TensorRT version fits: it starts with the profile's
/// `tensorrt.version` ("10" matches 10.x, "10.4" matches 10.4.x) and is built for the profile's
/// CUDA major at a release not newer than the profile's.
[[nodiscard]] bool tensorrt_build_fits(std::string_view version, std::string_view trt_prefix,
                                       const DottedVersion& cuda);

/// The version to pin every package to: of `anchor`'s versions that fit, the newest TensorRT
/// and, within it, the highest +cudaX.Y build. nullopt when none fits.
[[nodiscard]] std::optional<std::string> pick_tensorrt(const PackageIndex& index,
                                                       std::string_view anchor,
                                                       std::string_view trt_prefix,
                                                       const DottedVersion& cuda);

} // namespace gpuprov::steps
