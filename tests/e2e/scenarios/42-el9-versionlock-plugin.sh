#!/usr/bin/env bash
# e2e-timeout: 900
# EL 9 without dnf's versionlock plugin (issue 19): a stock Rocky 9 image lacks
# python3-dnf-plugin-versionlock, so `dnf versionlock` is "No such command" and a driver with
# hold: true used to install everything and then fail at the lock on every run. The plan installs
# the plugin from BaseOS in preflight's transaction (a package change, no NVIDIA pin), the lock runs
# after the driver's transaction, and the host converges: the closure is versionlocked and a second
# plan has nothing to do.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

set +e
out=$(dnf_in_root versionlock 2>&1)
set -e
check "the stock root has no versionlock plugin ('No such command')" grep -q 'No such command: versionlock' <<<"$out"
assert_no_rpm python3-dnf-plugin-versionlock

# cv-train (580, open modules, hold: true); the libraries this scenario is not about left out.
cat >"$ROOT/etc/gpuprov/e2e-hold.yaml" <<'YAML'
name: e2e-hold
extends: /etc/gpuprov/e2e.yaml
driver: {branch: "580", flavor: open, hold: true}
steps: {skip: [cuda-toolkit, cudnn, nccl, container-toolkit, monitoring]}
YAML
P=/etc/gpuprov/e2e-hold.yaml

gp plan "$P"
expect_rc "plan" 0
cp "$GP_STDOUT" "$OUT/plan.txt"
assert_grep "plan installs the versionlock plugin from the distribution" \
    "install +python3-dnf-plugin-versionlock +4\.3\.0-11\.el9" "$GP_STDOUT"
assert_grep "plan marks the driver held" "install +nvidia-open +3:580\.[0-9.]+-1\.el9 +\(held\)" "$GP_STDOUT"

gp apply "$P" --yes
expect_rc "apply with hold: true on a root without the plugin" 0
assert_rpm python3-dnf-plugin-versionlock 4.3.0-11.el9
evr=$(rpm_evr nvidia-open)
log "nvidia-open installed at $evr"
locked=$(versionlock_list)
printf '%s\n' "$locked" >"$OUT/versionlock.list"
for p in nvidia-open kmod-nvidia-open-dkms nvidia-driver nvidia-kmod-common; do
    check "versionlock holds $p at $evr" grep -qxF "$p-$evr.*" <<<"$locked"
done
assert_eq "journal result" "done" "$(journal_result)"
gp plan "$P" --detailed-exitcode
expect_rc "plan --detailed-exitcode after apply: nothing to do" 0
scenario_end
