#!/usr/bin/env bash
# Build the NVIDIA-shaped test mirror: stand-in .debs with NVIDIA's package names, versions and
# dependency shape; flat apt repos signed with a throwaway key; a TLS CA + server cert for 127.0.0.1.
#
# usage: mirror/build.sh OUTDIR
# Bench-only variants (scripts/bench.sh; the e2e suite sets neither, so it sees the default mirror):
#   MIRROR_SCALE=K      every package also depends on K-1 stand-in fillers (NAME-benchfill-I, one
#                       small file each), so any install's package set is K times as large
#   MIRROR_INDEX_PAD=N  N extra index-only records in each CUDA repository's Packages (NVIDIA's
#                       real index has thousands), never installed: their .deb does not exist
# OUTDIR/www/...            document root served by server.py
# OUTDIR/fingerprint        signing key fingerprint (40 hex, upper case)
# OUTDIR/wrong-fingerprint  fingerprint of the key served as wrong-key.pub (signs nothing)
# OUTDIR/tls/{ca.pem,server.pem,server.key}
set -euo pipefail

OUT=${1:?usage: build.sh OUTDIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/www" "$OUT/pool" "$OUT/stage" "$OUT/tls" "$OUT/gnupg" "$OUT/index-pad" "$OUT/canonical-module-key"
mkdir -p "$OUT/www" "$OUT/pool" "$OUT/stage" "$OUT/tls"

DRV=550.90.07 # the newest build of branch 550; 550.54.15 is the older one
CTK=1.17.3
MAINT='cudatools <cudatools@nvidia.com>'

# shellcheck source=mirror/payload.sh
source "$HERE/payload.sh" # mkso and the payload both mirror halves package

# mkdeb NAME VERSION DEPENDS DESCRIPTION [SECTION]; files come from $OUT/stage/NAME_VERSION/root,
# maintainer scripts from the same dir's DEBIAN/ (postinst, prerm, triggers, conffiles).
pkgdir() { printf '%s/stage/%s_%s' "$OUT" "$1" "$2"; }
MIRROR_SCALE=${MIRROR_SCALE:-1}
MIRROR_INDEX_PAD=${MIRROR_INDEX_PAD:-0}
mkdeb() {
    local name=$1 ver=$2 deps=$3 desc=$4 section=${5:-multiverse/devel}
    local d size
    if ((MIRROR_SCALE > 1)); then deps=$(benchfill_deps "$name" "$deps"); fi
    d=$(pkgdir "$name" "$ver")
    mkdir -p "$d/root/DEBIAN"
    if [[ -d "$d/DEBIAN" ]]; then cp -a "$d/DEBIAN/." "$d/root/DEBIAN/"; fi
    size=$(du -sk --exclude=DEBIAN "$d/root" | cut -f1)
    {
        printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: %s\n' "$name" "$ver" "$MAINT"
        printf 'Installed-Size: %s\n' "$size"
        if [[ -n "$deps" ]]; then printf 'Depends: %s\n' "$deps"; fi
        if [[ -n "${EXTRA_FIELDS:-}" ]]; then printf '%s\n' "$EXTRA_FIELDS"; fi
        printf 'Section: %s\nPriority: optional\nHomepage: https://developer.nvidia.com/cuda-zone\n' "$section"
        printf 'Description: %s\n gpuprov e2e stand-in package (not NVIDIA software).\n' "$desc"
    } >"$d/root/DEBIAN/control"
    chmod 0755 "$d/root/DEBIAN"
    local s
    for s in postinst prerm postrm preinst; do
        if [[ -f "$d/root/DEBIAN/$s" ]]; then chmod 0755 "$d/root/DEBIAN/$s"; fi
    done
    dpkg-deb --root-owner-group -Zgzip --build "$d/root" "$OUT/pool/${name}_${ver}_amd64.deb" >/dev/null
}
# benchfill_deps NAME DEPS: DEPS plus NAME's MIRROR_SCALE-1 fillers, each built once (same repo
# as NAME: the filler's name starts with NAME, so mkrepo's globs pick it up).
benchfill_deps() {
    local name=$1 deps=$2 i f
    for ((i = 1; i < MIRROR_SCALE; i++)); do
        f="$name-benchfill-$i"
        if [[ ! -f "$OUT/pool/${f}_1.0_amd64.deb" ]]; then
            put "$f" 1.0 "/usr/share/gpuprov-bench/$f" 0644 <<<"bench filler $i of $name"
            EXTRA_FIELDS="" MIRROR_SCALE=1 mkdeb "$f" 1.0 "" "gpuprov bench filler" "multiverse/libs"
        fi
        deps="${deps:+$deps, }$f"
    done
    printf '%s' "$deps"
}
put() { # NAME VERSION PATH MODE < content
    local f
    f="$(pkgdir "$1" "$2")/root$3"
    mkdir -p "$(dirname "$f")"
    cat >"$f"
    chmod "$4" "$f"
}
script() { # NAME VERSION SCRIPT < content
    local d
    d="$(pkgdir "$1" "$2")/DEBIAN"
    mkdir -p "$d"
    cat >"$d/$3"
}
lib() { # NAME VERSION SONAME REALNAME
    local d
    d="$(pkgdir "$1" "$2")/root/usr/lib/x86_64-linux-gnu"
    mkdir -p "$d"
    mkso "$3" "$d/$4"
    ln -sf "$4" "$d/$3"
    printf 'activate-noawait ldconfig\n' | script "$1" "$2" triggers
}

# --- driver: cuda-drivers-<b> (>=) -> nvidia-driver-<b> -> nvidia-dkms-<b>, libnvidia-compute-<b> --
# NVIDIA's branch meta package depends with `>=` (reference 3.2), so apt may pick any newer build
# of the branch: each branch here carries two builds, and holding only the meta package holds
# nothing. The modules (nvidia, and nvidia-peermem, which ships with the driver since R470) are
# built by DKMS in nvidia-dkms-<b>'s postinst against the running kernel (the harness's dkms
# stand-in, lib/dkms-standin) and never loaded at install time: the driver step's `modprobe
# nvidia` loads it (lib/modprobe-standin), or a reboot does.
# DKMS's BUILD_EXCLUSIVE_KERNEL: the builds here support kernels up to 6.11; on a newer one
# DKMS skips the build, the install succeeds and the module never loads (e2e 15).
DRIVER_KERNELS='^(4\.|5\.|6\.([0-9]|1[01])\.)'
driver_build() { # BRANCH FULLVERSION CUDA-VERSION-IT-REPORTS
    local br=$1 v=$2 pv="$2-1"
    lib "libnvidia-compute-$br" "$pv" libnvidia-ml.so.1 "libnvidia-ml.so.$v"
    lib "libnvidia-compute-$br" "$pv" libcuda.so.1 "libcuda.so.$v"
    # Every branch ships the same sonames: at most one branch can be installed (as for real).
    EXTRA_FIELDS=$'Provides: libnvidia-compute-stub-any\nConflicts: libnvidia-compute-stub-any' \
        mkdeb "libnvidia-compute-$br" "$pv" "" "NVIDIA libcompute package" "multiverse/libs"

    put "nvidia-dkms-$br" "$pv" "/usr/src/nvidia-$v/dkms.conf" 0644 <<DKMS
PACKAGE_NAME="nvidia"
PACKAGE_VERSION="$v"
AUTOINSTALL="yes"
BUILT_MODULE_NAME[0]="nvidia"
DEST_MODULE_LOCATION[0]="/updates/dkms"
BUILT_MODULE_NAME[1]="nvidia-peermem"
DEST_MODULE_LOCATION[1]="/updates/dkms"
BUILD_EXCLUSIVE_KERNEL="$DRIVER_KERNELS"
DKMS
    # dh_dkms' postinst: add, then build+install for the running kernel. A build DKMS skips
    # (BUILD_EXCLUSIVE, exit 77) is not an error; a failed build fails the package.
    script "nvidia-dkms-$br" "$pv" postinst <<POSTINST
#!/bin/sh
set -e
if [ "\$1" = configure ] && command -v dkms >/dev/null 2>&1; then
    dkms add -m nvidia -v $v >/dev/null 2>&1 || true
    kernel=\$(cat /proc/sys/kernel/osrelease)
    rc=0
    dkms install -m nvidia -v $v -k "\$kernel" || rc=\$?
    if [ "\$rc" -eq 77 ]; then
        echo "nvidia-dkms-$br: DKMS skipped the build for kernel \$kernel" >&2
    elif [ "\$rc" -ne 0 ]; then
        exit "\$rc"
    fi
fi
exit 0
POSTINST
    script "nvidia-dkms-$br" "$pv" prerm <<PRERM
#!/bin/sh
set -e
if command -v dkms >/dev/null 2>&1; then dkms remove -m nvidia -v $v --all >/dev/null 2>&1 || true; fi
exit 0
PRERM
    EXTRA_FIELDS=$'Provides: nvidia-dkms-stub-any\nConflicts: nvidia-dkms-stub-any' \
        mkdeb "nvidia-dkms-$br" "$pv" "" "NVIDIA DKMS package" "multiverse/kernel"

    sed "s/^CUDA_VERSION=.*/CUDA_VERSION=$3/" "$HERE/stubs/nvidia-smi" | put "nvidia-driver-$br" "$pv" /usr/bin/nvidia-smi 0755
    # nvidia-persistenced (shipped in the branch's driver package here, so branches cannot mix):
    # NVIDIA's unit starts it with --no-persistence-mode (hence the override NVIDIA's ansible
    # role, and gpuprov, install); the daemon needs the loaded module.
    payload_persistenced | put "nvidia-driver-$br" "$pv" /usr/bin/nvidia-persistenced 0755
    payload_persistenced_unit | put "nvidia-driver-$br" "$pv" /lib/systemd/system/nvidia-persistenced.service 0644
    EXTRA_FIELDS=$'Provides: nvidia-driver-stub-any\nConflicts: nvidia-driver-stub-any' \
        mkdeb "nvidia-driver-$br" "$pv" "nvidia-dkms-$br (= $pv), libnvidia-compute-$br (= $pv)" \
        "NVIDIA driver metapackage" "multiverse/libs"
    mkdeb "cuda-drivers-$br" "$pv" "nvidia-driver-$br (>= $v)" "CUDA Driver meta-package, branch-specific" "multiverse/metapackages"

    # fabric manager (NVSwitch systems): exactly the driver's version (reference 3.3)
    payload_fabricmanager "$v" | put "nvidia-fabricmanager-$br" "$pv" /usr/bin/nv-fabricmanager 0755
    payload_fabricmanager_unit | put "nvidia-fabricmanager-$br" "$pv" /lib/systemd/system/nvidia-fabricmanager.service 0644
    mkdeb "nvidia-fabricmanager-$br" "$pv" "" "Fabric Manager for NVSwitch based systems."
    mkdeb "cuda-drivers-fabricmanager-$br" "$pv" "nvidia-fabricmanager-$br (= $pv), cuda-drivers-$br (= $pv)" "Meta-package for FM and Driver"
}
driver_build 535 535.161.08 12.2
driver_build 535 535.183.01 12.2
driver_build 550 550.54.15 12.4
driver_build 550 "$DRV" 12.4
driver_build 560 560.35.03 12.6
# The floating meta-package tracks the newest branch (so installing it would be the wrong branch).
mkdeb cuda-drivers 560.35.03-1 "cuda-drivers-560 (>= 560.35.03)" "CUDA Driver meta-package"

# --- the recorded 2026 driver graph: NVIDIA's indexes, served under nvidia-2026/ ----------------
# Two driver graphs live on this mirror, each in its own tree (docs/e2e.md):
#   compute/cuda/repos/<slug>/x86_64/              the legacy hand-written stand-ins above
#                                                  (535/550/560, CUDA 12.x), which most scenarios use
#   nvidia-2026/compute/cuda/repos/<slug>/x86_64/  the recorded graph below (580 suffixed and
#                                                  595/610/620 unsuffixed, pinning packages, CUDA 13.0)
# Same signing key, same TLS; the recorded .debs live in pool/<hash>/, so the legacy globs
# (pool/<name>*) never pick them up.
# Every NVIDIA driver package (metas, drivers, DKMS sources, libraries, pinning packages, fabric
# manager, NSCQ, IMEX) comes from tests/fixtures/nvidia-repos/<slug>/Packages: the .deb carries
# exactly the recorded control fields (our X- fields stripped), and its X-Payload says which
# stand-in files it installs. One .deb per recorded stanza, shared by the slugs that list it. The
# fixtures' README says where each stanza comes from.
FIXTURES=$(cd "$HERE/../../fixtures/nvidia-repos" && pwd)
TREE_2026=nvidia-2026/compute/cuda/repos # below www/
PY=${E2E_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}

# One python process builds them all (mirror/apt_debs.py: the payloads are payload.sh's and
# stubs/nvidia-smi, the DKMS packages' postinst builds the module with lib/dkms-standin, as the
# hand-written driver packages did) and says which .debs each slug's repository lists (mkrepo @SLUG).
# DCGM 4 (the dcgm step's packages) comes from the same fixtures (<slug>/Packages.dcgm, payloads
# from mirror/dcgm.sh) and is served on both trees: @<slug>-dcgm.
"$PY" "$HERE/apt_debs.py" build "$FIXTURES" "$OUT/pool" "$DRIVER_KERNELS" >"$OUT/stage/fixtures.plan"
for slug in ubuntu2404 ubuntu2204 debian12; do
    sed -n "s|^REPO $slug ||p" "$OUT/stage/fixtures.plan" >"$OUT/stage/fixtures.$slug"
    sed -n "s|^REPO $slug-dcgm ||p" "$OUT/stage/fixtures.plan" >"$OUT/stage/fixtures.$slug-dcgm"
done

# --- CUDA toolkits ----------------------------------------------------------------------------
# toolkit X.Y FULL NVCC_VERSION DRIVER_FLOOR: cuda-toolkit-X-Y (no driver) and cuda-X-Y, which
# pulls `cuda-drivers (>= floor)` as NVIDIA's cuda-runtime-X-Y does (reference §C).
toolkit() {
    local xy=$1 full=$2 dash=${1/./-} pv="$2-1" floor=$4 major=${1%%.*}
    local name="cuda-toolkit-$dash"
    payload_nvcc "$xy" | put "$name" "$pv" "/usr/local/cuda-$xy/bin/nvcc" 0755
    payload_cuda_version_json "$full" "$3" | put "$name" "$pv" "/usr/local/cuda-$xy/version.json" 0644
    mkdir -p "$(pkgdir "$name" "$pv")/root/usr/local/cuda-$xy/lib64"
    mkso "libcudart.so.$major" "$(pkgdir "$name" "$pv")/root/usr/local/cuda-$xy/lib64/libcudart.so.$3"
    ln -sf "libcudart.so.$3" "$(pkgdir "$name" "$pv")/root/usr/local/cuda-$xy/lib64/libcudart.so.$major"
    local prio=${dash//-/}
    # Real toolkits register /usr/local/cuda via update-alternatives. Optional slowness for the
    # kill -9 scenario: when /tmp/e2e-slow exists the postinst announces itself and sleeps 8 s.
    script "$name" "$pv" postinst <<POSTINST
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
    if [ -e /tmp/e2e-slow ]; then
        echo "\$\$" >/tmp/e2e-slow-started
        sleep 8
    fi
    update-alternatives --install /usr/local/cuda cuda /usr/local/cuda-$xy $prio
    update-alternatives --install /usr/local/cuda-$major cuda-$major /usr/local/cuda-$xy $prio
fi
exit 0
POSTINST
    script "$name" "$pv" prerm <<PRERM
#!/bin/sh
set -e
if [ "\$1" = remove ] || [ "\$1" = deconfigure ]; then
    update-alternatives --remove cuda /usr/local/cuda-$xy || true
    update-alternatives --remove cuda-$major /usr/local/cuda-$xy || true
fi
exit 0
PRERM
    mkdeb "$name" "$pv" "" "CUDA Toolkit $xy meta-package" "multiverse/metapackages"
    mkdeb "cuda-$dash" "$pv" "cuda-toolkit-$dash (= $pv), cuda-drivers (>= $floor)" "CUDA $xy meta-package (toolkit and driver)" "multiverse/metapackages"
}
toolkit 12.2 12.2.2 12.2.140 550.54.15
toolkit 12.4 12.4.1 12.4.131 550.54.15
toolkit 12.5 12.5.1 12.5.82 550.54.15
# CUDA 13.0 Update 2: cuda-toolkit-13-0 13.0.2-1 with nvcc V13.0.88 (several installs pin exactly
# this pair, code ids 40789239649, 69842786691, 70078694079; 13.0.3-1 also exists, [C-sbsa]);
# CUDA 13.0 needs driver >= 580.65.06 (nvidia-facts.md §1; the floor of cuda-13-0 INFERRED from
# cuda-runtime-11-8's `cuda-drivers (>= 520.61.05)`, reference §C).
toolkit 13.0 13.0.2 13.0.88 580.65.06

# --- cuDNN 9 ----------------------------------------------------------------------------------
# cudnn_build CUDA-MAJOR VERSION: libcudnn9-cuda-M, libcudnn9-dev-cuda-M and the cudnn9-cuda-M meta
# (reference §C, [C30]). 9.1.0.70-1 for CUDA 12 (nvidia-facts.md §4); 9.15.0.58-1 for CUDA 13,
# installed beside cuda=13.0.2-1 and libnccl2 +cuda13.0 in code id 10982805149 (also seen:
# 9.16.0.29-1, 9.17.1.4-1).
cudnn_build() {
    local m=$1 v=$2 up=${2%-*} other=""
    local mj=${up%%.*} mn patch
    mn=${up#*.} && mn=${mn%%.*}
    patch=${up#*.*.} && patch=${patch%%.*}
    # The CUDA 12 and CUDA 13 builds install the same files (libcudnn.so.9, the header names and
    # their alternative): one or the other (INFERRED from the shared paths).
    if [[ $m != 12 ]]; then other=libcudnn9-cuda-12; fi
    lib "libcudnn9-cuda-$m" "$v" libcudnn.so.9 "libcudnn.so.$mj.$mn.$patch"
    EXTRA_FIELDS=${other:+Conflicts: $other} mkdeb "libcudnn9-cuda-$m" "$v" "" "cuDNN runtime libraries for CUDA $m" "multiverse/libs"
    put "libcudnn9-dev-cuda-$m" "$v" /usr/include/x86_64-linux-gnu/cudnn_version_v9.h 0644 <<HDR
/*
 * gpuprov e2e stand-in for cudnn_version.h (cuDNN $mj.$mn.$patch); the define block has the real format.
 */

/**
 * \file: The master cuDNN version file.
 */

#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR $mj
#define CUDNN_MINOR $mn
#define CUDNN_PATCHLEVEL $patch

#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

/* cannot use constexpr here since this is a C-only file */

#define CUDNN_MIN_VERSION(major, minor, patch) (CUDNN_VERSION >= ((major) * 10000 + (minor) * 100 + (patch)))

#endif /* CUDNN_VERSION_H */
HDR
    put "libcudnn9-dev-cuda-$m" "$v" /usr/include/x86_64-linux-gnu/cudnn_v9.h 0644 <<'HDR'
/* gpuprov e2e stand-in for cudnn.h */
#include "cudnn_version.h"
HDR
    script "libcudnn9-dev-cuda-$m" "$v" postinst <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    update-alternatives --install /usr/include/cudnn.h libcudnn /usr/include/x86_64-linux-gnu/cudnn_v9.h 90 \
        --slave /usr/include/cudnn_version.h libcudnn_version_h /usr/include/x86_64-linux-gnu/cudnn_version_v9.h
fi
exit 0
POSTINST
    script "libcudnn9-dev-cuda-$m" "$v" prerm <<'PRERM'
#!/bin/sh
set -e
if [ "$1" = remove ]; then update-alternatives --remove libcudnn /usr/include/x86_64-linux-gnu/cudnn_v9.h || true; fi
exit 0
PRERM
    EXTRA_FIELDS=${other:+Conflicts: libcudnn9-dev-cuda-12} mkdeb "libcudnn9-dev-cuda-$m" "$v" "libcudnn9-cuda-$m (= $v)" \
        "cuDNN development headers and symlinks for CUDA $m" "multiverse/libdevel"
    mkdeb "cudnn9-cuda-$m" "$v" "libcudnn9-cuda-$m (= $v), libcudnn9-dev-cuda-$m (= $v)" "cuDNN 9 for CUDA $m meta-package" "multiverse/metapackages"
}
cudnn_build 12 9.1.0.70-1
cudnn_build 13 9.15.0.58-1

# --- NCCL: one build per CUDA minor (the +cuda12.5 build sorts higher) ------------------------
# 2.21.5 for CUDA 12.x; 2.27.7-1+cuda13.0 for CUDA 13.0 (reference §C, [C33]).
nccl_build() { # UPSTREAM CUDA-X.Y
    local v="$1-1+cuda$2" mj=${1%%.*} mn patch
    mn=${1#*.} && mn=${mn%%.*}
    patch=${1##*.}
    lib libnccl2 "$v" libnccl.so.2 "libnccl.so.$1"
    mkdeb libnccl2 "$v" "" "NVIDIA Collective Communication Library (NCCL) Runtime" "multiverse/libs"
    put libnccl-dev "$v" /usr/include/nccl.h 0644 <<HDR
/* gpuprov e2e stand-in for nccl.h */
#ifndef NCCL_H_
#define NCCL_H_
#define NCCL_MAJOR $mj
#define NCCL_MINOR $mn
#define NCCL_PATCH $patch
#define NCCL_SUFFIX ""
#define NCCL_VERSION_CODE $((mj * 10000 + mn * 100 + patch))
#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#endif
HDR
    mkdeb libnccl-dev "$v" "libnccl2 (= $v)" "NVIDIA Collective Communication Library (NCCL) Development Files" "multiverse/libdevel"
}
for cu in 12.2 12.4 12.5; do nccl_build 2.21.5 "$cu"; done
nccl_build 2.27.7 13.0

# --- TensorRT 10: one version string for the whole set, one build per CUDA minor --------------
# 10.4.0.26 has a +cuda12.2 and a higher-sorting +cuda12.5 build; 10.5.0.18 only +cuda12.5. For a
# CUDA 12.4 profile the right pick is 10.4.0.26-1+cuda12.2 everywhere: an unpinned install gets
# 10.5.0.18 (newest), a pin by sort order the +cuda12.5 build. Like NVIDIA's, the `tensorrt` meta
# package depends on every library at exactly its own version, so a mixed set cannot install.
# trtexec (libnvinfer-bin, /usr/src/tensorrt/bin) behaves like TensorRT 10.13's: it does not know
# --version, prints its banner, an error and a FAILED line, and exits 1; without libnvinfer.so.10
# it fails to load as a real binary would.
TRT_LIBS=(libnvinfer10 libnvinfer-plugin10 libnvinfer-vc-plugin10 libnvinfer-lean10 libnvinfer-dispatch10 libnvonnxparsers10)
trt_build() { # TRT-VERSION CUDA-X.Y BANNER-NUMBER
    local v="$1-1+cuda$2" p deps=""
    for p in "${TRT_LIBS[@]}"; do
        case "$p" in
            libnvinfer10) lib "$p" "$v" libnvinfer.so.10 "libnvinfer.so.$1" ;;
            libnvinfer-plugin10) lib "$p" "$v" libnvinfer_plugin.so.10 "libnvinfer_plugin.so.$1" ;;
            libnvinfer-vc-plugin10) lib "$p" "$v" libnvinfer_vc_plugin.so.10 "libnvinfer_vc_plugin.so.$1" ;;
            libnvinfer-lean10) lib "$p" "$v" libnvinfer_lean.so.10 "libnvinfer_lean.so.$1" ;;
            libnvinfer-dispatch10) lib "$p" "$v" libnvinfer_dispatch.so.10 "libnvinfer_dispatch.so.$1" ;;
            libnvonnxparsers10) lib "$p" "$v" libnvonnxparser.so.10 "libnvonnxparser.so.$1" ;;
        esac
        if [[ "$p" == libnvinfer10 ]]; then
            mkdeb "$p" "$v" "" "TensorRT runtime libraries" "multiverse/libs"
        else
            mkdeb "$p" "$v" "libnvinfer10 (= $v)" "TensorRT $p library" "multiverse/libs"
        fi
        deps+="${deps:+, }$p (= $v)"
    done
    put libnvinfer-bin "$v" /usr/src/tensorrt/bin/trtexec 0755 <<TRTEXEC
#!/bin/sh
# gpuprov e2e stand-in for trtexec (TensorRT $1)
if [ ! -e /usr/lib/x86_64-linux-gnu/libnvinfer.so.10 ]; then
    echo "trtexec: error while loading shared libraries: libnvinfer.so.10: cannot open shared object file: No such file or directory" >&2
    exit 127
fi
echo "&&&& RUNNING TensorRT.trtexec [TensorRT v$3] [b26] # trtexec \$*"
echo "[12/03/2026-10:00:00] [E] Model missing or format not recognized"
echo "&&&& FAILED TensorRT.trtexec [TensorRT v$3] [b26] # trtexec \$*"
exit 1
TRTEXEC
    mkdeb libnvinfer-bin "$v" "libnvinfer10 (= $v), libnvinfer-plugin10 (= $v), libnvonnxparsers10 (= $v)" "TensorRT binaries" "multiverse/devel"
    mkdeb tensorrt "$v" "$deps, libnvinfer-bin (= $v)" "Meta package for TensorRT" "multiverse/metapackages"
}
trt_build 10.4.0.26 12.2 100400
trt_build 10.4.0.26 12.5 100400
trt_build 10.5.0.18 12.5 100500

