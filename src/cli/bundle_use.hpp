#pragma once
// --from-bundle / --bundle-key of plan, apply and verify, and the bundle command
// (docs/air-gapped.md).
#include "cli_common.hpp"

#include <gpuprov/matrix.hpp>
#include <gpuprov/profile.hpp>
#include <string>

namespace gpuprov::cli {

struct BundleArgs {
    std::string from; ///< DIR or FILE.tar written by `gpuprov bundle`
    std::string key;  ///< the bundle key's fingerprint
};
void add_bundle_options(CLI::App* cmd, BundleArgs& args);
/// Makes `args` the bundle every later load_cli_profile() of this run points the profile at.
void use_bundle(const BundleArgs& args);
/// load_profile, then, with a bundle in use: the bundle opened and checked (key, signed
/// manifest, every file's hash) before anything changes, refused when it lacks what this host
/// needs, and the profile's repositories pointed at it.
[[nodiscard]] Profile load_cli_profile(const GlobalOptions& opts, const std::string& profile_arg,
                                       const Matrix& matrix);

void add_bundle_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);

} // namespace gpuprov::cli
