#!/usr/bin/env bash
# `gpuprov upgrade` on a node in use (issue 25 item 3, docs/upgrade.md): a host gpuprov set up
# with branch 535 (14's Ubuntu 22.04 slug) is a Slurm node and a Kubernetes node (stand-in
# scontrol and kubectl recording every call, in order, to /var/log/e2e-scheduler.log) with a
# job still on its GPU. `upgrade` to 550 drains it (scontrol DRAIN with a reason, kubectl cordon
# and drain), waits, shown, until the GPU process ended and Slurm says drained, applies, and
# stops for the reboot (exit 3) with the resume unit running `gpuprov upgrade`. After the reboot
# that unit's run verifies and puts the node back (scontrol RESUME, kubectl uncordon): in that
# order, from the call log and the upgrade's record (--no-smoke: the roots run no GPU code). Then
# an upgrade with the smoke tests fails verify (the stand-in nvcc writes no program): drained,
# exit 1, no RESUME. Then the module refuses to load (DKMS's
# module gone): the next upgrade drains, fails, exits non-zero with the node left drained, no
# RESUME call, and the record names the reason. The profile's readiness gate is ordered before
# the stand-in kubelet and slurmd units at boot.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
rm -f "$ROOT/etc/os-release"
cp "$REPO_ROOT/tests/fixtures/e2e/os-release/ubuntu-22.04" "$ROOT/etc/os-release"

