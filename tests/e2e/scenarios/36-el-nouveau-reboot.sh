#!/usr/bin/env bash
# e2e-timeout: 600
# EL: nouveau holds the GPUs: apply blacklists it, rebuilds the initramfs with dracut (on EL
# nouveau loads from the initramfs, so a blacklist only in /etc/modprobe.d does not stop it),
# installs the driver, stops with exit 3 (reboot-required) and enables gpuprov-resume.service;
# after the "reboot" the unit's own ExecStart finishes the job and removes the unit.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin nouveau

UNIT=/etc/systemd/system/gpuprov-resume.service
WANTS=/etc/systemd/system/multi-user.target.wants/gpuprov-resume.service

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with nouveau loaded" 3
assert_eq "journal result" reboot-required "$(journal_result)"
assert_grep "nouveau blacklisted" '^blacklist nouveau$' "$ROOT/etc/modprobe.d/blacklist-nouveau.conf"
assert_grep "the running kernel's initramfs carries the blacklist (dracut --force ran after it)" \
    '^blacklist nouveau$' "$ROOT/boot/initramfs-$SIM_KERNEL.img"
assert_file "resume unit written" "$ROOT$UNIT"
check "resume unit enabled" test -L "$ROOT$WANTS"
assert_rpm nvidia-driver "$EL_DRIVER_EVR"
check "no driver module before the reboot" test ! -e "$ROOT/proc/driver/nvidia/version"

el_reboot
check "nouveau is gone after the reboot" bash -c "! grep -q '^nouveau ' '$ROOT/proc/modules'"
check "the open module DKMS built loads at boot" grep -q "Open Kernel Module for x86_64  $EL_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
run_resume_unit "$UNIT"
assert_no_file "resume unit removed when done" "$ROOT$UNIT"
assert_no_file "resume unit's wants symlink removed" "$ROOT$WANTS"
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after resume" 0
assert_el_converged
scenario_end
