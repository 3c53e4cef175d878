#!/usr/bin/env bash
# e2e-timeout: 900
# (43) Debian 12, NVIDIA's Debian names, branches 580 and 595, each on its own fresh root (the
# template root copied, one mirror) against the recorded 2026 graph (the mirror's nvidia-2026/
# tree, profiles/e2e-2026.yaml.in). 580: the built-in cv-train as it ships (R580 open, held;
# CUDA 13.0), where NVIDIA's Debian metas depend floor-only and 595 is published. 595: the same
# profile with `driver: {branch: "595"}`, where 580 is published too. Each: apply exits 0, verify
# exits 0, the next `plan --detailed-exitcode` finds nothing to do (0), every installed NVIDIA
# driver component is of the branch's newest Debian build, the lock is NVIDIA's documented one
# for Debian (nvidia-driver-pinning-<branch> and its pin file, no apt-mark holds), and plain
# `apt-get dist-upgrade` would move none of them to another branch. debian12's recorded graph
# ends at 595, so on 595 that last check guards the pin's effect, not a newer branch.
# Measured 200 s (580: 90 s, 595: 84 s; 46 running beside it) on the shared 2-core machine.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
TEMPLATE=$ROOT
OUT_ALL=$OUT

# shellcheck source=lib/driver_graph.sh
source "$E2E_DIR/lib/driver_graph.sh"

# case_run BRANCH DEBIAN-BUILD PIN-VERSION OTHER-PUBLISHED: one case on a fresh copy of the template.
declare -A SPENT=()
case_run() {
    local b=$1 build=$2 pin=$3 other=$4 t0=$SECONDS profile=$PROFILE_IN_ROOT
    local rev="$2-1"
    log "--- case $b: cv-train on branch $b, expecting $rev ---"
    ROOT=$(rootfs_copy "$TEMPLATE" "$SCENARIO-$b")
    OUT=$OUT_ALL/$b
    mkdir -p "$OUT"
    if [[ "$b" != 580 ]]; then # cv-train ships 580; other branches through an overlay
        profile=/etc/gpuprov/e2e-$b.yaml
        printf 'name: e2e-%s\nextends: %s\ndriver: {branch: "%s", flavor: open}\n' "$b" "$PROFILE_IN_ROOT" "$b" >"$ROOT$profile"
    fi

    gp apply "$profile" --yes # lib/scenario.sh then checks plan --detailed-exitcode gives 0
    expect_rc "$b: apply on a fresh Debian 12 host, the 2026 graph" 0
    gp verify "$profile"
    expect_rc "$b: verify after apply" 0
    assert_grep "$b: cuda source: the 2026 tree, debian12 slug" \
        "^URIs: *https://127\.0\.0\.1:$MIRROR_PORT/nvidia-2026/compute/cuda/repos/debian12/x86_64/?$" \
        "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources"

    # The branch lock: NVIDIA's pinning package for the branch and its preferences file, no holds.
    assert_pkg "nvidia-driver-pinning-$b" "$pin"
    check "$b: the $b pin file is in preferences.d" grep -qx "Pin: version $b\\.\\*" "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
    assert_eq "$b: no apt-mark holds beside NVIDIA's pin" "" "$(holds)"
    # The open flavour through Debian's names, at the branch's newest build.
    assert_pkg nvidia-open "$rev"
    assert_pkg nvidia-kernel-open-dkms "$rev"
    assert_no_pkg nvidia-kernel-dkms
    local versions
    versions=$(driver_versions)
    printf '%s\n' "$versions" >"$OUT/driver-packages.txt"
    log "$b: installed driver packages: $(paste -sd, <<<"$versions")"
    check "$b: more than 5 driver packages installed" test "$(wc -l <<<"$versions")" -gt 5
    assert_eq "$b: every installed driver component is $rev (none of $other)" "" \
        "$(grep -v " $rev\$" <<<"$versions" || true)"

    # The toolkit and libraries of CUDA 13.0.
    assert_pkg cuda-toolkit-13-0 13.0.2-1
    assert_no_pkg cuda-13-0 # cuda-X-Y drags a driver in; never used
    assert_pkg libcudnn9-cuda-13 9.15.0.58-1
    assert_pkg libnccl2 2.27.7-1+cuda13.0
    assert_nvcc_on_path 13.0 13.0.88

    # The open module, built by DKMS and loaded.
    check "$b: the loaded module is the open $build" \
        grep -q "^NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $build  " "$ROOT/proc/driver/nvidia/version"

    # The other branch is published and apt could see it: the pin, not an empty index, keeps the branch.
    local policy sim
    policy=$(in_root "$ROOT" 30 apt-cache policy nvidia-open 2>&1 || true)
    printf '%s\n' "$policy" >"$OUT/policy-nvidia-open.txt"
    check "$b: the index publishes nvidia-open $other-1" grep -q " $other-1 " <<<"$policy"
    # Plain apt: dist-upgrade moves no driver package to another branch.
    sim=$(in_root "$ROOT" 120 apt-get -s -o APT::Get::Show-Versions=1 dist-upgrade 2>&1 || true)
    printf '%s\n' "$sim" >"$OUT/dist-upgrade.txt"
    log "$b: dist-upgrade would: $(grep -E '^(Inst|Remv) ' <<<"$sim" | paste -sd';')"
    assert_eq "$b: apt-get -s dist-upgrade moves no NVIDIA driver package off $b" "" \
        "$(grep -E "^(Inst|Remv) ${DRIVER_RE#^}" <<<"$sim" | grep -v "^Inst [^ ]* \[[^]]*\] ($rev " || true)"

    assert_eq "$b: journal result" "done" "$(journal_result)"
    assert_eq "$b: dpkg --audit is empty" "" "$(dpkg_audit)"
    SPENT[$b]=$((SECONDS - t0))
    log "--- case $b: ${SPENT[$b]} s ---"
    kill_procs_in_root || true
    rootfs_remove "$ROOT"
}

case_run 580 "$E2E_D580" 580-5 "$E2E_D595"
case_run 595 "$E2E_D595" 595-1 "$E2E_D580"

OUT=$OUT_ALL
log "time per case: 580=${SPENT[580]:-?}s 595=${SPENT[595]:-?}s"
ROOT=$TEMPLATE
scenario_end