# --- NVIDIA Container Toolkit -----------------------------------------------------------------
MAINT='NVIDIA CORPORATION <cudatools@nvidia.com>'
sed "s/@VERSION@/$CTK/" "$HERE/stubs/nvidia-ctk" | put nvidia-container-toolkit-base "$CTK-1" /usr/bin/nvidia-ctk 0755
payload_container_runtime "$CTK" | put nvidia-container-toolkit-base "$CTK-1" /usr/bin/nvidia-container-runtime 0755
payload_container_config @/sbin/ldconfig.real | put nvidia-container-toolkit-base "$CTK-1" /etc/nvidia-container-runtime/config.toml 0644
printf '/etc/nvidia-container-runtime/config.toml\n' | script nvidia-container-toolkit-base "$CTK-1" conffiles
mkdeb nvidia-container-toolkit-base "$CTK-1" "" "NVIDIA Container Toolkit Base" "utils"
lib libnvidia-container1 "$CTK-1" libnvidia-container.so.1 "libnvidia-container.so.$CTK"
mkdeb libnvidia-container1 "$CTK-1" "" "NVIDIA container runtime library" "libs"
payload_container_cli "$CTK" | put libnvidia-container-tools "$CTK-1" /usr/bin/nvidia-container-cli 0755
mkdeb libnvidia-container-tools "$CTK-1" "libnvidia-container1 (>= $CTK-1), libnvidia-container1 (<< 2.0.0)" "NVIDIA container runtime library (command-line tools)" "utils"
put nvidia-container-toolkit "$CTK-1" /usr/bin/nvidia-container-runtime-hook 0755 <<'EOF2'
#!/bin/sh
exit 0
EOF2
mkdeb nvidia-container-toolkit "$CTK-1" "nvidia-container-toolkit-base (= $CTK-1), libnvidia-container-tools (>= $CTK-1), libnvidia-container-tools (<< 2.0.0)" "NVIDIA Container toolkit" "utils"

