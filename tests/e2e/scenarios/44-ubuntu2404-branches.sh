#!/usr/bin/env bash
# e2e-timeout: 900
# (44) Ubuntu 24.04: cv-train on branches 580, 595 and 610, each with the proprietary and the open
# flavour, converges on a fresh Ubuntu 24.04-shaped root (a copy per case, one mirror) against the
# recorded 2026 graph (the mirror's nvidia-2026/ tree, ubuntu2404 slug), where 620 is published:
# apply exits 0, verify exits 0, the next plan is empty, the driver is at the branch's newest build
# under NVIDIA's names for its scheme (580 suffixed, `cuda-drivers-580`/`nvidia-open-580`, held;
# 595/610 unsuffixed, `cuda-drivers`/`nvidia-open` under `nvidia-driver-pinning-<branch>`, no
# holds), and neither `apt-get dist-upgrade` nor `apt-get install nvidia-open` would move a driver
# package to another branch. On 580 the floor-only `nvidia-persistenced (>= 580.x)` of
# nvidia-compute-utils-580 is at 580 and held too (apt alone would take 620's; docs/transactions.md).
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

# The template every case copies: the prepared host, gpuprov, the profile, Ubuntu 24.04's os-release.
rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/hosts/ubuntu-24.04/etc/os-release" "$ROOT/etc/os-release"
TEMPLATE=$ROOT
OUT_ALL=$OUT

# shellcheck source=lib/driver_graph.sh
source "$E2E_DIR/lib/driver_graph.sh"

# case_run BRANCH FLAVOR NEWEST PIN-VERSION ROOTS ABSENT: one case on a fresh copy of the template.
# ROOTS: the packages NVIDIA's scheme installs for the flavour; ABSENT: the other flavour's.
declare -A SPENT=()
case_run() {
    local b=$1 flavor=$2 newest=$3 pin=$4 roots=$5 absent=$6
    local name="$b-$flavor" t0=$SECONDS rev="$3-1ubuntu1" p
    log "--- case $name: branch $b, flavor $flavor, expecting $rev ---"
    ROOT=$(rootfs_copy "$TEMPLATE" "$SCENARIO-$name")
    OUT=$OUT_ALL/$name
    mkdir -p "$OUT"
    local profile=/etc/gpuprov/e2e-$name.yaml
    printf 'name: e2e-%s\nextends: %s\ndriver: {branch: "%s", flavor: %s}\n' \
        "$name" "$PROFILE_IN_ROOT" "$b" "$flavor" >"$ROOT$profile"

    gp apply "$profile" --yes # lib/scenario.sh then checks plan --detailed-exitcode gives 0
    expect_rc "$name: apply on a fresh Ubuntu 24.04 host" 0
    gp verify "$profile"
    expect_rc "$name: verify after apply" 0
    assert_grep "$name: cuda source: the 2026 tree, ubuntu2404 slug" \
        "^URIs: *https://127\.0\.0\.1:$MIRROR_PORT/nvidia-2026/compute/cuda/repos/ubuntu2404/x86_64/?$" \
        "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources"

    # NVIDIA's names for the scheme, at the branch's newest build.
    for p in $roots; do assert_pkg "$p" "$rev"; done
    for p in $absent; do assert_no_pkg "$p"; done
    local versions held
    versions=$(driver_versions)
    printf '%s\n' "$versions" >"$OUT/driver-packages.txt"
    log "$name: installed driver packages: $(paste -sd, <<<"$versions")"
    check "$name: more than 10 driver packages installed" test "$(wc -l <<<"$versions")" -gt 10
    assert_eq "$name: every installed driver package is at $rev" "" \
        "$(grep -v " $rev\$" <<<"$versions" || true)"
    held=$(holds | sort)
    log "$name: apt-mark holds: $(paste -sd, <<<"$held")"
    if [[ -n "$pin" ]]; then
        # The unsuffixed scheme: NVIDIA's branch pin, never combined with holds.
        assert_eq "$name: the one pinning package is nvidia-driver-pinning-$b" "nvidia-driver-pinning-$b" "$(pins_installed)"
        assert_pkg "nvidia-driver-pinning-$b" "$pin"
        check "$name: the pin file is nvidia-driver-pinning-$b's" \
            cmp -s "$REPO_ROOT/tests/fixtures/nvidia-repos/ubuntu2404/pin/nvidia-driver-pinning-$b" \
            "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
        assert_eq "$name: no apt-mark holds" "" "$held"
    else
        # The suffixed scheme: no pinning package; the whole installed closure held.
        assert_eq "$name: no pinning package" "" "$(pins_installed)"
        assert_no_file "$name: no pin file" "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
        assert_eq "$name: every installed driver package is held" "" \
            "$(comm -23 <(awk '{print $1}' <<<"$versions" | sort) <(printf '%s\n' "$held"))"
    fi

    # The module of the flavour, built by DKMS and loaded.
    local kind="x86_64 Kernel Module"
    [[ "$flavor" == open ]] && kind="Open Kernel Module for x86_64"
    check "$name: the loaded module is the $flavor $newest" \
        grep -q "^NVRM version: NVIDIA UNIX $kind  $newest  " "$ROOT/proc/driver/nvidia/version"

    # 620 is published; plain apt keeps every driver package on the branch.
    local policy sim off
    policy=$(in_root "$ROOT" 30 apt-cache policy nvidia-open 2>&1 || true)
    printf '%s\n' "$policy" >"$OUT/policy-nvidia-open.txt"
    check "$name: the index publishes nvidia-open $E2E_U620-1ubuntu1" grep -q " $E2E_U620-1ubuntu1 " <<<"$policy"
    assert_dist_upgrade_keeps "$name: apt-get -s dist-upgrade changes no NVIDIA driver package"
    sim=$(apt_sim install nvidia-open)
    printf '%s\n' "$sim" >"$OUT/install-nvidia-open.txt"
    log "$name: install nvidia-open would: $(grep -E '^(Inst|Remv) ' <<<"$sim" | paste -sd';')"
    log "$name: install nvidia-open: $(grep -E '^E: ' <<<"$sim" | paste -sd';')"
    off=$(off_branch "$b" "$sim")
    assert_eq "$name: apt-get -s install nvidia-open installs no driver package of another branch" "" "$off"

    assert_eq "$name: journal result" "done" "$(journal_result)"
    assert_eq "$name: dpkg --audit is empty" "" "$(dpkg_audit)"
    SPENT[$name]=$((SECONDS - t0))
    log "--- case $name: ${SPENT[$name]} s ---"
    kill_procs_in_root || true
    rootfs_remove "$ROOT"
}

