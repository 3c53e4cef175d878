#!/usr/bin/env bash
# e2e-exclusive: changes what the shared mirror serves; runs alone (run.sh)
# A plan saved for change review (`plan --out`) and carried out as reviewed (`apply --plan`),
# issue 20 item 1. The review is saved while the mirror serves the debian12 index of yesterday
# (branch 550 without its newest build, $E2E_DRIVER_VERSION); then NVIDIA "publishes" that
# build (the fault is cleared). apply --plan refuses, exit 1, naming the repository whose signed
# index changed and the driver packages at both versions, and changes nothing. A plan saved
# again and applied unchanged converges, and dpkg installed exactly the packages, at exactly the
# versions, that the saved plan's transactions promised (dpkg.log compared).
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
scenario_begin clean

host_state() {
    (cd "$ROOT" && find etc usr/share/keyrings usr/local var/lib/dpkg var/lib/apt \
        -printf '%p %s %m %T@\n' | LC_ALL=C sort)
}
SAVED=/root/reviewed-plan.json
mirror_fault 'compute/cuda/repos/debian12/x86_64/InRelease$' file:yesterday/InRelease \
    'compute/cuda/repos/debian12/x86_64/Packages$' file:yesterday/Packages \
    'compute/cuda/repos/debian12/x86_64/Packages\.gz$' file:yesterday/Packages.gz
gp plan "$PROFILE_IN_ROOT" --out "$SAVED"
expect_rc "plan --out against yesterday's index" 0
assert_file "the saved plan" "$ROOT$SAVED"
assert_schema saved-plan "$ROOT$SAVED"
assert_grep "plan --out says how to apply it" "apply --plan $SAVED" "$GP_STDERR"
check "the saved plan: format_version 1, the profile, yesterday's 550 build" "$E2E_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format_version"] == 1 and d["kind"] == "gpuprov-saved-plan", d.get("format_version")
assert d["profile"] == sys.argv[2], d["profile"]
assert any(l.split()[:3] == ["install", "nvidia-driver-550", sys.argv[3] + "-1"]
           for l in d["promise"]), d["promise"]
assert "cuda" in d["indexes"] and d["indexes"]["cuda"].startswith("sha256:")
' "$ROOT$SAVED" "$PROFILE_IN_ROOT" "$E2E_DRIVER_OLDER"

# NVIDIA publishes the newest build: the reviewed plan is no longer what apply would do.
mirror_clear_faults
before=$(host_state)
gp apply --plan "$SAVED"
expect_rc "apply --plan after the mirror published a newer build" 1
assert_grep "refusal: the plan is stale, nothing changed" "saved plan $SAVED is stale, nothing was changed" "$GP_STDERR"
assert_grep "refusal names the repository whose signed index changed" "repository cuda: its signed index changed" "$GP_STDERR"
assert_grep "refusal names the driver at yesterday's build" "- install +nvidia-driver-550 +$E2E_DRIVER_OLDER-1.* \(saved\)" "$GP_STDERR"
assert_grep "refusal names the driver at the new build" "\+ install +nvidia-driver-550 +$E2E_DRIVER_VERSION-1.* \(now\)" "$GP_STDERR"
assert_no_pkg nvidia-driver-550
after=$(host_state)
if [[ "$after" == "$before" ]]; then pass "the refused apply changed nothing"; else
    fail "the refused apply changed the host: $(diff <(echo "$before") <(echo "$after") | head -n 20)"
fi

# The log (issue 20 item 3): a start and an end line for the run, one line per HTTP request.
LOGF=$ROOT/var/log/gpuprov.log
assert_grep "log: the refused run's start line" "start: .*gpuprov apply --plan $SAVED \(pid [0-9]+, uid 0\)" "$LOGF"
assert_grep "log: its end line with the exit code" "end: exit 1 in [0-9.]+ s" "$LOGF"
assert_grep "log: one line per HTTP request: URL, status, bytes, time, attempt" \
    "GET https://127\.0\.0\.1:$MIRROR_PORT/compute/cuda/repos/debian12/x86_64/InRelease -> HTTP 200, [0-9]+ bytes in [0-9.]+ s \(attempt 1 of [0-9]+\)" "$LOGF"

# Reviewed again, applied unchanged: exactly the saved transaction.
gp plan "$PROFILE_IN_ROOT" --out "$SAVED"
expect_rc "plan --out again" 0
assert_schema saved-plan "$ROOT$SAVED"
: >"$ROOT/var/log/dpkg.log"
gp apply --plan "$SAVED"
expect_rc "apply --plan of the fresh review" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after apply --plan" 0
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
# What dpkg installed or upgraded ("DATE TIME install|upgrade NAME:ARCH OLD NEW"; trigger
# processing, "status installed libc-bin", is no package change) against the saved
# transactions' install/upgrade actions ("install NAME VERSION [(held)]").
installed=$(awk '$3 == "install" || $3 == "upgrade" {sub(/:.*/, "", $4); print $4, $6}' "$ROOT/var/log/dpkg.log" | sort -u)
promised=$("$E2E_PYTHON" -c '
import json, re, sys
for line in json.load(open(sys.argv[1]))["promise"]:
    m = re.match(r"\s+(install|upgrade)\s+(\S+)\s+(?:\S+ -> )?(\S+)", line)
    if m:
        print(m.group(2), m.group(3))
' "$ROOT$SAVED" | sort -u)
log "saved plan promised $(wc -l <<<"$promised") package installs; dpkg installed $(wc -l <<<"$installed")"
assert_eq "dpkg installed exactly the saved transaction" "$promised" "$installed"
scenario_end
