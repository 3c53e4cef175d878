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

/// The bundle load_cli_profile opened for this run, as ApplyOptions::bundle_dir/bundle_key
/// carry it to the resume unit: its directory (a FILE.tar's extracted copy) and the key's
/// fingerprint. Both empty when the run uses no bundle.
struct BundleInUse {
    std::string dir;
    std::string key;
};
[[nodiscard]] BundleInUse bundle_in_use();

void add_bundle_command(CLI::App& app, const GlobalOptions& opts, int& exit_code);

} // namespace gpuprov::cli
