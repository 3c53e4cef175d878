#!/usr/bin/env bash
# e2e-timeout: 600
# (29) The mirror's recorded 2026 driver graph (its nvidia-2026/ tree, docs/e2e.md) behaves as
# NVIDIA's repositories do, asked of plain apt and dpkg (no gpuprov), with the stand-in .debs
# really installed: the index carries exactly the recorded control fields
# (tests/fixtures/nvidia-repos); on an Ubuntu 24.04-shaped root there is no cuda-drivers-595, the
# pinning package holds nvidia-open on its branch (620 published), an unpinned nvidia-open=595.x
# takes 620's driver (the floor-only trap), nvidia-open-580 conflicts with cuda-drivers-580, the
# 580 pin resolves nvidia-fabricmanager-580 to nvidia-fabricmanager 580.x, and the open modules
# build and load; on a Debian 12 root cuda-drivers-580 takes 595 without a pin ([F1]) and stays on
# 580 with one. The same claims, on the index alone, are ctest nvidia_repo_fixtures_apt_graph.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean --no-gpuprov
FIXTURES=$REPO_ROOT/tests/fixtures/nvidia-repos

# --- the served index is the record ------------------------------------------------------------
# Every fixture stanza is in the slug's Packages with exactly its control fields (X- stripped),
# and the index has no other NVIDIA driver package.
report=$("$E2E_PYTHON" - "$FIXTURES" "$MIRROR_DIR/www/$E2E_TREE_2026" <<'PY'
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ["E2E_DIR"], "mirror"))
import apt_fixtures
fixtures, repos = sys.argv[1], sys.argv[2]
ADDED = {"Filename", "Size", "MD5sum", "SHA1", "SHA256", "SHA512", "Maintainer", "Installed-Size", "Priority",
         "Description", "Description-md5"}
for slug in apt_fixtures.SLUGS:
    with open(os.path.join(repos, slug, "x86_64", "Packages")) as f:
        served = {(st["Package"], st["Version"]): st for _, st in apt_fixtures.parse(f.read(), slug)}
    _, stanzas = apt_fixtures.load_slug(os.path.join(fixtures, slug))
    bad = []
    for _, st in stanzas:
        got = served.pop((st["Package"], st["Version"]), None)
        want = {k: v for k, v in st.items() if k in apt_fixtures.CONTROL_FIELDS and k != "Description"}
        if got is None:
            bad.append("%s %s missing" % (st["Package"], st["Version"]))
        elif {k: v for k, v in got.items() if k not in ADDED} != want:
            bad.append("%s %s differs" % (st["Package"], st["Version"]))
    # what else the index serves: toolkits and libraries build.sh makes itself, no driver package
    extra = sorted(n for n, _ in served if n.startswith(("nvidia-", "libnvidia-", "cuda-drivers")))
    print("%s %d %s" % (slug, len(stanzas), "; ".join(bad + ["extra " + e for e in extra]) or "exact"))
PY
)
while read -r slug n verdict; do
    assert_eq "$slug: the served index carries the $n recorded stanzas exactly" exact "$verdict"
done <<<"$report"

# use_repo ROOT SLUG: NVIDIA's repository (the mirror's 2026 tree) as the guide sets it up (deb822,
# Signed-By the key).
use_repo() {
    gpg --dearmor <"$MIRROR_DIR/www/$E2E_TREE_2026/$2/x86_64/3bf863cc.pub" >"$1/usr/share/keyrings/cuda-archive-keyring.gpg"
    printf 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: /usr/share/keyrings/cuda-archive-keyring.gpg\n' \
        "$(mirror_url "$E2E_TREE_2026/$2/x86_64/")" >"$1/etc/apt/sources.list.d/cuda.sources"
    check "$2: apt-get update against the signed index" in_root "$1" 120 apt-get -q update
}
apt_sim() { in_root "$ROOT" 60 apt-get -s -o APT::Get::Show-Versions=1 "$@" 2>&1 || true; }
# planned PKG SIM-OUTPUT: the version apt would install
planned() { sed -n "s/^Inst $1 \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\2/p" <<<"$2"; }
apt_install() { in_root "$ROOT" 300 apt-get -q -y -o DPkg::Lock::Timeout=60 install "$@"; }
# driver_versions: "name version" of every installed NVIDIA driver package (pinning packages apart)
driver_versions() {
    # shellcheck disable=SC2016 # dpkg-query format
    in_root "$ROOT" 30 dpkg-query -W -f='${Status}\t${Package} ${Version}\n' 2>/dev/null |
        awk -F'\t' '$1 ~ /^install ok installed$/ {print $2}' |
        grep -E '^(nvidia-|libnvidia-|cuda-drivers|xserver-xorg-video-nvidia|libcuda1 )' | grep -v '^nvidia-driver-pinning' || true
}