# --- the simulated host's kernel packaging (lib/rootfs.sh simulates the kernel itself) -----------
# For hold_kernel: the ABI-named image never changes in place; the metapackage moves to a new ABI
# (Debian's linux-image-amd64 depends on exactly one linux-image-<abi>), so holding the running
# kernel's image alone stops nothing. Empty packages: no kernel runs in the root.
MAINT='Debian Kernel Team <debian-kernel@lists.debian.org>'
kernel_pkgs() { # ABI VERSION
    mkdeb "linux-image-$1" "$2" "" "Linux $1 for 64-bit PCs (signed)" kernel
    mkdeb "linux-headers-$1" "$2" "" "Header files for Linux $1" kernel
    mkdeb linux-image-amd64 "$2" "linux-image-$1 (= $2)" "Linux for 64-bit PCs (meta-package)" kernel
    mkdeb linux-headers-amd64 "$2" "linux-headers-$1 (= $2)" "Header files for Linux amd64 configuration (meta-package)" kernel
}
kernel_pkgs 6.1.0-28-amd64 6.1.119-1
kernel_pkgs 6.1.0-31-amd64 6.1.128-1

# --- the distro's RDMA userspace (the infiniband step's packages; mirror/rdma.sh) ---------------
# shellcheck source=mirror/rdma.sh
source "$HERE/rdma.sh"

