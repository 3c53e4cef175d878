#pragma once
// `gpuprov doctor`: the known ways an NVIDIA host breaks (docs/doctor.md), each diagnosed from
// the real tools' output with its cause and fix. Read-only.
#include <gpuprov/facts.hpp>
#include <gpuprov/forecast.hpp>
#include <gpuprov/journal.hpp>
#include <gpuprov/profile.hpp>
#include <gpuprov/system.hpp>
#include <string>
#include <vector>

namespace gpuprov {

class Matrix;

/// What was run or read, and the lines of it that show the problem.
struct Evidence {
    std::string command; ///< "nvidia-smi --query-gpu=...", or a file path
    std::string excerpt;
};

struct Finding {
    std::string id;       ///< stable: "nvml-mismatch", "dkms-module-missing", ...
    std::string severity; ///< "error" (something is broken now) or "warning"
    std::string summary;  ///< one line
    std::vector<Evidence> evidence;
    std::string fix;
};

struct DoctorOptions {
    int temperature_alert_c = 85;
    const Profile* profile = nullptr; ///< optional: enables the checks against its CUDA version
    const Matrix* matrix = nullptr;   ///< optional: the driver floor of each CUDA release
    const Journal* journal = nullptr; ///< optional: a reboot recorded as pending by apply
    /// Judges the nvidia module's signer under Secure Boot: module_trusted_at_boot
    /// (gpuprov/forecast.hpp), the secure-boot step's comparison, which lives with the steps
    /// (a library above this one) and so is passed in by the callers, `gpuprov doctor` and the
    /// driver step's reboot evidence. nullptr: the signer is not judged and no Secure Boot
    /// finding is made (never a second, weaker judgement).
    std::optional<SignatureJudgement> (*judge_signature)(const System&, const HostFacts&,
                                                         const std::string& kernel,
                                                         const KernelModule&) = nullptr;
};

/// Every finding, driver problems first. Empty means healthy. Runs probes via sys.query only.
[[nodiscard]] std::vector<Finding> diagnose(const System& sys, const HostFacts& facts,
                                            const DoctorOptions& options);

} // namespace gpuprov
