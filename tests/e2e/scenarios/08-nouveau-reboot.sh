#!/usr/bin/env bash
# (h) nouveau holds the GPUs: apply blacklists it, installs the driver, stops with exit 3
# (reboot-required) and enables gpuprov-resume.service; after the "reboot" the unit's own
# ExecStart finishes the job and removes the unit. The unit reruns the same apply from stable
# places: the installed binary, the profile copied under /etc/gpuprov/resume/, and the run's
# filters (this run skips monitoring, and the resumed run must too). The profile apply ran
# extends the operator's /etc/gpuprov/e2e-debian12.yaml and so inherits its name: the copy must
# never land on that file. The journal records the boot id of the reboot request; the "reboot"
# changes it.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin nouveau

UNIT=/etc/systemd/system/gpuprov-resume.service
WANTS=/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service

BOOT_ID=/proc/sys/kernel/random/boot_id
INSTALLED_PROFILE=/etc/gpuprov/resume/e2e-debian12.yaml # the profile's name: e2e-debian12
OPERATORS_PROFILE=/etc/gpuprov/e2e-debian12.yaml        # the operator's, named like the profile
METRICS_TIMER=/etc/systemd/system/gpuprov-metrics.timer
mkdir -p "$ROOT$(dirname "$BOOT_ID")"
echo 3f0b6a1c-0000-4000-8000-00000000b001 >"$ROOT$BOOT_ID"

# The user's profile path may not survive the reboot (/tmp); the unit must not depend on it. It
# extends the operator's profile, whose name (e2e-debian12) it inherits.
cp "$ROOT$PROFILE_IN_ROOT" "$ROOT$OPERATORS_PROFILE"
cp "$ROOT$OPERATORS_PROFILE" "$OUT/operators-profile.yaml"
printf 'extends: %s\n' "$OPERATORS_PROFILE" >"$ROOT/tmp/p.yaml"
gp apply /tmp/p.yaml --yes --skip monitoring
expect_rc "apply with nouveau loaded" 3
assert_eq "journal result" reboot-required "$(journal_result)"
assert_grep "journal has the boot id of the reboot request" \
    '"reboot_boot_id": "3f0b6a1c-0000-4000-8000-00000000b001"' "$ROOT/var/lib/gpuprov/state.json"
assert_grep "nouveau blacklisted" '^blacklist nouveau$' "$ROOT/etc/modprobe.d/blacklist-nouveau.conf"
assert_file "resume unit written" "$ROOT$UNIT"
assert_grep "resume unit ExecStart: installed binary, installed profile, the run's filters" \
    "^ExecStart=/usr/local/bin/gpuprov apply $INSTALLED_PROFILE --yes --reboot never --skip monitoring\$" "$ROOT$UNIT"
check "resume unit never runs a build tree or /proc/self/exe" \
    bash -c "! grep -Eq '/proc/self/exe|/build/|/tmp/p.yaml' '$ROOT$UNIT'"
assert_file "profile installed for the resume unit" "$ROOT$INSTALLED_PROFILE"
check "the operator's profile it extends is untouched" cmp -s "$OUT/operators-profile.yaml" "$ROOT$OPERATORS_PROFILE"
check "the copy starts with gpuprov's header" grep -q "^# gpuprov's copy of the profile" <(head -n 1 "$ROOT$INSTALLED_PROFILE")
check "the copy is the profile apply ran, its extends: chain resolved" bash -c \
    "grep -Eq '^name: \"?e2e-debian12\"?\$' '$ROOT$INSTALLED_PROFILE' && ! grep -q '^extends:' '$ROOT$INSTALLED_PROFILE'"
check "installed profile is 0644 root:root" test "$(stat -c '%a %u %g' "$ROOT$INSTALLED_PROFILE")" = "644 0 0"
assert_no_file "monitoring skipped" "$ROOT$METRICS_TIMER"
# Not blocked by the driver's reboot: the other steps' configuration is done already.
assert_file "tuning configured before the reboot" \
    "$ROOT/etc/systemd/system/nvidia-persistenced.service.d/gpuprov.conf"
if [[ -L "$ROOT$WANTS" ]]; then
    target=$(readlink "$ROOT$WANTS")
    case "$target" in
        /*) resolved=$ROOT$target ;;
        *) resolved=$ROOT$(dirname "$WANTS")/$target ;;
    esac
    check "resume unit enabled (wants symlink -> the unit)" test "$(readlink -f "$resolved")" = "$(readlink -f "$ROOT$UNIT")"
else
    fail "resume unit not enabled: no symlink $WANTS"
fi
check "no driver module before the reboot" test ! -e "$ROOT/proc/driver/nvidia/version"

# --- the reboot: blacklist honoured, nouveau gone, the NVIDIA module loads --------------------
rm -f "$ROOT/tmp/p.yaml"
rootfs_reboot "$ROOT"
check "the module DKMS built loads at boot" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
run_resume_unit "$UNIT"
check "the operator's profile is still untouched after the resumed run" cmp -s "$OUT/operators-profile.yaml" "$ROOT$OPERATORS_PROFILE"
assert_no_file "resume unit removed when done" "$ROOT$UNIT"
assert_no_file "resume unit's wants symlink removed" "$ROOT$WANTS"
assert_eq "journal result" "done" "$(journal_result)"
assert_no_file "the resumed run kept --skip monitoring" "$ROOT$METRICS_TIMER"
gp verify "$PROFILE_IN_ROOT" --skip monitoring
expect_rc "verify --skip monitoring after resume" 0
# verify judges every step's checks: monitoring was skipped, so the full verify says so.
gp verify "$PROFILE_IN_ROOT" --json
expect_rc "full verify flags the skipped monitoring" 1
check "only monitoring's checks fail" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
bad = {c["step"] for c in d["checks"] if not c["passed"] and not c["skipped"]}
ids = {c["id"] for c in d["checks"]}
sys.exit(0 if bad == {"monitoring"} and "nouveau.blacklisted" in ids and "cuda-repo.source" in ids else 1)' "$GP_STDOUT"
assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_pkg cuda-toolkit-12-4 12.4.1-1
scenario_end
