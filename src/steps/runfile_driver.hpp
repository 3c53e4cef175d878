#pragma once
// A runfile-installed driver blocks the driver step: packages installed over it fight its
// unowned libraries and module (NVIDIA's driver installation guide: uninstall it first).
#include <gpuprov/step.hpp>

namespace gpuprov::steps {

/// Blocks `r` with the evidence and the fix when the facts show a runfile driver; returns
/// whether it did.
bool block_on_runfile_driver(const StepContext& ctx, CheckResult& r);

} // namespace gpuprov::steps
