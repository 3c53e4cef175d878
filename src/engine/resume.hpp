#pragma once
#include <gpuprov/system.hpp>
#include <set>
#include <string>

namespace gpuprov::detail {

inline constexpr const char* kResumeUnit = "gpuprov-resume.service";
inline constexpr const char* kResumeUnitPath = "/etc/systemd/system/gpuprov-resume.service";
/// Where apply installs the profile file the resume unit reads (installed_profile_path()): a
/// directory of its own, so the copy never lands on the operator's /etc/gpuprov/<name>.yaml
/// (a profile that `extends:` that file inherits its name).
inline constexpr const char* kInstalledProfileDir = "/etc/gpuprov/resume/";
/// The first line of every copy gpuprov writes there: a file without it is not gpuprov's and
/// is never overwritten.
inline constexpr const char* kResumeProfileHeader =
    "# gpuprov's copy of the profile gpuprov-resume.service runs after the reboot; replaced by "
    "the next apply that needs one.\n";

/// What the resume unit runs after the reboot: the same apply as the run that asked for it.
struct ResumeCommand {
    std::string gpuprov_path; ///< units_gpuprov_path(): never ./build/gpuprov or /proc/self/exe
    std::string profile; ///< a built-in name or the profile installed under kInstalledProfileDir
    std::set<std::string> only;
    std::set<std::string> skip;
    bool reboot_if_needed = false;
    bool allow_remove = false;
    /// The run is part of `gpuprov upgrade`: the unit runs `gpuprov upgrade PROFILE`, which
    /// finishes the apply, verifies and puts the node back (docs/upgrade.md).
    bool upgrade = false;
    /// Resume `gpuprov rollback` (which finds its closure and profile in the journal), not
    /// apply; `profile` and the filters are then not used.
    bool rollback = false;
    /// The offline bundle the run installs from (ApplyOptions::bundle_dir/bundle_key): the
    /// resumed run gets `--from-bundle DIR --bundle-key FINGERPRINT` and checks it again.
    std::string bundle_dir;
    std::string bundle_key;
};

/// The unit's ExecStart= value, e.g. `/usr/local/bin/gpuprov apply /etc/gpuprov/resume/x.yaml
/// --yes --reboot never --skip monitoring`. Throws HostError when a path or id has characters
/// other than [A-Za-z0-9._/-] (systemd would split or expand them), when the binary is not
/// /usr/bin/gpuprov or /usr/local/bin/gpuprov, or the profile neither a built-in name nor a
/// file directly under kInstalledProfileDir, or a bundle directory that is not absolute or a
/// bundle key that is not a 40-digit fingerprint.
[[nodiscard]] std::string resume_exec_start(const ResumeCommand& cmd);

/// Throws HostError when the resume unit could not name this bundle (ResumeCommand::bundle_dir,
/// bundle_key): apply checks it before it changes anything, resume_exec_start again.
void check_resume_bundle(const std::string& dir, const std::string& key);

/// Installs and enables the oneshot unit that re-runs apply on the next boot; throws HostError
/// (require_trusted) when someone other than root could have written its binary or profile.
void install_resume_unit(System& sys, const ResumeCommand& cmd);
/// Disables and removes it (after a run that finished); no-op when absent.
void remove_resume_unit(System& sys);

/// After a run that failed or was blocked: removes the resume unit, so the same failing apply
/// (with its --allow-remove) does not run again at every boot, and returns what the journal
/// says about it: the unit's own command, to run by hand once the cause is fixed. Empty when
/// there was no unit.
[[nodiscard]] std::string retire_resume_unit(System& sys);

/// Installs `text` (the profile a run read, its `extends:` chain resolved) as the copy the
/// resume unit reads, installed_profile_path(`name`) with kResumeProfileHeader, and returns
/// that path; writes nothing when the run read that very file (`profile_arg`) or the copy is
/// current. Throws HostError when a file gpuprov did not write (no header) is there.
[[nodiscard]] std::string install_resume_profile(System& sys, const std::string& name,
                                                 const std::string& text,
                                                 const std::string& profile_arg);

} // namespace gpuprov::detail