# --- Docker's repository (container.engine docker-ce; mirror/docker.sh) ------------------------
# shellcheck source=mirror/docker.sh
source "$HERE/docker.sh"
docker_debs

# --- what DCGM's core needs from the distribution's archive (mirror/distro_dcgm.sh) ------------
# shellcheck source=mirror/distro_dcgm.sh
source "$HERE/distro_dcgm.sh"

# --- keys --------------------------------------------------------------------------------------
export GNUPGHOME="$OUT/gnupg"
mkdir -m 0700 "$GNUPGHOME"
gpg_q() { gpg --batch --quiet --no-tty "$@"; }
gpg_q --passphrase '' --quick-gen-key 'gpuprov e2e <e2e@invalid>' rsa3072 sign never 2>/dev/null
gpg_q --passphrase '' --quick-gen-key 'gpuprov e2e wrong key <e2e-wrong@invalid>' rsa3072 sign never 2>/dev/null
fpr_of() { gpg_q --with-colons --list-keys "$1" | awk -F: '$1 == "fpr" {print $10; exit}'; }
FPR=$(fpr_of e2e@invalid)
WRONG=$(fpr_of e2e-wrong@invalid)
printf '%s\n' "$FPR" >"$OUT/fingerprint"
printf '%s\n' "$WRONG" >"$OUT/wrong-fingerprint"

