#!/usr/bin/env bash
# (f) Someone else (unattended-upgrades on first boot) holds the dpkg locks for 20 s: apply
# waits for them with a message instead of failing, then converges.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

HOLD=20
ready=$OUT/lock-ready
"$E2E_PYTHON" "$E2E_DIR/lib/dpkg_lock_holder.py" "$ROOT" "$HOLD" "$ready" &
holder=$!
trap 'kill "$holder" 2>/dev/null || true' EXIT
wait_for 10 "dpkg lock holder ready" test -s "$ready" || { fail "lock holder did not start"; scenario_end; }
t0=$SECONDS

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply while the dpkg lock is held for ${HOLD}s" 0
wait "$holder" 2>/dev/null || true
held_for=$((SECONDS - t0))
log "apply finished ${GP_SECONDS}s after start; lock held ${HOLD}s"
if ((GP_SECONDS >= HOLD - 3)); then pass "apply waited for the lock (${GP_SECONDS}s >= ~${HOLD}s)"; else
    fail "apply finished in ${GP_SECONDS}s, before the lock was released (held ${HOLD}s; ${held_for}s elapsed)"; fi
check "stderr says it is waiting for the dpkg lock" grep -Eqi 'wait.*lock|lock.*(held|wait)' "$GP_STDERR"
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