CALLS=/var/log/e2e-scheduler.log
RECORD=/var/lib/gpuprov/upgrade.json
READY=/etc/systemd/system/gpuprov-ready.service
calls() { cat "$ROOT$CALLS" 2>/dev/null || true; }
upgrade_events() { "$E2E_PYTHON" -c 'import json, sys
print(" ".join(e["event"] for e in json.load(open(sys.argv[1]))["events"]))' "$ROOT$RECORD"; }

# --- the cluster: this node is gpu07 to Slurm and Kubernetes -----------------------------------
mkdir -p "$ROOT/proc/sys/kernel" "$ROOT/var/lib/e2e-slurm" "$ROOT/var/lib/e2e-k8s" "$ROOT/etc/kubernetes"
echo gpu07.cluster.test >"$ROOT/proc/sys/kernel/hostname"
echo gpu07 >"$ROOT/var/lib/e2e-slurm/nodes"
echo gpu07 >"$ROOT/var/lib/e2e-k8s/nodes"
echo MIXED >"$ROOT/var/lib/e2e-slurm/gpu07.state"
printf 'apiVersion: v1\nkind: Config\n' >"$ROOT/etc/kubernetes/admin.conf"
install -D -m 0755 "$E2E_DIR/lib/scontrol-standin" "$ROOT/usr/bin/scontrol"
install -D -m 0755 "$E2E_DIR/lib/kubectl-standin" "$ROOT/usr/bin/kubectl"
for svc in kubelet slurmd; do
    printf '[Unit]\nDescription=e2e stand-in %s\n\n[Service]\nExecStart=/usr/local/bin/e2e-%s\n\n[Install]\nWantedBy=multi-user.target\n' \
        "$svc" "$svc" >"$ROOT/etc/systemd/system/$svc.service"
    mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
    ln -sf "/etc/systemd/system/$svc.service" "$ROOT/etc/systemd/system/multi-user.target.wants/$svc.service"
done

cat >"$ROOT/etc/gpuprov/e2e-535.yaml" <<'YAML'
name: e2e-535
extends: /etc/gpuprov/e2e.yaml
driver: {branch: "535"}
cuda: {version: "12.2"}
YAML
printf 'readiness: {gate: true, timeout_s: 120}\n' >>"$ROOT$PROFILE_IN_ROOT"
gp apply /etc/gpuprov/e2e-535.yaml --yes
expect_rc "apply branch 535" 0
check "the 535 module is loaded" grep -q "Kernel Module  $E2E_DRIVER_535 " "$ROOT/proc/driver/nvidia/version"
assert_eq "apply alone touched no scheduler" "" "$(calls)"

# --- the upgrade: a job still holds the GPU for two looks, Slurm drains for one -----------------
mkdir -p "$ROOT/var/lib/nvidia-stub"
printf '4242|/usr/bin/python3|1024|2\n' >"$ROOT/var/lib/nvidia-stub/compute-apps"
echo 1 >"$ROOT/var/lib/e2e-slurm/gpu07.jobs"
# --no-smoke: the roots run no GPU code (the stand-in nvcc writes no program), so the smoke tests
# would fail here; the case after this one lets them.
gp upgrade "$PROFILE_IN_ROOT" --yes --reboot never --poll 1 --wait 60 --no-smoke
expect_rc "upgrade to 550 stops for the reboot (535 still loaded)" 3
assert_eq "drain calls, in order (the queries left out)" \
    "scontrol update NodeName=gpu07 State=DRAIN Reason=gpuprov upgrade|kubectl --kubeconfig /etc/kubernetes/admin.conf cordon gpu07|kubectl --kubeconfig /etc/kubernetes/admin.conf drain gpu07 --ignore-daemonsets --delete-emptydir-data --timeout=600s" \
    "$(calls | grep -v '^scontrol show node \|^kubectl version' | paste -sd'|')"
check "Slurm was asked about the node before the drain" bash -c "head -n 1 '$ROOT$CALLS' | grep -qx 'scontrol show node gpu07'"
assert_grep "the wait is shown with the process that holds the GPU" \
    "waiting for the GPUs to be free .*pid 4242 \\(/usr/bin/python3\\)" "$GP_STDOUT"
assert_grep "the wait names Slurm's draining state" "Slurm node gpu07 is MIXED\\+DRAIN" "$GP_STDOUT"
assert_eq "Slurm says drained" "IDLE+DRAIN" "$(in_root "$ROOT" 10 scontrol show node gpu07 | sed -n 's/.*State=\([^ ]*\).*/\1/p')"
check "kubernetes node cordoned" test -f "$ROOT/var/lib/e2e-k8s/gpu07.cordoned"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_no_pkg nvidia-driver-535
assert_eq "record: drain, idle, reboot" "drain idle reboot" "$(upgrade_events)"
assert_eq "record: phase rebooting" rebooting "$(upgrade_phase)"
assert_grep "the resume unit continues the upgrade, not a bare apply" \
    '^ExecStart=/usr/local/bin/gpuprov upgrade /etc/gpuprov/resume/e2e-debian12.yaml --yes --reboot never$' \
    "$ROOT/etc/systemd/system/gpuprov-resume.service"
check "no RESUME before the reboot" bash -c "! grep -q 'State=RESUME\|uncordon' '$ROOT$CALLS'"

# --- the reboot: the gate before kubelet and slurmd; the resume unit finishes the upgrade -------
assert_grep "readiness gate ordered before kubelet and slurmd" '^Before=kubelet.service slurmd.service$' "$ROOT$READY"
assert_grep "readiness gate runs the quick checks with a timeout" \
    '^ExecStart=/usr/local/bin/gpuprov verify /etc/gpuprov/resume/e2e-debian12.yaml --quick --wait 120$' "$ROOT$READY"
rootfs_reboot "$ROOT"
check "boot order: gpuprov-ready before kubelet and slurmd" bash -c \
    "grep '^boot: start' '$ROOT/var/log/e2e-systemctl.log' | awk '{print \$3}' | tr '\n' ' ' | grep -Eq 'gpuprov-ready.service .*(kubelet|slurmd).service .*(kubelet|slurmd).service'"
: >"$ROOT$CALLS"
run_resume_unit /etc/systemd/system/gpuprov-resume.service
cp "$ROOT$RECORD" "$OUT/upgrade-done.json" 2>/dev/null || true
assert_eq "after the reboot: only the resume calls" \
    "scontrol update NodeName=gpu07 State=RESUME|kubectl --kubeconfig /etc/kubernetes/admin.conf uncordon gpu07" \
    "$(calls | paste -sd'|')"
assert_eq "record: drain, idle, reboot, resumed, apply, verify, resume, done" \
    "drain idle reboot resumed apply verify resume done" "$(upgrade_events)"
slurm_state() { in_root "$ROOT" 10 scontrol show node gpu07 | sed -n 's/.*State=\([^ ]*\).*/\1/p'; }
assert_eq "Slurm node back to IDLE" IDLE "$(slurm_state)"
check "kubernetes node uncordoned" test ! -f "$ROOT/var/lib/e2e-k8s/gpu07.cordoned"
check "the 550 module is loaded" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
assert_no_file "resume unit removed" "$ROOT/etc/systemd/system/gpuprov-resume.service"
gp verify /etc/gpuprov/resume/e2e-debian12.yaml --quick --wait 30
expect_rc "the gate's own command passes" 0
assert_grep "the gate says the GPUs are ready" "gpuprov-ready: the GPUs are ready" "$GP_STDOUT"
gp status
expect_rc "status after the upgrade" 0
assert_grep "status shows the upgrade done and the node back" \
    "^Upgrade: +done at [0-9T:-]+Z \(profile .*; Slurm node gpu07, Kubernetes node gpu07: back in service\)" "$GP_STDOUT"

# --- verify --smoke fails (the stand-in nvcc writes no program): the node stays drained ----------
: >"$ROOT$CALLS"
gp upgrade "$PROFILE_IN_ROOT" --yes --reboot never --poll 1 --wait 10
expect_rc "an upgrade whose smoke test fails exits 1" 1
assert_eq "drained, never put back" \
    "scontrol update NodeName=gpu07 State=DRAIN Reason=gpuprov upgrade|kubectl --kubeconfig /etc/kubernetes/admin.conf cordon gpu07|kubectl --kubeconfig /etc/kubernetes/admin.conf drain gpu07 --ignore-daemonsets --delete-emptydir-data --timeout=600s" \
    "$(calls | grep -v '^scontrol show node \|^kubectl version' | paste -sd'|')"
assert_eq "record: drain idle apply failed" "drain idle apply failed" "$(upgrade_events)"
assert_grep "the reason is the smoke test" "verify --smoke failed: .*smoke\.cuda" "$GP_STDERR"
cp "$ROOT$RECORD" "$OUT/upgrade-smoke-failed.json" 2>/dev/null || true
gp status
expect_rc "status after the failed upgrade (its apply was done): failed, the node is drained" 1
assert_grep "status shows the upgrade failed and what is drained" \
    "^Upgrade: +failed at .*Slurm node gpu07, Kubernetes node gpu07: drained\)" "$GP_STDOUT"
assert_grep "status says how to put the node back" "failed: verify --smoke failed.*scontrol update NodeName=gpu07 State=RESUME" "$GP_STDOUT"
gp status --json
check "status --json carries the record" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["upgrade"]["phase"] == "failed" and d["upgrade"]["events"][-1]["event"] == "failed" else 1)' "$GP_STDOUT"