# --- repositories ------------------------------------------------------------------------------
mkrepo() { # DIR LABEL PACKAGE-GLOBS... (@SLUG, @SLUG-dcgm: the .debs that slug's driver or DCGM fixtures list)
    local dir="$OUT/www/$1" label=$2
    shift 2
    mkdir -p "$dir"
    local g f
    for g in "$@"; do
        if [[ $g == @* ]]; then
            while read -r f; do ln "$OUT/pool/$f" "$dir/"; done <"$OUT/stage/fixtures.${g#@}"
            continue
        fi
        for f in "$OUT"/pool/$g; do ln "$f" "$dir/"; done
    done
    (
        cd "$dir"
        apt-ftparchive packages . >Packages 2>/dev/null
        if ((MIRROR_INDEX_PAD > 0)) && [[ $label == "NVIDIA CUDA" ]]; then
            [[ -f $OUT/index-pad ]] || index_pad >"$OUT/index-pad"
            cat "$OUT/index-pad" >>Packages
        fi
        gzip -9nc Packages >Packages.gz
        apt-ftparchive -o APT::FTPArchive::Release::Origin="$label" \
            -o APT::FTPArchive::Release::Label="$label" release . >../Release.tmp
        mv ../Release.tmp Release
        gpg_q --yes --local-user "$FPR" --clearsign -o InRelease Release
        gpg_q --yes --local-user "$FPR" --armor --detach-sign -o Release.gpg Release
    )
}
# MIRROR_INDEX_PAD records shaped like NVIDIA's (math libraries across many builds).
index_pad() {
    local i
    for ((i = 0; i < MIRROR_INDEX_PAD; i++)); do
        printf 'Package: libcublas-12-%d\nArchitecture: amd64\nVersion: 12.%d.%d.%d-1\n' $((i % 9)) $((i % 9)) $((i / 9 % 7)) "$i"
        printf 'Priority: optional\nSection: multiverse/devel\nInstalled-Size: 812345\nMaintainer: cudatools <cudatools@nvidia.com>\n'
        printf 'Depends: cuda-toolkit-config-common, cuda-toolkit-12-config-common\n'
        printf 'Filename: ./libcublas-12-%d_12.%d.%d.%d-1_amd64.deb\nSize: 412345678\n' $((i % 9)) $((i % 9)) $((i / 9 % 7)) "$i"
        printf 'MD5sum: %032x\nSHA1: %040x\nSHA256: %064x\n' "$i" "$i" "$i"
        printf 'Description: CUBLAS native runtime libraries\n CUBLAS native runtime libraries\n\n'
    done
}
# The legacy tree: exactly the packages it always served (the CUDA 13 builds below are the 2026
# tree's, so the globs name CUDA 12 where a bare glob would now catch them too).
CUDA_ALL=('cuda-drivers*' 'nvidia-driver-*' 'nvidia-dkms-*' 'libnvidia-compute-*' 'nvidia-fabricmanager-*' 'cuda-toolkit-12-*' 'cuda-12-*'
    'libcudnn9*-cuda-12[_-]*' 'cudnn9-cuda-12[_-]*' 'libnccl*+cuda12.*' 'tensorrt_*' 'libnvinfer*' 'libnvonnxparsers*')
