#!/usr/bin/env bash
# e2e-timeout: 600
# (46) Fabric manager on an NVSwitch host, Ubuntu 24.04, branches 580 and 595 (sci-sim's shape:
# 8x H100 SXM5 behind four NVSwitches that gpuprov's facts detect on PCI, `fabric_manager: auto`,
# driver open and held) against the recorded 2026 graph (the mirror's nvidia-2026/ tree,
# ubuntu2404 slug), where 620 is published. Each branch on its own fresh root (the template
# root copied, one mirror): apply exits 0, verify exits 0, the next plan is empty.
# `nvidia-fabricmanager`, `libnvidia-nscq` and `nvidia-imex` are NVIDIA's unsuffixed packages at
# the driver's exact upstream version (580: 580.159.04-1 beside the driver's -1ubuntu1, the
# `-580` names only Provides aliases; 595: 595.91.07-1ubuntu1), inside the branch lock (580:
# apt-mark held with the driver; 595: under nvidia-driver-pinning-595's pin, no holds), the
# fabric manager unit enabled and started by gpuprov (the stand-in daemon starts only on a
# loaded module of exactly its version), and neither `apt-get dist-upgrade` nor
# `apt-get install nvidia-open` would move a driver, fabric manager, NSCQ or IMEX package to
# another branch. Measured on the shared 2-core machine (docs/e2e.md): 179 s (580: 74 s, 595:
# 68 s) beside 29 and 41, 247 s (121 s, 97 s) beside 43.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
SIM_GPU_COUNT=8
SIM_GPU_DEVICE=0x2330 # H100 SXM5 80GB
scenario_begin clean
rootfs_simulate_nvswitch "$ROOT"

# The template every case copies: the prepared HGX host, gpuprov, the profile, Ubuntu 24.04's os-release.
rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/hosts/ubuntu-24.04/etc/os-release" "$ROOT/etc/os-release"

# gpuprov sees an NVSwitch host: the switches on PCI, not a declaration.
gp facts --json
expect_rc "facts --json on the HGX H100 host" 0
check "facts: 8 H100 GPUs and 4 NVSwitches on PCI" "$E2E_PYTHON" -c 'import json, sys
f = json.load(open(sys.argv[1]))
gpus = f["gpus"]
assert len(gpus) == 8 and all(g["model"] == "H100" and g["nvswitch_system"] for g in gpus), gpus
assert f["nvswitch_count"] == 4, f["nvswitch_count"]' "$GP_STDOUT"
TEMPLATE=$ROOT
OUT_ALL=$OUT

# shellcheck source=lib/driver_graph.sh
source "$E2E_DIR/lib/driver_graph.sh"
FM_PKGS="nvidia-fabricmanager libnvidia-nscq nvidia-imex"

