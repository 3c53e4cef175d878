#!/usr/bin/env bash
# DCGM (issue 25 item 2; docs/dcgm.md). The e2e profile (branch 550, CUDA 12.4) plus
# `monitoring: {dcgm: true, dcgm_exporter: false}` on the Debian 12 root, against the mirror's
# DCGM 4 stand-ins (tests/fixtures/nvidia-repos/debian12/Packages.dcgm: NVIDIA's names, epoch-1
# versions 1:4.4.2-1 and 1:4.6.1-1, exact-version Depends between the parts, core's Depends on
# Debian's lshw, -cuda12 and -cuda13 builds) and the Debian archive (the mirror's `debian`
# repository, which carries lshw). First a control without gpuprov: the served index is the
# record, and plain apt resolves DCGM as against NVIDIA's (-cuda12 pulls core at its own newest
# version; -cuda12=1:4.4.2-1 alone fails on core's exact version, as Azure's scripts record; no
# Debian archive, no lshw, no core). The plan lists the four CUDA 12 packages
# at the newest version the index has for all of them, none of the CUDA 13 ones; apply installs
# exactly those and starts nv-hostengine through nvidia-dcgm.service; verify passes; `verify
# --smoke` runs `dcgmi diag -r 1` and it passes; the next plan is empty. Then the host engine is
# stopped: verify fails on it and on `dcgmi discovery -l`, the plan starts it again, and with
# persistence mode off the stand-in diag fails as DCGM does, and smoke.dcgm says why. Measured
# 96 s on the shared 2-core machine beside four builds; 36 s with the apt control, run alone.
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

# --- control: plain apt against the mirror, as against NVIDIA's -----------------------------------
# The Debian archive, as every Debian host has it: DCGM's core depends on its lshw.
mirror_apt_source "$ROOT" debian debian
check "apt-get update (Debian archive)" in_root "$ROOT" 120 apt-get -q update
# The served legacy index carries exactly the recorded DCGM stanzas (control fields, X- stripped).
verdict=$("$E2E_PYTHON" - "$REPO_ROOT/tests/fixtures/nvidia-repos/debian12" \
    "$MIRROR_DIR/www/compute/cuda/repos/debian12/x86_64/Packages" <<'PY'
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ["E2E_DIR"], "mirror"))
import apt_fixtures
with open(sys.argv[2]) as f:
    served = {(st["Package"], st["Version"]): st for _, st in apt_fixtures.parse(f.read(), "index")}
_, stanzas = apt_fixtures.load_slug(sys.argv[1], "dcgm")
bad = []
for _, st in stanzas:
    got = served.pop((st["Package"], st["Version"]), None)
    want = {k: v for k, v in st.items() if k in apt_fixtures.CONTROL_FIELDS and k != "Description"}
    ignored = {"Filename", "Size", "MD5sum", "SHA1", "SHA256", "SHA512", "Maintainer", "Installed-Size",
               "Priority", "Description", "Description-md5"}
    if got is None or {k: v for k, v in got.items() if k not in ignored} != want:
        bad.append("%s %s %s" % (st["Package"], st["Version"], "missing" if got is None else "differs"))
bad += ["extra %s %s" % k for k in served if k[0].startswith(apt_fixtures.DCGM_PREFIX)]
print("%d %s" % (len(stanzas), "; ".join(bad) or "exact"))
PY
)
assert_eq "the legacy debian12 index serves the ${verdict%% *} recorded DCGM stanzas exactly" exact "${verdict#* }"
# plain_apt LIST ARGS...: apt-get -s in the root with only LIST's sources (/root/e2e-plain/), lists
# and caches of its own, so the root's apt state is what it was for gpuprov.
mkdir -p "$ROOT/root/e2e-plain/lists/partial"
nv="[signed-by=/usr/share/keyrings/e2e-debian.gpg] $(mirror_url compute/cuda/repos/debian12/x86_64/) /"
printf 'deb %s\ndeb [signed-by=/usr/share/keyrings/e2e-debian.gpg] %s /\n' "$nv" "$(mirror_url debian/)" \
    >"$ROOT/root/e2e-plain/with-debian.list"
