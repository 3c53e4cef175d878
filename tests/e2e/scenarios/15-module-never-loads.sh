#!/usr/bin/env bash
# (o) A module that never loads: the host runs a backports kernel (6.12) the driver's DKMS
# package does not support (BUILD_EXCLUSIVE_KERNEL), so DKMS skips the build, the install
# succeeds and `modprobe nvidia` fails. With --reboot if-needed gpuprov reboots once; after that
# boot the driver step fails with modprobe's error and DKMS's status, and no boot after it
# reboots again: gpuprov never reboots twice for one step. The failed resumed run removes the
# resume unit and names the command to resume by hand, so nothing repeats at the next boot.
set -euo pipefail
SIM_KERNEL=6.12.12+bpo-amd64
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
reboots() { grep -c '^systemctl reboot$' "$ROOT/var/log/e2e-systemctl.log" 2>/dev/null || true; }

gp apply "$PROFILE_IN_ROOT" --yes --reboot if-needed
expect_rc "first apply: the module does not load, a reboot may help" 3
assert_eq "one reboot requested" 1 "$(reboots)"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_eq "DKMS skipped the build (added, not installed)" "nvidia/$E2E_DRIVER_VERSION: added" "$(in_root "$ROOT" 10 dkms status)"
STATE=$ROOT/var/lib/gpuprov/state.json
assert_grep "journal keeps modprobe's error as evidence" "Module nvidia not found in directory /lib/modules/6\.12\.12\+bpo-amd64" "$STATE"
assert_file "resume unit written" "$ROOT/etc/systemd/system/gpuprov-resume.service"

UNIT=/etc/systemd/system/gpuprov-resume.service
WANTS=/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service
# Boot 2: the resume unit's run fails. It must remove the unit (a failed apply, with its
# --allow-remove, must not repeat at every boot) and say how to resume by hand.
rootfs_reboot "$ROOT"
check "boot 2: still no NVIDIA module" test ! -e "$ROOT/proc/driver/nvidia/version"
execstart=$(sed -n 's/^ExecStart=//p' "$ROOT$UNIT" 2>/dev/null | head -n 1)
[[ -n "$execstart" ]] || { fail "boot 2: no resume unit"; scenario_end; }
read -r -a argv <<<"$execstart"
check "boot 2: the unit keeps --reboot if-needed" grep -q -- '--reboot if-needed' <<<"$execstart"
gp "${argv[@]:1}"
expect_rc "boot 2: the resumed run fails instead of rebooting again" 1
assert_eq "boot 2: still exactly one reboot in all" 1 "$(reboots)"
assert_eq "boot 2: journal result" failed "$(journal_result)"
assert_grep "boot 2: the message says the reboot did not help" "reboot did not help" <(gp_output)
assert_grep "boot 2: the message carries modprobe's error" "modprobe: FATAL: Module nvidia not found" <(gp_output)
assert_grep "boot 2: the message carries DKMS's status" "dkms status: nvidia/$E2E_DRIVER_VERSION: added" <(gp_output)
assert_no_file "boot 2: the failed run removed the resume unit" "$ROOT$UNIT"
assert_no_file "boot 2: and its wants link" "$ROOT$WANTS"
check "boot 2: the journal says how to resume by hand, with the unit's own command" grep -qF \
    "resume by hand: sudo $execstart" "$ROOT/var/lib/gpuprov/state.json"

# Boot 3: nothing runs by itself (the stand-in boot starts every enabled unit); the operator runs
# the command the journal named, which fails the same way and neither reboots nor re-enables.
rootfs_reboot "$ROOT"
assert_no_file "boot 3: no resume unit to run" "$ROOT$UNIT"
gp "${argv[@]:1}"
expect_rc "boot 3: the operator's run fails the same way" 1
assert_grep "boot 3: the reboot did not help" "reboot did not help" <(gp_output)
assert_eq "boot 3: still exactly one reboot in all" 1 "$(reboots)"
assert_no_file "boot 3: no resume unit written again" "$ROOT$UNIT"
check "driver step failed in the journal" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = {x["id"]: x for x in d["steps"]}["driver"]
sys.exit(0 if s["status"] == "failed" and "modprobe" in s["message"] else 1)' "$STATE"
gp status
expect_rc "status says the last run failed" 1
assert_grep "status shows the failed driver step" "driver.*failed|failed.*driver" <(gp_output)
scenario_end
