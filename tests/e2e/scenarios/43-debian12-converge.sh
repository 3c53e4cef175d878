#!/usr/bin/env bash
# e2e-timeout: 900
# (43) The built-in cv-train (driver R580 open, held; CUDA 13.0) converges on a Debian 12 host
# against the recorded 2026 graph (the mirror's nvidia-2026/ tree, profiles/e2e-2026.yaml.in),
# where NVIDIA's Debian metas depend floor-only and branch 595 is published: apply exits 0, verify
# exits 0, a following `plan --detailed-exitcode` finds nothing to do (0), every installed NVIDIA
# driver component is the 580 branch's, and plain `apt-get dist-upgrade` would move none of them
# to another branch (the lock NVIDIA documents for Debian: nvidia-driver-pinning-580, no holds).
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

# driver_versions: "name version" of every installed NVIDIA driver package (pinning packages apart)
driver_versions() {
    # shellcheck disable=SC2016 # dpkg-query format
    in_root "$ROOT" 30 dpkg-query -W -f='${Status}\t${Package} ${Version}\n' 2>/dev/null |
        awk -F'\t' '$1 ~ /^(install|hold) ok installed$/ {print $2}' |
        grep -E '^(nvidia-|libnvidia-|cuda-drivers|xserver-xorg-video-nvidia|libcuda1 )' |
        grep -Ev '^(nvidia-driver-pinning|nvidia-container-toolkit|libnvidia-container)' || true
}

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on a fresh Debian 12 host, cv-train on the 2026 graph" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after apply" 0
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode after apply: nothing to do" 0

SRC=$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources
assert_grep "cuda source: the 2026 tree, debian12 slug" \
    "^URIs: *https://127\.0\.0\.1:$MIRROR_PORT/nvidia-2026/compute/cuda/repos/debian12/x86_64/?$" "$SRC"

# The branch lock: NVIDIA's pinning package for 580 and its preferences file.
assert_pkg nvidia-driver-pinning-580 580-5
check "the 580 pin file is in preferences.d" grep -qx 'Pin: version 580\.\*' "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
# The open flavour through Debian's names, at the branch's newest build.
assert_pkg nvidia-open "$E2E_D580-1"
assert_pkg nvidia-kernel-open-dkms "$E2E_D580-1"
assert_no_pkg nvidia-kernel-dkms
versions=$(driver_versions)
log "installed driver packages: $(paste -sd, <<<"$versions")"
check "more than 5 driver packages installed" test "$(wc -l <<<"$versions")" -gt 5
assert_eq "every installed driver component is $E2E_D580 (none of 595)" "" \
    "$(grep -v " $E2E_D580-1\$" <<<"$versions" || true)"
log "apt-mark holds: $(holds | paste -sd,)"

# The toolkit and libraries of CUDA 13.0.
assert_pkg cuda-toolkit-13-0 13.0.2-1
assert_no_pkg cuda-13-0 # cuda-X-Y drags a driver in; never used
assert_pkg libcudnn9-cuda-13 9.15.0.58-1
assert_pkg libnccl2 2.27.7-1+cuda13.0
assert_nvcc_on_path 13.0 13.0.88

# The open module, built by DKMS and loaded.
check "the loaded module is the open $E2E_D580" \
    grep -q "^NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $E2E_D580  " "$ROOT/proc/driver/nvidia/version"

# 595 is published and apt could see it: the pin, not an empty index, keeps the branch.
policy=$(in_root "$ROOT" 30 apt-cache policy nvidia-open 2>&1 || true)
printf '%s\n' "$policy" >"$OUT/policy-nvidia-open.txt"
check "the index publishes nvidia-open $E2E_D595-1" grep -q " $E2E_D595-1 " <<<"$policy"
# Plain apt: dist-upgrade moves no driver package to another branch.
sim=$(in_root "$ROOT" 120 apt-get -s -o APT::Get::Show-Versions=1 dist-upgrade 2>&1 || true)
printf '%s\n' "$sim" >"$OUT/dist-upgrade.txt"
log "dist-upgrade would: $(grep -E '^(Inst|Remv) ' <<<"$sim" | paste -sd';')"
assert_eq "apt-get -s dist-upgrade moves no NVIDIA driver package off 580" "" \
    "$(grep -E '^(Inst|Remv) (nvidia-|libnvidia-|cuda-drivers|xserver-xorg-video-nvidia|libcuda1 )' <<<"$sim" |
        grep -v "^Inst [^ ]* \[[^]]*\] ($E2E_D580-1 " || true)"

assert_eq "journal result" "done" "$(journal_result)"
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
scenario_end
