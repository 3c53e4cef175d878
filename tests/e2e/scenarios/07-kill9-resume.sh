#!/usr/bin/env bash
# (g) gpuprov, apt and dpkg are SIGKILLed while a package's postinst runs (power cut, OOM
# killer); the next apply converges: dpkg repaired, verify passes.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

touch "$ROOT/tmp/e2e-slow"      # cuda-toolkit-12-4's postinst now announces itself and sleeps 8 s
GP_STDOUT=$OUT/killed.stdout
GP_STDERR=$OUT/killed.stderr
in_root "$ROOT" 300 gpuprov apply "$PROFILE_IN_ROOT" --yes >"$GP_STDOUT" 2>"$GP_STDERR" &
bg=$!
if wait_for 240 "cuda-toolkit-12-4 postinst to start" test -s "$ROOT/tmp/e2e-slow-started"; then
    sleep 1
    log "killing every process in the root: $(procs_in_root | paste -sd' ')"
    kill_procs_in_root || fail "processes survived kill -9"
    wait "$bg" 2>/dev/null || true
    pass "gpuprov killed during the slow postinst"
else
    fail "the slow postinst never started (apply exited early?)"
    tail -n 30 "$GP_STDERR" >&2 || true
    kill_procs_in_root || true
    wait "$bg" 2>/dev/null || true
fi
rm -f "$ROOT/tmp/e2e-slow"
# shellcheck disable=SC2016 # dpkg-query format
status=$(in_root "$ROOT" 10 dpkg-query -W -f='${Status}' cuda-toolkit-12-4 2>/dev/null || true)
log "after the kill: cuda-toolkit-12-4 status '$status'; dpkg --audit: $(dpkg_audit | head -n 3 | paste -sd' ')"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "re-apply after kill -9" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after re-apply" 0
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_no_tmp_files
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
