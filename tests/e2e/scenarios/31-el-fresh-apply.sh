#!/usr/bin/env bash
# e2e-timeout: 480
# EL: a fresh Rocky 9 host, 4x A100, no nouveau: apply converges in one run with real dnf and rpm
# and verify passes. Repositories are .repo files with gpgcheck=1 and repo_gpgcheck=1 keyed to the
# pinned key; the driver is cv-train's, branch 580's open module stream (580-open) at its newest
# build, with kernel-devel for the running kernel and EPEL's dkms; the closure is versionlocked,
# with the versionlock plugin preflight installed from BaseOS (a stock image lacks it).
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
el_scenario_begin clean
# The --json documents of a real run validate against docs/schemas (issue 20 item 2).
schemas_before_apply

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on a fresh EL host" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after apply" 0

FPR=$(mirror_fingerprint)
for name in cuda container-toolkit; do
    KEY=/etc/pki/rpm-gpg/gpuprov-$name.asc
    REPO=$ROOT/etc/yum.repos.d/gpuprov-$name.repo
    assert_eq "$name key holds exactly the mirror key" "$FPR" "$(keyring_fprs "$KEY" | paste -sd,)"
    assert_file "$name .repo" "$REPO"
    assert_grep "$name .repo: one section [gpuprov-$name]" "^\[gpuprov-$name\]$" "$REPO"
    assert_grep "$name .repo: gpgcheck=1" '^gpgcheck=1$' "$REPO"
    assert_grep "$name .repo: repo_gpgcheck=1" '^repo_gpgcheck=1$' "$REPO"
    assert_grep "$name .repo: gpgkey is the pinned key file" "^gpgkey=file://$KEY$" "$REPO"
done
assert_grep "cuda .repo: baseurl on the mirror, rhel9 slug" \
    "^baseurl=https://127\.0\.0\.1:$MIRROR_PORT/compute/cuda/repos/rhel9/x86_64/?$" "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_grep "container-toolkit .repo: the rpm layout" \
    "^baseurl=https://127\.0\.0\.1:$MIRROR_PORT/libnvidia-container/stable/rpm/x86_64/?$" "$ROOT/etc/yum.repos.d/gpuprov-container-toolkit.repo"
check "no --nogpgcheck anywhere in gpuprov's log" bash -c "! grep -q -- '--nogpgcheck' '$ROOT/var/log/gpuprov.log'"
check "the pinned key is in rpm's keyring (imported by dnf from gpgkey=)" \
    grep -qi "^gpg-pubkey-${FPR: -8}-" <(in_root "$ROOT" 10 rpm -q gpg-pubkey)

assert_el_converged
assert_rpm kernel-headers "${SIM_KERNEL%.x86_64}"
locked=$(versionlock_list)
printf '%s\n' "$locked" >"$OUT/versionlock.list"
for p in $(el_driver_closure); do
    check "versionlock holds $p at $EL_DRIVER_EVR" grep -qxF "$p-$EL_DRIVER_EVR.*" <<<"$locked"
done
check "versionlock never holds the container toolkit" bash -c "! grep -q container <<<'$locked'"

assert_nvcc_on_path 13.0 13.0.88

BL=$ROOT/etc/modprobe.d/blacklist-nouveau.conf
assert_grep "nouveau blacklisted" '^blacklist nouveau$' "$BL"
assert_grep "dracut rebuilt the running kernel's initramfs with the blacklist" '^blacklist nouveau$' \
    "$ROOT/boot/initramfs-$SIM_KERNEL.img"
assert_grep "docker runtime configured by nvidia-ctk" '"nvidia-container-runtime"' "$ROOT/etc/docker/daemon.json"

LOG=$ROOT/var/log/gpuprov.log
# shellcheck disable=SC2016 # backquotes are gpuprov's log format
assert_grep "log: a dnf transaction with exit code and duration" \
    '^[0-9T:.+-]+ gpuprov\[[0-9]+\] run=[0-9a-f]{8} info: run `dnf .*` -> exit 0 in [0-9]+\.[0-9]{3} s$' "$LOG"
# shellcheck disable=SC2016
assert_grep "log: the refresh of gpuprov's repository alone" 'run `dnf .*makecache .*--repo gpuprov-cuda` -> exit 0' "$LOG"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode after apply: nothing to do" 0
schemas_after_apply
scenario_end