# case_run BRANCH DRIVER-VERSION FM-VERSION PIN-VERSION: one case on a fresh copy of the template.
declare -A SPENT=()
case_run() {
    local b=$1 drv=$2 fmv=$3 pin=$4 open=nvidia-open
    [[ -z "$pin" ]] && open=nvidia-open-$b # 580: the suffixed scheme's open meta
    local name="$b" t0=$SECONDS upstream=${2%%-*} p
    log "--- case $name: branch $b open on NVSwitch, driver $drv, fabric manager $fmv ---"
    ROOT=$(rootfs_copy "$TEMPLATE" "$SCENARIO-$name")
    OUT=$OUT_ALL/$name
    mkdir -p "$OUT"
    # sci-sim's GPUs and driver (open, held) on cv-train's e2e profile; fabric_manager: auto
    # (cv-train's own setting, spelled out) installs it because the NVSwitches are on PCI.
    local profile=/etc/gpuprov/e2e-fm-$name.yaml
    printf 'name: e2e-fm-%s\nextends: %s\nhost:\n  gpus: {count: 8, model: H100, memory_gib: 80, interconnect: nvlink}\ndriver: {branch: "%s", flavor: open, hold: true}\nfabric_manager: auto\n' \
        "$name" "$PROFILE_IN_ROOT" "$b" >"$ROOT$profile"

    gp plan "$profile" --json
    expect_rc "$name: plan" 0
    # nvidia-modprobe at the driver's own build: nvidia-imex needs it at any version, and on 580
    # nothing else keeps it off 620 (NVIDIA's driver container installs it beside IMEX too).
    check "$name: the plan's fabric-manager step installs FM, NSCQ, IMEX at $fmv, nvidia-modprobe at $drv" "$E2E_PYTHON" -c 'import json, sys
s = {s["id"]: s for s in json.load(open(sys.argv[1]))["steps"]}["fabric-manager"]
got = sorted((i["name"], i["version"]) for i in s["installs"])
want = sorted([(n, sys.argv[2]) for n in sys.argv[3].split()] + [("nvidia-modprobe", sys.argv[4])])
assert s["status"] == "pending" and got == want, (s["status"], got, s["reason"])' "$GP_STDOUT" "$fmv" "$FM_PKGS" "$drv"

    gp apply "$profile" --yes # lib/scenario.sh then checks plan --detailed-exitcode gives 0
    expect_rc "$name: apply on a fresh Ubuntu 24.04 NVSwitch host" 0
    gp verify "$profile" --json
    expect_rc "$name: verify after apply" 0
    check "$name: verify ran fabric-manager.active and fabric-manager.branch-lock, both passed" "$E2E_PYTHON" -c 'import json, sys
c = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"]}
for i in ("fabric-manager.active", "fabric-manager.branch-lock", "driver.branch-lock"):
    assert i in c and c[i]["passed"] and not c[i]["skipped"], c.get(i, i)' "$GP_STDOUT"

    # NVIDIA's unsuffixed names at the driver's exact upstream version; the -<b> names are
    # Provides aliases of them, never packages of their own.
    assert_pkg "$open" "$drv"
    assert_pkg nvidia-modprobe "$drv"
    for p in $FM_PKGS; do
        assert_pkg "$p" "$fmv"
        assert_no_pkg "$p-$b"
        # shellcheck disable=SC2016 # dpkg-query format
        assert_eq "$name: $p provides $p-$b" "$p-$b" \
            "$(in_root "$ROOT" 30 dpkg-query -W -f='${Provides}' "$p" | tr ',' '\n' | tr -d ' ' | grep -x "$p-$b" || true)"
    done
    check "$name: fabric manager's version is the driver's ($upstream)" test "${fmv%%-*}" = "$upstream"
    local versions
    versions=$(driver_versions)
    printf '%s\n' "$versions" >"$OUT/driver-packages.txt"
    log "$name: installed driver packages: $(paste -sd, <<<"$versions")"
    assert_eq "$name: every installed driver, FM, NSCQ and IMEX package is at $upstream" "" \
        "$(awk -v u="$upstream" '{split($2, v, "-"); if (v[1] != u) print}' <<<"$versions")"

    # Inside the branch lock.
    local held
    held=$(holds | sort)
    log "$name: apt-mark holds: $(paste -sd, <<<"$held")"
    if [[ -z "$pin" ]]; then
        for p in $FM_PKGS; do check "$name: $p is held with the driver" grep -qx "$p" <<<"$held"; done
        assert_eq "$name: every installed driver package is held" "" \
            "$(comm -23 <(awk '{print $1}' <<<"$versions" | sort) <(printf '%s\n' "$held"))"
        check "$name: nvidia-modprobe is held with the driver" grep -qx nvidia-modprobe <<<"$held"
    else
        assert_pkg "nvidia-driver-pinning-$b" "$pin"
        assert_eq "$name: no apt-mark holds under NVIDIA's pin" "" "$held"
        for p in $FM_PKGS nvidia-modprobe; do
            check "$name: $p's installed version is pinned at 1000" \
                grep -Eq "^ \*\*\* $fmv 1000\$" <<<"$(in_root "$ROOT" 30 apt-cache policy "$p" 2>&1)"
        done
    fi

    # The unit, enabled as gpuprov's step does it, and started: the stand-in daemon refuses a
    # loaded module of another version, as NVIDIA's does.
    check "$name: nvidia-fabricmanager.service enabled (wants link)" \
        test -L "$ROOT/etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service"
    check "$name: nvidia-fabricmanager.service active" test -f "$ROOT/run/e2e-systemd/nvidia-fabricmanager.service.active"
    check "$name: the loaded module is the open $upstream" \
        grep -q "^NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $upstream  " "$ROOT/proc/driver/nvidia/version"

    # 620 is published; plain apt keeps every driver, FM, NSCQ and IMEX package on the branch.
    local policy sim
    policy=$(in_root "$ROOT" 30 apt-cache policy nvidia-fabricmanager 2>&1 || true)
    printf '%s\n' "$policy" >"$OUT/policy-nvidia-fabricmanager.txt"
    check "$name: the index publishes nvidia-fabricmanager $E2E_U620" grep -q " $E2E_U620-" <<<"$policy"
    assert_dist_upgrade_keeps "$name: apt-get -s dist-upgrade changes no driver, FM, NSCQ or IMEX package"
    sim=$(apt_sim install nvidia-open)
    printf '%s\n' "$sim" >"$OUT/install-nvidia-open.txt"
    log "$name: install nvidia-open would: $(grep -E '^(Inst|Remv|E:) ' <<<"$sim" | paste -sd';')"
    assert_eq "$name: apt-get -s install nvidia-open moves no package to another branch" "" "$(off_branch "$b" "$sim")"

    # The stand-in is as strict as NVIDIA's daemon: a loaded module of another version, and it
    # refuses to start (so the started unit above proves the versions match).
    local v=$ROOT/proc/driver/nvidia/version fm_out
    cp "$v" "$OUT/nvidia-version.txt"
    sed -i "s/  $upstream  /  $E2E_U620  /" "$v"
    if fm_out=$(in_root "$ROOT" 30 nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg 2>&1); then
        fail "$name: nv-fabricmanager started beside a $E2E_U620 module"
    else
        check "$name: nv-fabricmanager refuses a $E2E_U620 module" grep -q "don't match with driver version $E2E_U620" <<<"$fm_out"
    fi
    cp "$OUT/nvidia-version.txt" "$v"

    assert_eq "$name: journal result" "done" "$(journal_result)"
    assert_eq "$name: dpkg --audit is empty" "" "$(dpkg_audit)"
    SPENT[$name]=$((SECONDS - t0))
    log "--- case $name: ${SPENT[$name]} s ---"
    kill_procs_in_root || true
    rootfs_remove "$ROOT"
}

# 580: suffixed driver scheme (held); fabric manager's own revision is -1 ([R9]).
case_run 580 "$E2E_U580-1ubuntu1" "$E2E_U580-1" ""
# 595: unsuffixed, NVIDIA's pinning package.
case_run 595 "$E2E_U595-1ubuntu1" "$E2E_U595-1ubuntu1" 595-1ubuntu1

OUT=$OUT_ALL
log "time per case: 580=${SPENT[580]:-?}s 595=${SPENT[595]:-?}s"
ROOT=$TEMPLATE
scenario_end
