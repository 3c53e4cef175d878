#!/usr/bin/env bash
# e2e-timeout: 600
# EL: holds that hold. `dnf versionlock` locks the driver's whole closure at the versions the plan
# printed (nvidia-open's requires pull in the open kmod, nvidia-driver and its -libs,
# kmod-common, modprobe, persistenced, libnvidia-*), so dnf then refuses to move any of it to the
# stream's older build (and would, without the locks), and an unlocked closure package makes the
# plan pending until apply locks it again.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan" 0
planned=$(planned_holds "$GP_STDOUT")
log "planned held packages: $(paste -sd, <<<"$planned")"
for p in nvidia-open kmod-nvidia-open-dkms; do
    check "plan marks $p held at $EL_DRIVER_EVR" grep -qx "$p $EL_DRIVER_EVR" <<<"$planned"
done
check "plan never holds the container toolkit" bash -c "! grep -q container <<<'$planned'"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply" 0
locked=$(versionlock_list)
log "versionlock.list: $(paste -sd' ' <<<"$locked")"
for p in $(el_driver_closure); do
    check "versionlock holds $p at $EL_DRIVER_EVR" grep -qxF "$p-$EL_DRIVER_EVR.*" <<<"$locked"
done
assert_eq "versionlock holds nothing else" "$(el_driver_closure | sort)" \
    "$(sed -E 's/-[0-9]+:.*$//' <<<"$locked" | sort -u)"

# dnf refuses to move the locked packages: the branch's older build and the other branch.
for spec in nvidia-driver-3:580.95.05-1.el9 kmod-nvidia-open-dkms-3:580.95.05-1.el9; do
    set +e
    out=$(in_root "$ROOT" 120 dnf --assumeno install "$spec" 2>&1)
    set -e
    check "locked: $spec is filtered out" grep -q 'All matches were filtered out by exclude filtering' <<<"$out"
done
set +e
out=$(in_root "$ROOT" 120 dnf --assumeno downgrade nvidia-driver-cuda 2>&1)
set -e
check "locked: dnf downgrade nvidia-driver-cuda finds nothing it may do" \
    bash -c "! grep -Eq '^ nvidia-driver-cuda +x86_64 +3:580\.95\.05' <<<'$out'"
# ... and the same request without the versionlock plugin resolves: the locks are what stop it.
set +e
out=$(in_root "$ROOT" 120 dnf --disableplugin=versionlock --assumeno install nvidia-driver-3:580.95.05-1.el9 2>&1)
set -e
check "without the locks dnf would downgrade nvidia-driver" grep -Eq '^ nvidia-driver +x86_64 +3:580\.95\.05-1\.el9 ' <<<"$out"

# Drop one closure package's lock behind gpuprov's back: plan is pending, apply locks it again.
check "dnf versionlock delete nvidia-driver-cuda-libs" in_root "$ROOT" 60 dnf versionlock delete nvidia-driver-cuda-libs
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan with an unlocked closure package: changes pending" 2
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply locks it again" 0
check "nvidia-driver-cuda-libs locked again" grep -qxF "nvidia-driver-cuda-libs-$EL_DRIVER_EVR.*" <<<"$(versionlock_list)"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan after re-locking: nothing to do" 0
scenario_end