U580=$E2E_U580 U595=$E2E_U595 U610=$E2E_U610
case_run 580 proprietary "$U580" "" \
    "cuda-drivers-580 nvidia-driver-580 nvidia-dkms-580 nvidia-kernel-source-580 libnvidia-compute-580 nvidia-utils-580 nvidia-compute-utils-580 nvidia-persistenced" \
    "nvidia-open-580 nvidia-driver-580-open nvidia-dkms-580-open cuda-drivers nvidia-open nvidia-driver nvidia-dkms"
case_run 580 open "$U580" "" \
    "nvidia-open-580 nvidia-driver-580-open nvidia-dkms-580-open nvidia-kernel-source-580-open libnvidia-compute-580 nvidia-utils-580 nvidia-compute-utils-580 nvidia-persistenced" \
    "cuda-drivers-580 nvidia-driver-580 nvidia-dkms-580 cuda-drivers nvidia-open nvidia-driver-open nvidia-dkms-open"
case_run 595 proprietary "$U595" 595-1ubuntu1 \
    "cuda-drivers nvidia-driver nvidia-dkms nvidia-kernel-source nvidia-kernel-common libnvidia-compute nvidia-persistenced" \
    "nvidia-open nvidia-driver-open nvidia-dkms-open cuda-drivers-580 nvidia-driver-580"
case_run 595 open "$U595" 595-1ubuntu1 \
    "nvidia-open nvidia-driver-open nvidia-dkms-open nvidia-kernel-source-open nvidia-kernel-common libnvidia-compute nvidia-persistenced" \
    "cuda-drivers nvidia-driver nvidia-dkms nvidia-open-580 nvidia-driver-580-open"
case_run 610 proprietary "$U610" 610-2ubuntu1 \
    "cuda-drivers nvidia-driver nvidia-dkms nvidia-kernel-source nvidia-kernel-common libnvidia-compute nvidia-persistenced" \
    "nvidia-open nvidia-driver-open nvidia-dkms-open"
case_run 610 open "$U610" 610-2ubuntu1 \
    "nvidia-open nvidia-driver-open nvidia-dkms-open nvidia-kernel-source-open nvidia-kernel-common libnvidia-compute nvidia-persistenced" \
    "cuda-drivers nvidia-driver nvidia-dkms"

OUT=$OUT_ALL
log "time per case: $(for k in 580-proprietary 580-open 595-proprietary 595-open 610-proprietary 610-open; do printf '%s=%ss ' "$k" "${SPENT[$k]:-?}"; done)"
ROOT=$TEMPLATE
scenario_end