# --- the module refuses to load: the upgrade stops, the node stays drained ----------------------
rm -f "$ROOT/lib/modules/$SIM_KERNEL/updates/dkms/nvidia.ko"
rootfs_reboot "$ROOT"
check "no NVIDIA module after that boot" test ! -e "$ROOT/proc/driver/nvidia/version"
gp verify /etc/gpuprov/resume/e2e-debian12.yaml --quick --wait 6
expect_rc "the gate's command fails once its time is up" 1
assert_grep "the gate says the GPUs are not ready, and why" "gpuprov-ready: the GPUs are NOT ready after [0-9]*s: driver" "$GP_STDERR"
check "it retried while it waited" grep -q "not ready yet" "$GP_STDERR"
: >"$ROOT$CALLS"
gp upgrade "$PROFILE_IN_ROOT" --yes --reboot never --poll 1 --wait 10 --no-smoke
if [[ "$GP_RC" == 3 ]]; then
    # The driver step asks for one reboot first; it does not help.
    rootfs_reboot "$ROOT"
    execstart=$(sed -n 's/^ExecStart=//p' "$ROOT/etc/systemd/system/gpuprov-resume.service" 2>/dev/null | head -n 1)
    read -r -a argv <<<"$execstart"
    check "the unit continues the upgrade" test "${argv[1]:-}" = upgrade
    gp "${argv[@]:1}"
fi
expect_rc "the failed upgrade exits 1" 1
cp "$ROOT$RECORD" "$OUT/upgrade-failed.json" 2>/dev/null || true
check "the node was drained" grep -q 'State=DRAIN' "$ROOT$CALLS"
check "no RESUME, no uncordon" bash -c "! grep -q 'State=RESUME\|uncordon' '$ROOT$CALLS'"
assert_eq "Slurm node left drained" IDLE+DRAIN "$(slurm_state)"
check "kubernetes node left cordoned" test -f "$ROOT/var/lib/e2e-k8s/gpu07.cordoned"
assert_eq "record: phase failed" failed "$(upgrade_phase)"
assert_grep "the record names the reason" '"event": "failed"' "$ROOT$RECORD"
assert_grep "the reason is the module" "nvidia" <("$E2E_PYTHON" -c 'import json, sys
print(json.load(open(sys.argv[1]))["events"][-1]["message"])' "$ROOT$RECORD")
assert_grep "the error says how to put the node back" "scontrol update NodeName=gpu07 State=RESUME" "$GP_STDERR"
scenario_end