if ((${MIRROR_SCALE:-1} > 1)); then CUDA_ALL+=('libnccl*-benchfill-*'); fi # bench: NCCL's fillers, as 'libnccl*' took them
for slug in debian12 ubuntu2204; do
    mkrepo "compute/cuda/repos/$slug/x86_64" "NVIDIA CUDA" "${CUDA_ALL[@]}" "@$slug-dcgm"
done
# ubuntu2404 starts at CUDA 12.5 (reference 2.5): no 12.4 toolkit there.
mkrepo compute/cuda/repos/ubuntu2404/x86_64 "NVIDIA CUDA" @ubuntu2404-dcgm 'cuda-drivers*' 'nvidia-driver-*' 'nvidia-dkms-*' 'libnvidia-compute-*' \
    'nvidia-fabricmanager-*' 'cuda-toolkit-12-5*' 'cuda-12-5*' 'libcudnn9*-cuda-12[_-]*' 'cudnn9-cuda-12[_-]*' 'libnccl*+cuda12.5*' \
    'tensorrt_*+cuda12.5*' 'libnvinfer*+cuda12.5*' 'libnvonnxparsers*+cuda12.5*'
# The 2026 tree: the recorded driver graph (@SLUG) and the same toolkits and libraries plus CUDA 13.0,
# cuDNN for CUDA 13 and NCCL +cuda13.0; no legacy driver package.
CUDA_2026=('cuda-toolkit-*' 'cuda-12-*' 'cuda-13-*' 'libcudnn9*' 'cudnn9*' 'libnccl*' 'tensorrt_*' 'libnvinfer*' 'libnvonnxparsers*')
for slug in debian12 ubuntu2204; do
    mkrepo "$TREE_2026/$slug/x86_64" "NVIDIA CUDA" "@$slug" "@$slug-dcgm" "${CUDA_2026[@]}"