# --- Ubuntu 24.04 ------------------------------------------------------------------------------
rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/hosts/ubuntu-24.04/etc/os-release" "$ROOT/etc/os-release"
use_repo "$ROOT" ubuntu2404

out=$(apt_sim install cuda-drivers-595)
check "ubuntu2404: apt-get install cuda-drivers-595: no such package" grep -q 'Unable to locate package cuda-drivers-595' <<<"$out"
out=$(apt_sim install nvidia-open-580 cuda-drivers-580)
check "ubuntu2404: nvidia-open-580 conflicts with cuda-drivers-580" grep -q 'nvidia-open-580 : Conflicts: cuda-drivers-580' <<<"$out"
out=$(apt_sim install nvidia-fabricmanager-580)
check "ubuntu2404: no pin: nvidia-fabricmanager-580 has no installation candidate" grep -q "has no installation candidate" <<<"$out"

# The trap: nvidia-open=595.x depends on nvidia-driver-open (>= 595.x), so without a pin apt takes
# the newest branch's driver ([C16]); even with the pinning package in the same transaction (the
# pin file is not read before the resolution).
out=$(apt_sim install "nvidia-open=$E2E_U595-1ubuntu1")
assert_eq "ubuntu2404: no pin: nvidia-open=$E2E_U595 takes nvidia-driver-open $E2E_U620 (the newest)" \
    "$E2E_U620-1ubuntu1" "$(planned nvidia-driver-open "$out")"
out=$(apt_sim install nvidia-driver-pinning-595 nvidia-open)
assert_eq "ubuntu2404: the pinning package in the same transaction does not help" \
    "$E2E_U620-1ubuntu1" "$(planned nvidia-driver-open "$out")"

# The guide's way: the pinning package first, on its own.
check "ubuntu2404: apt-get install nvidia-driver-pinning-595" apt_install nvidia-driver-pinning-595
check "ubuntu2404: its pin file (Pin-Priority 1000, version 595.*)" grep -qx 'Pin: version 595\.\*' "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
check "ubuntu2404: the pin file is the recorded one" cmp -s "$FIXTURES/ubuntu2404/pin/nvidia-driver-pinning-595" "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
check "ubuntu2404: apt-get install nvidia-open" apt_install nvidia-open
assert_pkg nvidia-open "$E2E_U595-1ubuntu1"
assert_pkg nvidia-driver-open "$E2E_U595-1ubuntu1"
assert_pkg nvidia-dkms-open "$E2E_U595-1ubuntu1"
assert_pkg libnvidia-compute "$E2E_U595-1ubuntu1"
assert_pkg nvidia-persistenced "$E2E_U595-1ubuntu1"
assert_no_pkg nvidia-dkms
versions=$(driver_versions)
log "installed driver packages: $(paste -sd, <<<"$versions")"
assert_eq "ubuntu2404: every installed driver component is $E2E_U595 (none 610/620)" "" \
    "$(grep -v " $E2E_U595-1ubuntu1\$" <<<"$versions" || true)"
check "ubuntu2404: more than 10 driver packages installed" test "$(wc -l <<<"$versions")" -gt 10
out=$(apt_sim dist-upgrade)
assert_eq "ubuntu2404: pinned: dist-upgrade moves nothing (610 and 620 published)" "" "$(grep -E '^(Inst|Remv) ' <<<"$out" || true)"
out=$(apt_sim install nvidia-open)
assert_eq "ubuntu2404: pinned: apt-get install nvidia-open moves nothing" "" "$(grep -E '^(Inst|Remv) ' <<<"$out" || true)"
check "ubuntu2404: fabric manager, NSCQ, IMEX under the 595 pin" apt_install nvidia-fabricmanager libnvidia-nscq nvidia-imex
for p in nvidia-fabricmanager libnvidia-nscq nvidia-imex nvidia-modprobe; do assert_pkg "$p" "$E2E_U595-1ubuntu1"; done

