#!/usr/bin/env bash
# e2e-timeout: 600
# EL: gpuprov, dnf and rpm are SIGKILLed while an rpm scriptlet runs (power cut, OOM killer):
# rpm's lock and dnf's rpmdb_lock.pid are left behind with a dead pid. The next apply converges,
# verify passes, rpm -Va is clean and no package is installed twice.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

touch "$ROOT/tmp/e2e-slow" # cuda-toolkit-12-4's %post now announces itself and sleeps 8 s
GP_STDOUT=$OUT/killed.stdout
GP_STDERR=$OUT/killed.stderr
in_root "$ROOT" 300 gpuprov apply "$PROFILE_IN_ROOT" --yes >"$GP_STDOUT" 2>"$GP_STDERR" &
bg=$!
if wait_for 240 "cuda-toolkit-12-4 %post to start" test -s "$ROOT/tmp/e2e-slow-started"; then
    sleep 1
    log "killing every process in the root: $(procs_in_root | paste -sd' ')"
    kill_procs_in_root || fail "processes survived kill -9"
    wait "$bg" 2>/dev/null || true
    pass "gpuprov killed during the slow %post"
else
    fail "the slow %post never started (apply exited early?)"
    tail -n 30 "$GP_STDERR" >&2 || true
    kill_procs_in_root || true
    wait "$bg" 2>/dev/null || true
fi
rm -f "$ROOT/tmp/e2e-slow"
log "after the kill: cuda-toolkit-12-4 '$(rpm_evr cuda-toolkit-12-4)'; dnf lock pid file: $(cat "$ROOT/var/lib/dnf/rpmdb_lock.pid" 2>/dev/null || echo none)"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "re-apply after kill -9" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after re-apply" 0
assert_el_converged
scenario_end
