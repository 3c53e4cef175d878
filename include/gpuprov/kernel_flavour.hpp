#pragma once
// The flavour of an Ubuntu kernel release, which names Canonical's per-flavour packages
// (linux-image-<flavour>, linux-modules-nvidia-<series>-<flavour>). One parser for the driver
// step, which picks those packages, and the forecast, which names them as fixes.
#include <string>
#include <string_view>

namespace gpuprov {

/// "generic" from "6.8.0-50-generic", "aws" from "6.8.0-1015-aws", "generic-64k" from
/// "6.8.0-50-generic-64k"; empty when the release is not <version>-<abi>-<flavour>.
[[nodiscard]] std::string ubuntu_kernel_flavour(std::string_view kernel);

} // namespace gpuprov
