#!/usr/bin/env bash
# MIG layout (issue 25, docs/mig.md): the profile asks for 1g.10gb x7 on every GPU. The stand-in
# nvidia-smi keeps an A100's enabled MIG mode pending until a reset, as the real GPU does, so the
# first apply enables it, writes and enables gpuprov-mig.service and stops with exit 3. At the
# simulated reboot the mode takes effect and the boot unit creates the layout before the
# stand-in kubelet and containerd units start (their ExecStart records what `nvidia-smi -L`
# shows them; containerd sorts before gpuprov-mig by name, so only Before= puts it after).
# The resumed apply and verify find the layout; a changed layout is planned as a diff.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

UNIT=/etc/systemd/system/gpuprov-mig.service
RESUME=/etc/systemd/system/gpuprov-resume.service
SEEN=/var/log/e2e-seen
printf 'mig: {mode: enabled, layout: {all: [1g.10gb x7]}}\n' >>"$ROOT$PROFILE_IN_ROOT"

# Stand-ins for the services that must only ever see the MIG devices (what the device plugin and
# slurmd read through NVML): each records nvidia-smi -L at its start.
install -D -m 0755 /dev/stdin "$ROOT/usr/local/bin/e2e-kubelet" <<'SH'
#!/bin/sh
mkdir -p /var/log/e2e-seen
nvidia-smi -L >"/var/log/e2e-seen/${1:-kubelet}" 2>&1
SH
for svc in kubelet containerd; do
    printf '[Unit]\nDescription=e2e stand-in %s\n\n[Service]\nExecStart=/usr/local/bin/e2e-kubelet %s\n\n[Install]\nWantedBy=multi-user.target\n' \
        "$svc" "$svc" >"$ROOT/etc/systemd/system/$svc.service"
    mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
    ln -sf "/etc/systemd/system/$svc.service" "$ROOT/etc/systemd/system/multi-user.target.wants/$svc.service"
done

gp plan "$PROFILE_IN_ROOT" --only mig
check "the plan names the boot unit" grep -q "$UNIT" "$GP_STDOUT"

gp apply "$PROFILE_IN_ROOT" --yes --reboot never --skip monitoring
if [[ "$GP_RC" != 3 ]]; then
    fail "first apply: expected exit 3 (MIG mode pending a GPU reset), got $GP_RC: $(tail -n 5 "$GP_STDERR")"
    scenario_end
fi
pass "first apply stops for the GPU reset MIG mode needs (exit 3)"
assert_file "boot unit written" "$ROOT$UNIT"
assert_grep "boot unit ordered before kubelet, slurmd and the container engines" \
    '^Before=kubelet.service slurmd.service containerd.service docker.service$' "$ROOT$UNIT"
assert_grep "boot unit creates GPU 0's layout with profile ids" \
    '^ExecStart=/usr/bin/nvidia-smi mig -i 0 -cgi 19,19,19,19,19,19,19 -C$' "$ROOT$UNIT"
check "boot unit enabled" test -L "$ROOT/etc/systemd/system/multi-user.target.wants/gpuprov-mig.service"
modes=$(in_root "$ROOT" 30 nvidia-smi --query-gpu=mig.mode.current,mig.mode.pending --format=csv,noheader | head -n 1)
assert_eq "GPU 0's MIG mode is pending, not current, before the reboot" "Disabled, Enabled" "$modes"

# --- reboot: the mode takes effect, the boot unit makes the layout before kubelet/containerd --
rootfs_reboot "$ROOT"
for svc in kubelet containerd; do
    check "$svc saw 7 MIG devices on GPU 0 at its start" \
        test "$(grep -c '^  MIG 1g.10gb' "$ROOT$SEEN/$svc" 2>/dev/null || echo 0)" -ge 7
done
check "boot order: gpuprov-mig before containerd and kubelet" bash -c \
    "grep -n '^boot: start' '$ROOT/var/log/e2e-systemctl.log' | awk -F'start ' '{print \$2}' | tr '\n' ' ' | grep -q 'gpuprov-mig.service.*containerd.service.*kubelet.service\|gpuprov-mig.service.*kubelet.service.*containerd.service'"

if [[ -f "$ROOT$RESUME" ]]; then run_resume_unit "$RESUME"; fi
gp plan "$PROFILE_IN_ROOT" --only mig --detailed-exitcode
expect_rc "after the reboot nothing is pending for mig" 0
gp verify "$PROFILE_IN_ROOT" --only mig
expect_rc "verify: the live layout is the profile's" 0

# --- a changed layout is planned as a diff: destroy, then create ------------------------------
sed -i 's/^mig: .*/mig: {mode: enabled, layout: {all: [3g.40gb x2]}}/' "$ROOT$PROFILE_IN_ROOT"
gp plan "$PROFILE_IN_ROOT" --only mig --detailed-exitcode
expect_rc "a changed layout is pending" 2
check "plan destroys GPU 0's compute instances" grep -q "nvidia-smi mig -i 0 -dci" "$GP_STDOUT"
check "plan destroys GPU 0's GPU instances" grep -q "nvidia-smi mig -i 0 -dgi" "$GP_STDOUT"
check "plan creates the new layout" grep -q "nvidia-smi mig -i 0 -cgi 9,9 -C" "$GP_STDOUT"
gp verify "$PROFILE_IN_ROOT" --only mig
expect_rc "verify fails on the old layout" 1
gp apply "$PROFILE_IN_ROOT" --yes --reboot never --only mig
expect_rc "apply the changed layout" 0
assert_grep "boot unit follows the new layout" \
    '^ExecStart=/usr/bin/nvidia-smi mig -i 0 -cgi 9,9 -C$' "$ROOT$UNIT"
gp verify "$PROFILE_IN_ROOT" --only mig
expect_rc "verify passes on the new layout" 0

scenario_end