# The payload the driver steps rely on: the open module, built by DKMS, loaded by modprobe.
check "ubuntu2404: no module loaded by the install" test ! -e "$ROOT/proc/driver/nvidia/version"
assert_eq "ubuntu2404: dkms status" "nvidia/$E2E_U595, $SIM_KERNEL, x86_64: installed" "$(in_root "$ROOT" 10 dkms status)"
check "ubuntu2404: modprobe nvidia" in_root "$ROOT" 10 modprobe nvidia
check "ubuntu2404: the loaded module is the open $E2E_U595" \
    grep -q "^NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $E2E_U595  " "$ROOT/proc/driver/nvidia/version"
out=$(in_root "$ROOT" 10 nvidia-smi --query-gpu=driver_version --format=csv,noheader | sort -u)
assert_eq "ubuntu2404: nvidia-smi reports $E2E_U595" "$E2E_U595" "$out"
check "ubuntu2404: nvidia-smi reports CUDA 13.2" grep -q 'CUDA Version: 13\.2' <(in_root "$ROOT" 10 nvidia-smi)
check "ubuntu2404: fabric manager's version" grep -qx "Fabric Manager version is : $E2E_U595" <(in_root "$ROOT" 10 nv-fabricmanager)

# The 580 pin: the suffixed branch. Its fabric manager alias resolves only under it.
check "ubuntu2404: purge the 595 stack" in_root "$ROOT" 300 apt-get -q -y purge nvidia-open nvidia-driver-open \
    nvidia-dkms-open nvidia-kernel-source-open nvidia-kernel-common nvidia-firmware libnvidia-compute libnvidia-gl \
    libnvidia-gpucomp libnvidia-decode libnvidia-encode libnvidia-fbc1 libnvidia-cfg1 xserver-xorg-video-nvidia \
    nvidia-persistenced nvidia-fabricmanager libnvidia-nscq nvidia-imex nvidia-modprobe
check "ubuntu2404: apt-get install nvidia-driver-pinning-580 (replaces the 595 pin)" apt_install nvidia-driver-pinning-580
assert_no_pkg nvidia-driver-pinning-595
check "ubuntu2404: the 580 pin file took the conffile over" grep -qx 'Pin: version 580\.\*' "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
check "ubuntu2404: apt-get install nvidia-fabricmanager-580" apt_install nvidia-fabricmanager-580
assert_pkg nvidia-fabricmanager "$E2E_U580-1"
assert_no_pkg nvidia-fabricmanager-580
out=$(apt_sim install nvidia-open)
assert_eq "ubuntu2404: 580 pin: nvidia-open resolves to nvidia-driver-580-open $E2E_U580" \
    "$E2E_U580-1ubuntu1" "$(planned nvidia-driver-580-open "$out")"
assert_eq "ubuntu2404: 580 pin: ... through nvidia-open-580" "$E2E_U580-1ubuntu1" "$(planned nvidia-open-580 "$out")"

# --- Debian 12 ---------------------------------------------------------------------------------
rootfs_remove "$ROOT"
ROOT=$(rootfs_new "$SCENARIO-debian12")
rootfs_prepare_host "$ROOT" clean
use_repo "$ROOT" debian12
out=$(apt_sim install cuda-drivers-580)
assert_eq "debian12: no pin: cuda-drivers-580 pulls nvidia-driver $E2E_D595 ([F1])" "$E2E_D595-1" "$(planned nvidia-driver "$out")"
assert_eq "debian12: no pin: ... and nvidia-kernel-dkms $E2E_D595" "$E2E_D595-1" "$(planned nvidia-kernel-dkms "$out")"
check "debian12: apt-get install nvidia-driver-pinning-580" apt_install nvidia-driver-pinning-580
assert_pkg nvidia-driver-pinning-580 580-5
check "debian12: apt-get install cuda-drivers-580" apt_install cuda-drivers-580
versions=$(driver_versions)
log "installed driver packages: $(paste -sd, <<<"$versions")"
assert_eq "debian12: every installed driver component is $E2E_D580" "" "$(grep -v " $E2E_D580-1\$" <<<"$versions" || true)"
assert_pkg nvidia-kernel-dkms "$E2E_D580-1"
assert_no_pkg nvidia-kernel-open-dkms
rootfs_remove "$ROOT"
ROOT=""
scenario_end
