#!/usr/bin/env bash
# (h) nouveau holds the GPUs: apply blacklists it, installs the driver, stops with exit 3
# (reboot-required) and enables gpuprov-resume.service; after the "reboot" the unit's own
# ExecStart finishes the job and removes the unit.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin nouveau

UNIT=/etc/systemd/system/gpuprov-resume.service
WANTS=/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with nouveau loaded" 3
assert_eq "journal result" reboot-required "$(journal_result)"
assert_grep "nouveau blacklisted" '^blacklist nouveau$' "$ROOT/etc/modprobe.d/blacklist-nouveau.conf"
assert_file "resume unit written" "$ROOT$UNIT"
assert_grep "resume unit ExecStart" "^ExecStart=/usr/local/bin/gpuprov apply $PROFILE_IN_ROOT --yes --reboot if-needed\$" "$ROOT$UNIT"
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
rootfs_load_nvidia_module "$ROOT"
execstart=$(sed -n 's/^ExecStart=//p' "$ROOT$UNIT" 2>/dev/null | head -n 1)
if [[ -z "$execstart" ]]; then
    fail "no ExecStart to run after the reboot"
    scenario_end
fi
read -r -a argv <<<"$execstart"   # word split only; never evaluated by a shell
check "ExecStart runs the installed gpuprov" test "${argv[0]}" = /usr/local/bin/gpuprov
gp "${argv[@]:1}"
expect_rc "resume unit's ExecStart after the reboot" 0
assert_no_file "resume unit removed when done" "$ROOT$UNIT"
assert_no_file "resume unit's wants symlink removed" "$ROOT$WANTS"
assert_eq "journal result" "done" "$(journal_result)"
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after resume" 0
assert_pkg cuda-drivers-550 550.54.15-1
assert_pkg cuda-toolkit-12-4 12.4.1-1
scenario_end
