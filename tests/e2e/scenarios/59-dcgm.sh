#!/usr/bin/env bash
# DCGM (issue 25 item 2; docs/dcgm.md). The e2e profile (branch 550, CUDA 12.4) plus
# `monitoring: {dcgm: true, dcgm_exporter: false}` on the Debian 12 root, against the mirror's
# DCGM 4 stand-ins (mirror/dcgm.sh: NVIDIA's names, epoch-1 versions 1:4.4.2-1 and 1:4.6.1-1,
# exact-version Depends, -cuda12 and -cuda13 builds). The plan lists the four CUDA 12 packages
# at the newest version the index has for all of them, none of the CUDA 13 ones; apply installs
# exactly those and starts nv-hostengine through nvidia-dcgm.service; verify passes; `verify
# --smoke` runs `dcgmi diag -r 1` and it passes; the next plan is empty. Then the host engine is
# stopped: verify fails on it and on `dcgmi discovery -l`, the plan starts it again, and with
# persistence mode off the stand-in diag fails as DCGM does, and smoke.dcgm says why. Measured
# 96 s on the shared 2-core machine beside four builds.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

printf 'monitoring: {dcgm: true, dcgm_exporter: false}\n' >>"$ROOT$PROFILE_IN_ROOT"
DCGM=1:4.6.1-1
PKGS=(datacenter-gpu-manager-4-core datacenter-gpu-manager-4-cuda12 datacenter-gpu-manager-4-proprietary
    datacenter-gpu-manager-4-proprietary-cuda12)

# smoke_line FILE ID: "status|reason|command" of one smoke test from verify's JSON.
smoke_line() {
    "$E2E_PYTHON" - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for t in doc.get("smoke", {}).get("tests", []):
    if t["id"] == sys.argv[2]:
        print("%s|%s|%s" % (t["status"], t["reason"], t["command"]))
PY
}

# --- the plan: exact versions from the mirror's index -------------------------------------------
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan on a fresh host" 0
planned=$("$E2E_PYTHON" - "$GP_STDOUT" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for s in doc["steps"]:
    if s["id"] == "dcgm":
        for i in s.get("installs", []):
            print("%s=%s" % (i["name"], i["version"]))
PY
)
printf '%s\n' "$planned" >"$OUT/dcgm-planned.txt"
want=$(printf '%s\n' "${PKGS[@]/%/=$DCGM}" | sort)
assert_eq "plan installs the four CUDA 12 DCGM packages at $DCGM" "$want" "$(sort <<<"$planned")"
index=$(curl -fsS --cacert "$MIRROR_DIR/tls/ca.pem" "https://127.0.0.1:$MIRROR_PORT/compute/cuda/repos/debian12/x86_64/Packages")
check "the index publishes 1:4.4.2-1 too (the plan took the newest)" \
    grep -qx 'Version: 1:4.4.2-1' <<<"$index"
check "the index publishes the CUDA 13 build the plan left out" \
    grep -qx 'Package: datacenter-gpu-manager-4-cuda13' <<<"$index"
gp plan "$PROFILE_IN_ROOT" --only dcgm
check "text plan names the CUDA major's reason" grep -q "DCGM for CUDA 12: driver branch 550 carries CUDA 12.4" "$GP_STDOUT"
check "text plan enables the host engine" grep -q "nvidia-dcgm.service" "$GP_STDOUT"

# --- apply, verify, smoke ----------------------------------------------------------------------
gp apply "$PROFILE_IN_ROOT" --yes # lib/scenario.sh then checks the next plan is empty
expect_rc "apply with monitoring.dcgm" 0
for p in "${PKGS[@]}"; do assert_pkg "$p" "$DCGM"; done
assert_no_pkg datacenter-gpu-manager-4-cuda13
check "nvidia-dcgm.service enabled" test -L "$ROOT/etc/systemd/system/multi-user.target.wants/nvidia-dcgm.service"
assert_eq "host engine running" active "$(in_root "$ROOT" 30 systemctl is-active nvidia-dcgm || true)"
gp verify "$PROFILE_IN_ROOT" --only dcgm --json
expect_rc "verify --only dcgm after apply" 0
gp verify "$PROFILE_IN_ROOT" --smoke --json
line=$(smoke_line "$GP_STDOUT" smoke.dcgm)
log "smoke.dcgm: $line"
check "smoke.dcgm passed" grep -q '^passed|' <<<"$line"
check "smoke.dcgm ran dcgmi diag -r 1" grep -q '|/usr/bin/dcgmi diag -r 1$' <<<"$line"

# --- the host engine stopped -------------------------------------------------------------------
in_root "$ROOT" 30 systemctl stop nvidia-dcgm
gp verify "$PROFILE_IN_ROOT" --only dcgm
expect_rc "verify fails with the host engine stopped" 1
check "verify names the host engine" grep -q "dcgm.hostengine" "$GP_STDOUT"
check "verify names dcgmi discovery" grep -q "dcgm.discovery" "$GP_STDOUT"
gp plan "$PROFILE_IN_ROOT" --only dcgm --detailed-exitcode
expect_rc "the plan starts it again" 2
check "plan: systemctl start nvidia-dcgm.service" grep -q "systemctl start nvidia-dcgm.service" "$GP_STDOUT"
gp apply "$PROFILE_IN_ROOT" --yes --only dcgm
expect_rc "apply --only dcgm restarts the host engine" 0
assert_eq "host engine running again" active "$(in_root "$ROOT" 30 systemctl is-active nvidia-dcgm || true)"

# --- a diagnostic failure is a failed smoke test, with DCGM's words ------------------------------
in_root "$ROOT" 30 nvidia-smi -pm 0 >/dev/null
gp verify "$PROFILE_IN_ROOT" --smoke --json
line=$(smoke_line "$GP_STDOUT" smoke.dcgm)
log "smoke.dcgm, persistence off: $line"
check "smoke.dcgm failed" grep -q '^failed|' <<<"$line"
check "it names the failed check and DCGM's text" \
    grep -q "software: Fail (Error: Persistence mode for GPU 0 is currently disabled." <<<"$line"
scenario_end