done
mkrepo "$TREE_2026/ubuntu2404/x86_64" "NVIDIA CUDA" @ubuntu2404 @ubuntu2404-dcgm \
    'cuda-toolkit-12-5*' 'cuda-12-5*' 'cuda-toolkit-13-0*' 'cuda-13-0*' 'libcudnn9*' 'cudnn9*' 'libnccl*+cuda12.5*' \
    'libnccl*+cuda13.0*' 'tensorrt_*+cuda12.5*' 'libnvinfer*+cuda12.5*' 'libnvonnxparsers*+cuda12.5*'
# ubuntu2604 (scenario 50): no ubuntu2604 index was recorded, so it serves the recorded ubuntu2404
# driver graph (INFERRED: the same NVIDIA Ubuntu scheme and revisions, cuda-keyring 1.1-1 on both)
# with CUDA 13 only (the matrix's ubuntu2604 row: nothing older is seen there).
mkrepo "$TREE_2026/ubuntu2604/x86_64" "NVIDIA CUDA" @ubuntu2404 @ubuntu2404-dcgm \
    'cuda-toolkit-13-0*' 'cuda-13-0*' 'libcudnn9*-cuda-13[_-]*' 'cudnn9-cuda-13[_-]*' 'libnccl*+cuda13.0*'
# A mirror that keeps one version per package name, the newest (reprepro's rule, a common way to
# mirror NVIDIA's repository): the recorded ubuntu2404 driver graph cut to the newest build of each
# name, the toolkits and libraries as in the 2026 tree. 580's suffixed packages are there at
# 580.159.04, but its floor-only nvidia-persistenced only at 620: scenario 45's profile whose
# closure crosses branches.
sort -t/ -k2 "$OUT/stage/fixtures.ubuntu2404" | awk -F/ '{split($2, f, "_"); print f[1] "\t" f[2] "\t" $0}' |
    sort -t"$(printf '\t')" -k1,1 -k2,2V | awk -F'\t' '{last[$1] = $3} END {for (n in last) print last[n]}' |
    sort >"$OUT/stage/fixtures.ubuntu2404-newest"
mkrepo "nvidia-2026-newest/compute/cuda/repos/ubuntu2404/x86_64" "NVIDIA CUDA" @ubuntu2404-newest \
    'cuda-toolkit-12-5*' 'cuda-12-5*' 'cuda-toolkit-13-0*' 'cuda-13-0*' 'libcudnn9*' 'cudnn9*' 'libnccl*+cuda12.5*' \
    'libnccl*+cuda13.0*' 'tensorrt_*+cuda12.5*' 'libnvinfer*+cuda12.5*' 'libnvonnxparsers*+cuda12.5*'
mkrepo debian-kernel "Debian" 'linux-*'
# Ubuntu's archive for Secure Boot hosts (scenario 54; mirror/ubuntu_archive.py, recorded shape in
# tests/fixtures/ubuntu-archive): Canonical's signed precompiled modules for driver 580-server and
# the kernel packages they follow, in two published states: noble/ as gpuprov finds it (kernel ABI
# 6.8.0-50), noble-next/ after a kernel update (ABI 6.8.0-51 with its module package and the bumped
# metapackages). Its own pool directory: the legacy globs (linux-*, libnvidia-compute-*) must not
# see it. The stand-in module signing key stays outside www/ (lib/rootfs.sh reads its serial).
"$PY" "$HERE/ubuntu_archive.py" build "$HERE/../../fixtures/ubuntu-archive/noble/Packages" \
    "$OUT/pool/ubuntu-archive" "$OUT/canonical-module-key" >"$OUT/stage/ubuntu-archive.plan"