printf 'deb %s\n' "$nv" >"$ROOT/root/e2e-plain/nvidia-only.list"
plain_apt() {
    local list=$1
    shift
    in_root "$ROOT" 60 apt-get -o Dir::Etc::SourceList="/root/e2e-plain/$list" -o Dir::Etc::SourceParts=/nonexistent \
        -o Dir::State::Lists=/root/e2e-plain/lists -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
        -o APT::Get::Show-Versions=1 "$@" 2>&1
}
# inst OUTPUT NAME: the version apt-get -s would install NAME at
inst() { sed -n "s/^Inst $2 \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\2/p" <<<"$1"; }
check "plain apt-get update (NVIDIA's tree and the Debian archive)" plain_apt with-debian.list -q update
out=$(plain_apt with-debian.list -s install datacenter-gpu-manager-4-cuda12 || true)
printf '%s\n' "$out" >"$OUT/plain-apt-cuda12.txt"
for p in "${PKGS[@]}"; do assert_eq "plain apt: -cuda12 brings $p at $DCGM" "$DCGM" "$(inst "$out" "$p")"; done
check "plain apt: core's Depends pulls lshw from the Debian archive" test -n "$(inst "$out" lshw)"
check "plain apt: nothing of CUDA 13" test -z "$(inst "$out" datacenter-gpu-manager-4-cuda13)"
out=$(plain_apt with-debian.list -s install datacenter-gpu-manager-4-cuda12=1:4.4.2-1 && echo "rc=0" || echo "rc=$?")
printf '%s\n' "$out" >"$OUT/plain-apt-cuda12-4.4.2.txt"
if [[ "$(inst "$out" datacenter-gpu-manager-4-core)" == 1:4.4.2-1 ]]; then
    pass "plain apt: -cuda12=1:4.4.2-1 pulls core 1:4.4.2-1, as its (= 1:4.4.2-1) demands"
else
    check "plain apt: -cuda12=1:4.4.2-1 alone fails on core's exact version (the candidate is $DCGM)" \
        grep -q "Depends: datacenter-gpu-manager-4-core (= 1:4.4.2-1) but $DCGM is to be installed" <<<"$out"
    check "plain apt: ... and installs nothing" test -z "$(grep '^Inst ' <<<"$out")"
fi
check "plain apt update (NVIDIA's tree only)" plain_apt nvidia-only.list -q update
out=$(plain_apt nvidia-only.list -s install datacenter-gpu-manager-4-cuda12 || true)
check "plain apt without the Debian archive: core's lshw is not installable" \
    grep -q "Depends: lshw but it is not installable" <<<"$out"
rm -rf "$ROOT/root/e2e-plain"

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
assert_pkg lshw 02.19.git.2021.06.19.996aaad9c7-2+b1 # core's Depends, from the Debian archive
# Plain apt on the converged host: an older -cuda12 alone cannot sit beside core 1:4.6.1-1.
out=$(in_root "$ROOT" 60 apt-get -s -o APT::Get::Show-Versions=1 install datacenter-gpu-manager-4-cuda12=1:4.4.2-1 2>&1 || true)
printf '%s\n' "$out" >"$OUT/plain-apt-downgrade.txt"
v=$(inst "$out" datacenter-gpu-manager-4-core)
if [[ -n "$v" ]]; then
    assert_eq "plain apt: -cuda12=1:4.4.2-1 takes core down to 1:4.4.2-1 with it" 1:4.4.2-1 "$v"
else
    check "plain apt: -cuda12=1:4.4.2-1 beside core $DCGM fails on core's exact version" \
        grep -q "Depends: datacenter-gpu-manager-4-core (= 1:4.4.2-1)" <<<"$out"
fi
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
