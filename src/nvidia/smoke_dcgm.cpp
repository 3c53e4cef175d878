// smoke.dcgm: `dcgmi diag -r 1`, DCGM's quick diagnostic ("Level 1 tests to use as a readiness
// metric": NVIDIA's DCGM diagnostics guide), through the nvidia-dcgm host engine. Run where
// DCGM is installed (/usr/bin/dcgmi) or the profile asks for it (monitoring.dcgm); judged by
// its result table and its exit status both: dcgmi exits with DCGM's negative status as an
// unsigned byte (226 is DCGM_ST_NVVS_ERROR, -30: NVIDIA/DCGM#158), and a table row "Fail" fails
// the test even where the exit status is 0.
#include "probe.hpp"
#include "smoke_parts.hpp"

#include <fmt/format.h>
#include <gpuprov/strings.hpp>

namespace gpuprov::smoke_detail {

bool dcgm_smoke_wanted(const SmokeInput& in, const System& sys) {
    return sys.exists(kDcgmi) || (in.profile.monitoring && in.profile.monitoring->dcgm);
}

SmokeOutcome smoke_dcgm(const SmokeInput& in, System& sys, const GpuGate&) {
    (void)in;
    SmokeOutcome o;
    o.id = "smoke.dcgm";
    if (!sys.exists(kDcgmi)) {
        settle(o, SmokeStatus::failed,
               "the profile sets monitoring.dcgm but /usr/bin/dcgmi is not installed",
               "gpuprov apply PROFILE --only dcgm");
        return o;
    }
    if (refuse_untrusted(o, sys, kDcgmi)) {
        return o;
    }
    Command cmd;
    cmd.cwd = kSmokeCwd;
    cmd.argv = {kDcgmi, "diag", "-r", "1"};
    cmd.timeout = kDcgmTimeout;
    o.command = display_argv(cmd.argv);
    const auto r = sys.run(cmd);
    const auto all = nvidia_detail::output_of(r);
    const auto rep = parse_dcgm_diag(r.out);
    const auto failed = rep.failed();
    if (!failed.empty()) {
        std::vector<std::string> what;
        for (const auto* row : failed) {
            auto line = row->name + ": " + row->result;
            for (const auto& d : row->details) {
                if (!starts_with(d, "GPU")) { // DCGM 4's "GPU0: Fail" lines repeat the result
                    line += " (" + d + ")";
                    break;
                }
            }
            what.push_back(std::move(line));
        }
        o.excerpt = tail_lines(all, 8);
        settle(o, SmokeStatus::failed,
               fmt::format("dcgmi diag -r 1 failed {} check{}: {}", failed.size(),
                           failed.size() == 1 ? "" : "s", join(what, "; ")),
               "fix what the failing checks name (their error text is above), then rerun "
               "`dcgmi diag -r 1`; `dcgmi diag -r 1 -v` shows every check's detail");
        return o;
    }
    if (!r.ok()) {
        o.excerpt = tail_lines(all, 6);
        // dcgmi's own failures are DCGM statuses -1..-n as a byte, not signals.
        const bool dcgm_status =
            !r.timed_out && !r.not_found && !r.interrupted && r.exit_code > 128;
        settle(o, SmokeStatus::failed,
               "dcgmi diag " + (dcgm_status ? fmt::format("exit status {} (DCGM status {})",
                                                          r.exit_code, r.exit_code - 256)
                                            : run_failure(r, kDcgmTimeout)),
               "`systemctl status nvidia-dcgm` and `journalctl -u nvidia-dcgm`: dcgmi needs the "
               "host engine (nv-hostengine) running and the driver loaded");
        return o;
    }
    if (rep.rows.empty()) {
        o.excerpt = tail_lines(all, 6);
        settle(o, SmokeStatus::failed, "no result table in dcgmi diag's output",
               "run " + o.command + " by hand");
        return o;
    }
    o.excerpt = tail_lines(all, 3);
    std::size_t skipped = 0;
    for (const auto& row : rep.rows) {
        skipped += row.result == "Skip" || row.result == "skip" ? 1 : 0;
    }
    o.found = fmt::format("{} check{} passed{}{}", rep.rows.size() - skipped,
                          rep.rows.size() - skipped == 1 ? "" : "s",
                          skipped == 0 ? "" : fmt::format(", {} skipped", skipped),
                          rep.dcgm_version.empty() ? "" : " (DCGM " + rep.dcgm_version + ")");
    settle(o, SmokeStatus::passed);
    return o;
}

} // namespace gpuprov::smoke_detail
