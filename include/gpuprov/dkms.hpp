#pragma once
// The NVIDIA modules DKMS knows: one reader for the driver step (per-kernel builds), the
// next-boot forecast and doctor, so all three agree on what "built for a kernel" means.

#include <gpuprov/nvidia_smi.hpp>
#include <gpuprov/system.hpp>
#include <string>
#include <vector>

namespace gpuprov {

/// The entries of `all` whose module is NVIDIA's ("nvidia", "nvidia-current", "nvidia-open"…).
[[nodiscard]] std::vector<DkmsEntry> nvidia_entries(std::vector<DkmsEntry> all);

/// The entry of `entries` installed for kernel `kernel` (DKMS's "installed", with any trailing
/// note such as "(WARNING! Diff between built and installed module!)"), or null: a module only
/// "built" is not in /lib/modules and does not load at boot.
[[nodiscard]] const DkmsEntry* installed_for(const std::vector<DkmsEntry>& entries,
                                             const std::string& kernel);
const DkmsEntry* installed_for(std::vector<DkmsEntry>&& entries,
                               const std::string& kernel) = delete;

/// `dkms status`, NVIDIA's entries only; empty where dkms is not installed (precompiled or
/// Canonical-signed modules) or does not answer. `log_output` false for read-only probes
/// (forecast, plan) whose output would only repeat in the log.
[[nodiscard]] std::vector<DkmsEntry> nvidia_dkms_status(const System& sys, bool log_output = true);

} // namespace gpuprov