for state in now next; do
    sed -n "s|^REPO $state |ubuntu-archive/|p" "$OUT/stage/ubuntu-archive.plan" >"$OUT/stage/fixtures.ubuntu-noble-$state"
done
mkrepo ubuntu-archive/noble "Ubuntu" @ubuntu-noble-now
mkrepo ubuntu-archive/noble-next "Ubuntu" @ubuntu-noble-next
mkrepo debian "Debian" 'rdma-core_*' 'ibverbs-*' 'infiniband-diags_*' 'libib*' 'libnl-*' 'lsb-base_*' 'perl_*' \
    'lshw_*' 'libnuma1_*'
# The debian12 CUDA index signed the two ways apt refuses (scenario 28, served in place of
# InRelease by the server's "file:" fault): a SHA-1 signature, and a Release whose Valid-Until
# has passed (Date and Valid-Until in January 2024), signed properly.
(
    cd "$OUT/www/compute/cuda/repos/debian12/x86_64"
    gpg_q --yes --local-user "$FPR" --digest-algo SHA1 --clearsign -o InRelease.sha1 Release
    sed -e 's/^Date: .*/Date: Mon, 01 Jan 2024 00:00:00 UTC/' \
        -e '/^Date: /a Valid-Until: Mon, 08 Jan 2024 00:00:00 UTC' Release >Release.expired
    gpg_q --yes --local-user "$FPR" --clearsign -o InRelease.expired Release.expired
    rm Release.expired
)
# The debian12 legacy index as it was before branch 550's newest build was published (scenario
# 48, served in place of InRelease and Packages by the server's "file:yesterday/..." fault):
# the same index less every $DRV stanza, signed by the same key. Clearing the fault "publishes"
# $DRV, as NVIDIA publishes a new build between a change review and its apply.
(
    cd "$OUT/www/compute/cuda/repos/debian12/x86_64"
    mkdir -p yesterday
    awk -v RS= -v ORS='\n\n' -v drop="\nVersion: $DRV-" 'index($0, drop) == 0' Packages >yesterday/Packages
    gzip -9nc yesterday/Packages >yesterday/Packages.gz
    cd yesterday
    apt-ftparchive -o APT::FTPArchive::Release::Origin="NVIDIA CUDA" \
        -o APT::FTPArchive::Release::Label="NVIDIA CUDA" release . >../Release.yesterday
    mv ../Release.yesterday Release
    gpg_q --yes --local-user "$FPR" --clearsign -o InRelease Release
)
# A newer build of branch 550's userspace published without its module (scenario 53, issue 23):
# libnvidia-compute-550, nvidia-driver-550 and cuda-drivers-550 at $DRV_USERSPACE_ONLY, built by
# driver_build like every 550 stand-in (same names, same Depends), in a tree of its own that no
# other scenario's source names. nvidia-dkms-550 of that build is made but not published: the
# module stays at $DRV. Built after the legacy repositories so their globs never see it.
DRV_USERSPACE_ONLY=550.90.12 # a stand-in version
driver_build 550 "$DRV_USERSPACE_ONLY" 12.4
mkrepo e2e-userspace-only/compute/cuda/repos/debian12/x86_64 "NVIDIA CUDA" \
    "libnvidia-compute-550_$DRV_USERSPACE_ONLY-1_*" "nvidia-driver-550_$DRV_USERSPACE_ONLY-1_*" \
    "cuda-drivers-550_$DRV_USERSPACE_ONLY-1_*"
# The same build whole, module included (scenario 53): what a host without holds upgrades to, the
# loaded module staying the old one until the reboot.
mkrepo e2e-driver-next/compute/cuda/repos/debian12/x86_64 "NVIDIA CUDA" "*_$DRV_USERSPACE_ONLY-1_*"
mkrepo libnvidia-container/stable/deb/amd64 "https://nvidia.github.io/libnvidia-container/stable/deb" \
    'nvidia-container-toolkit*' 'libnvidia-container*'

for dir in compute/cuda/repos/{debian12,ubuntu2204,ubuntu2404}/x86_64 "$TREE_2026"/{debian12,ubuntu2204,ubuntu2404,ubuntu2604}/x86_64 \
    nvidia-2026-newest/compute/cuda/repos/ubuntu2404/x86_64; do
    # NVIDIA names each repository's key file by its key: ubuntu2604 has its own, 60DF8A40.pub,
    # and no 3bf863cc.pub (the matrix's ubuntu2604 row). The mirror's key stands in under that name.
    keyfile=3bf863cc.pub
    [[ $dir == */ubuntu2604/* ]] && keyfile=60DF8A40.pub
    gpg_q --armor --export "$FPR" >"$OUT/www/$dir/$keyfile"
    gpg_q --armor --export "$WRONG" >"$OUT/www/$dir/wrong-key.pub"
done
docker_repo
gpg_q --armor --export "$FPR" >"$OUT/www/libnvidia-container/gpgkey"
gpg_q --armor --export "$WRONG" >"$OUT/www/libnvidia-container/wrong-key.pub"
gpgconf --kill all >/dev/null 2>&1 || true
# The key stays in OUTDIR/gnupg for mirror/build-rpm.sh (which signs the rpm half and removes it).
rm -rf "$OUT/stage"

# --- TLS: a throwaway CA and a server certificate for IP 127.0.0.1 (mirror/tls.sh) -------------
bash "$HERE/tls.sh" "$OUT/tls"
echo "mirror built in $OUT (key $FPR)"
