#!/usr/bin/env bash
# e2e-timeout: 900
# (f) Someone else (unattended-upgrades on first boot) holds the dpkg locks: apply waits for them
# with a message instead of failing, then converges. The locks are held until gpuprov is seen
# waiting (its warning on stderr), then released: no fixed hold time that a slow machine could
# outlast before apply even reaches its install.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

ready=$OUT/lock-ready
# The backstop only matters if this script dies: the scenario's own deadline is shorter.
"$E2E_PYTHON" "$E2E_DIR/lib/dpkg_lock_holder.py" "$ROOT" "$ready" 1200 &
holder=$!
trap 'kill "$holder" 2>/dev/null || true' EXIT
wait_for 60 "dpkg lock holder ready" test -s "$ready" || { fail "lock holder did not start"; scenario_end; }

GP_STDOUT=$OUT/apply.stdout
GP_STDERR=$OUT/apply.stderr
in_root "$ROOT" 800 gpuprov apply "$PROFILE_IN_ROOT" --yes >"$GP_STDOUT" 2>"$GP_STDERR" &
apply_pid=$!
# The event, not a guess of how long it takes to get there: gpuprov's own "waiting up to N s for
# /var/lib/dpkg/lock-frontend (held by process P ...)" line, or apply ending without it.
seen_waiting() { grep -Eq 'waiting up to [0-9]+ s for /var/lib/dpkg/lock' "$GP_STDERR"; }
wait_for 700 "apply to wait for the dpkg lock, or to end" \
    bash -c 'grep -Eq "waiting up to [0-9]+ s for /var/lib/dpkg/lock" "$1" || ! kill -0 "$2" 2>/dev/null' _ "$GP_STDERR" "$apply_pid" || true
if seen_waiting; then
    pass "apply waits for the held dpkg lock and says so: $(grep -Eo 'waiting up to .*' "$GP_STDERR" | head -n 1)"
else
    fail "apply never said it was waiting for the dpkg lock"
fi
check "apply is still waiting when the lock is released (it did not fail or go around it)" kill -0 "$apply_pid"
check "nothing was installed while the lock was held" test -z "$(pkg_version cuda-toolkit-12-4)"
kill -TERM "$holder"
if wait "$holder"; then pass "the lock holder released the locks on request"; else fail "the lock holder hit its backstop"; fi

set +e
wait "$apply_pid"
GP_RC=$?
set -e
log "gpuprov apply -> exit $GP_RC (out: $GP_STDOUT)"
expect_rc "apply after the dpkg lock was released" 0
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
