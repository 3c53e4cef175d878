#pragma once
// A runfile-installed driver blocks the driver step: packages installed over it fight its
// unowned libraries and module (NVIDIA's driver installation guide: uninstall it first). With
// `driver.replace_runfile: true` and the .run installer's own uninstaller on the host, the step
// removes it with that uninstaller before the package transaction instead.
#include <gpuprov/step.hpp>
#include <optional>

namespace gpuprov::steps {

/// The command that removes the runfile driver when the profile allows it
/// (`driver.replace_runfile`) and the installer the .run file left in /usr/bin is there;
/// nullopt otherwise (no runfile driver, not allowed, or no uninstaller to run).
[[nodiscard]] std::optional<Command> runfile_uninstall_command(const StepContext& ctx,
                                                               const System& sys);

/// Blocks `r` with the evidence and the fix when the facts show a runfile driver that this run
/// may not or cannot remove, and returns true. When it may and can, plans the uninstall as the
/// step's first change, marks `r` pending and returns false.
bool block_on_runfile_driver(const StepContext& ctx, const System& sys, CheckResult& r);

/// Runs runfile_uninstall_command, if any, and proves the runfile driver gone. Throws
/// HostError with the uninstaller's output (and its log's tail) when it fails, and naming what
/// is left when it succeeded but the facts still see a runfile driver.
void remove_runfile_driver(const StepContext& ctx, System& sys);

} // namespace gpuprov::steps
