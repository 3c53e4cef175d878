#!/usr/bin/env bash
# Build the EL half of the test mirror: stand-in RPMs with NVIDIA's rpm names, epochs and
# dependency shape (reference §3.2-§3.7), built with rpmbuild, signed with rpmsign, published
# with createrepo_c (+ modifyrepo_c for the `nvidia-driver` module streams, as NVIDIA's rhel8/9
# repos carry them) and a detached, armored `repodata/repomd.xml.asc`, like NVIDIA's.
#
# usage: mirror/build-rpm.sh OUTDIR   (after mirror/build.sh OUTDIR: same key, same www/)
# OUTDIR/www/compute/cuda/repos/rhel{8,9}/x86_64/   NVIDIA CUDA repo (driver streams, CUDA, cuDNN, NCCL)
# OUTDIR/www/libnvidia-container/stable/rpm/x86_64/ the container toolkit's rpm repo
# OUTDIR/www/el{8,9}/{baseos,epel}/x86_64/          stand-in BaseOS (kernel-devel/-headers) and EPEL (dkms)
# OUTDIR/el-host/el{8,9}/*.rpm                      what an installed EL host already has (not served):
#                                                   release package, kernel-core, bash/coreutils stand-ins
# The payload reuses the apt side's stand-ins (stubs/nvidia-smi, lib/dkms-standin via EPEL's dkms),
# so both families behave the same.
set -euo pipefail

OUT=${1:?usage: build-rpm.sh OUTDIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$(cd "$OUT" && pwd)
export GNUPGHOME="$OUT/gnupg"
[[ -d "$GNUPGHOME" ]] || { echo "build-rpm.sh: run mirror/build.sh $OUT first (its key is in $GNUPGHOME)" >&2; exit 1; }
FPR=$(cat "$OUT/fingerprint")
WRONG=$(cat "$OUT/wrong-fingerprint")
STAGE="$OUT/rpmstage"
TOP="$OUT/rpmbuild"
POOL="$OUT/rpmpool"
rm -rf "$STAGE" "$TOP" "$POOL" "$OUT/el-host" "$OUT"/www/el8 "$OUT"/www/el9 \
    "$OUT"/www/compute/cuda/repos/rhel8 "$OUT"/www/compute/cuda/repos/rhel9 "$OUT"/www/libnvidia-container/stable/rpm
mkdir -p "$STAGE" "$TOP" "$POOL"
CC=${CC:-cc}

# Simulated kernels (lib/rootfs_el.sh boots these): Rocky 9.3's and RHEL 8.9's.
EL9_KERNEL_V=5.14.0 EL9_KERNEL_R=362.24.1.el9_3
EL8_KERNEL_V=4.18.0 EL8_KERNEL_R=513.5.1.el8_9
CTK=1.17.3
DRIVER_KERNELS='^(4\.|5\.|6\.([0-9]|1[01])\.)' # as mirror/build.sh: DKMS builds up to 6.11

# shellcheck source=mirror/payload.sh
source "$HERE/payload.sh" # mkso and the payload both mirror halves package

# Staging: files under $STAGE/<key>/root, scriptlets in $STAGE/<key>/{post,preun,postun}.
# <key> is NAME-VERSION-RELEASE (one dist at a time: build_set runs per EL major).
sdir() { printf '%s/%s-%s-%s' "$STAGE" "$1" "$2" "$3"; }
put() { # NAME VERSION RELEASE PATH MODE < content
    local f
    f="$(sdir "$1" "$2" "$3")/root$4"
    mkdir -p "$(dirname "$f")"
    cat >"$f"
    chmod "$5" "$f"
}
scriptlet() { # NAME VERSION RELEASE post|preun|postun < body
    local d
    d=$(sdir "$1" "$2" "$3")
    mkdir -p "$d"
    cat >"$d/$4"
}
lib() { # NAME VERSION RELEASE DIR SONAME REALNAME
    local d
    d="$(sdir "$1" "$2" "$3")/root$4"
    mkdir -p "$d"
    mkso "$5" "$d/$6"
    ln -sf "$6" "$d/$5"
    : >"$(sdir "$1" "$2" "$3")/ldconfig" # EL's library packages run ldconfig in %post/%postun
}

# mkrpm NAME EPOCH VERSION RELEASE ARCH SUMMARY; dependency tags from the environment:
# REQ, PROV, CONFL (newline-separated "name [op evr]"), CONFIGS (paths marked %config(noreplace)),
# DIRS (directories the package owns). Builds into $POOL/<dist>/.
mkrpm() {
    local name=$1 epoch=$2 ver=$3 rel=$4 arch=$5 summary=$6
    local d spec line f
    d=$(sdir "$name" "$ver" "$rel")
    mkdir -p "$d/root"
    while IFS= read -r line; do [[ -z "$line" ]] || mkdir -p "$d/root$line"; done <<<"${DIRS:-}"
    spec="$d/$name.spec"
    {
        printf 'Name: %s\nVersion: %s\nRelease: %s\nSummary: %s\nLicense: gpuprov e2e stand-in\n' \
            "$name" "$ver" "$rel" "$summary"
        [[ "$epoch" == none ]] || printf 'Epoch: %s\n' "$epoch"
        printf 'BuildArch: %s\nAutoReqProv: no\nURL: https://developer.nvidia.com/cuda-zone\n' "$arch"
        while IFS= read -r line; do [[ -z "$line" ]] || printf 'Requires: %s\n' "$line"; done <<<"${REQ:-}"
        while IFS= read -r line; do [[ -z "$line" ]] || printf 'Provides: %s\n' "$line"; done <<<"${PROV:-}"
        while IFS= read -r line; do [[ -z "$line" ]] || printf 'Conflicts: %s\n' "$line"; done <<<"${CONFL:-}"
        printf '\n%%description\ngpuprov e2e stand-in package (not NVIDIA software).\n\n'
        printf '%%install\nmkdir -p %%{buildroot}\ncp -a %s/root/. %%{buildroot}/\n\n' "$d"
        printf '%%files\n'
        while IFS= read -r line; do [[ -z "$line" ]] || printf '%%dir %s\n' "$line"; done <<<"${DIRS:-}"
        (cd "$d/root" && find . \( -type f -o -type l \) -printf '/%P\n' | LC_ALL=C sort) | while IFS= read -r f; do
            if grep -qxF -- "$f" <<<"${CONFIGS:-}"; then printf '%%config(noreplace) %s\n' "$f"; else printf '%s\n' "$f"; fi
        done
        for s in post preun postun; do
            if [[ -f "$d/$s" || ( -f "$d/ldconfig" && "$s" != preun ) ]]; then printf '\n%%%s\n' "$s"; fi
            if [[ -f "$d/$s" ]]; then cat "$d/$s"; fi
            if [[ -f "$d/ldconfig" && "$s" != preun ]]; then printf '/sbin/ldconfig\n'; fi
        done
    } >"$spec"
    rpmbuild -bb --quiet --define "_topdir $TOP" --define "_rpmdir $POOL/$DIST" \
        --define '_build_id_links none' --define 'debug_package %{nil}' --define '__os_install_post %{nil}' \
        --define '_binary_payload w9.gzdio' --define "_buildhost e2e.invalid" \
        --define '_rpmfilename %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' "$spec" >"$d/rpmbuild.log" 2>&1 ||
        { cat "$d/rpmbuild.log" >&2; return 1; }
}

nvidia_smi() { sed "s/^CUDA_VERSION=.*/CUDA_VERSION=$1/" "$HERE/stubs/nvidia-smi"; }

# --- NVIDIA driver, one build: NVIDIA's rhel8/9 shape (epoch 3, .elN release; reference §3.2) -------
# nvidia-driver (requires the capability nvidia-kmod at the same EVR) + nvidia-driver-cuda (nvidia-smi,
# persistenced) + nvidia-driver-cuda-libs; the module from kmod-nvidia-latest-dkms (proprietary) or
# kmod-nvidia-open-dkms (open), both requiring EPEL's dkms; nvidia-open is the open flavour's meta.
# The dkms packages' scriptlets are NVIDIA's (dkms add/build/install, failures ignored: `|| :`), so a
# module DKMS cannot build leaves the install green and the module unloadable, as on real hosts.
driver_build() { # BRANCH VERSION CUDA-VERSION-IT-REPORTS
    local br=$1 v=$2 cu=$3 r="1.$DIST" e=3
    local evr="3:$v-1.$DIST"
    put nvidia-kmod-common "$v" "$r" /usr/lib/modprobe.d/nvidia-e2e-kmod-common.conf 0644 <<<"# gpuprov e2e stand-in: nvidia-kmod-common $v"
    REQ="" PROV="" mkrpm nvidia-kmod-common "$e" "$v" "$r" noarch "Common file for NVIDIA's proprietary driver kernel modules"
    local flavour kmod
    for flavour in latest open; do
        kmod="kmod-nvidia-$flavour-dkms"
        put "$kmod" "$v" "$r" "/usr/src/nvidia-$v/dkms.conf" 0644 <<DKMS
PACKAGE_NAME="nvidia"
PACKAGE_VERSION="$v"
AUTOINSTALL="yes"
BUILT_MODULE_NAME[0]="nvidia"
DEST_MODULE_LOCATION[0]="/extra"
BUILD_EXCLUSIVE_KERNEL="$DRIVER_KERNELS"
DKMS
        scriptlet "$kmod" "$v" "$r" post <<POST
dkms add -m nvidia -v $v -q --rpm_safe_upgrade || :
# Rebuild and make available for the currently running kernel
dkms build -m nvidia -v $v -q || :
dkms install -m nvidia -v $v -q --force || :
POST
        scriptlet "$kmod" "$v" "$r" preun <<PREUN
# Remove all versions from DKMS registry
dkms remove -m nvidia -v $v -q --all --rpm_safe_upgrade || :
PREUN
        REQ=$'dkms\n'"nvidia-kmod-common = $evr" PROV="nvidia-kmod = $evr" CONFL=$'kmod-nvidia-latest-dkms\nkmod-nvidia-open-dkms' \
            DIRS="/usr/src/nvidia-$v" mkrpm "$kmod" "$e" "$v" "$r" x86_64 "NVIDIA display driver kernel module ($flavour, DKMS)"
    done
    lib nvidia-driver-cuda-libs "$v" "$r" /usr/lib64 libcuda.so.1 "libcuda.so.$v"
    lib nvidia-driver-cuda-libs "$v" "$r" /usr/lib64 libnvidia-ml.so.1 "libnvidia-ml.so.$v"
    PROV=$'libcuda.so.1()(64bit)\nlibnvidia-ml.so.1()(64bit)' CONFL="" mkrpm nvidia-driver-cuda-libs "$e" "$v" "$r" x86_64 "Libraries for CUDA"
    put nvidia-driver "$v" "$r" /usr/share/nvidia/e2e-driver-version 0644 <<<"$v"
    REQ="nvidia-driver-cuda-libs = $evr"$'\n'"nvidia-kmod = $evr" PROV="" mkrpm nvidia-driver "$e" "$v" "$r" x86_64 "NVIDIA's proprietary display driver for NVIDIA graphic cards"
    nvidia_smi "$cu" | put nvidia-driver-cuda "$v" "$r" /usr/bin/nvidia-smi 0755
    # persistenced is its own package on EL (NVIDIA's yum-packaging-nvidia-persistenced).
    payload_persistenced | put nvidia-persistenced "$v" "$r" /usr/bin/nvidia-persistenced 0755
    payload_persistenced_unit | put nvidia-persistenced "$v" "$r" /usr/lib/systemd/system/nvidia-persistenced.service 0644
    REQ="nvidia-driver = $evr" PROV="" mkrpm nvidia-persistenced "$e" "$v" "$r" x86_64 "A daemon to maintain persistent software state in the NVIDIA driver"
    REQ="nvidia-driver = $evr"$'\n'"nvidia-persistenced = $evr" mkrpm nvidia-driver-cuda "$e" "$v" "$r" x86_64 "CUDA integration for NVIDIA's proprietary display driver"
    REQ="nvidia-driver = $evr"$'\n'"kmod-nvidia-open-dkms = $evr" mkrpm nvidia-open "$e" "$v" "$r" noarch "NVIDIA open kernel module driver meta package"
    # cuda-drivers (no epoch, as NVIDIA ships it): the floating meta and the branch meta (>=, like apt's).
    REQ="nvidia-driver-cuda >= $e:$v"$'\n'"nvidia-kmod >= $e:$v" mkrpm "cuda-drivers-$br" none "$v" 1 x86_64 "CUDA Driver meta-package, branch-specific"
    payload_fabricmanager "$v" | put "nvidia-fabricmanager-$br" "$v" 1 /usr/bin/nv-fabricmanager 0755
    payload_fabricmanager_unit | put "nvidia-fabricmanager-$br" "$v" 1 /usr/lib/systemd/system/nvidia-fabricmanager.service 0644
    REQ="" mkrpm "nvidia-fabricmanager-$br" none "$v" 1 x86_64 "Fabric Manager for NVSwitch based systems."
    REQ="nvidia-fabricmanager-$br = $v-1"$'\n'"cuda-drivers-$br = $v-1" mkrpm "cuda-drivers-fabricmanager-$br" none "$v" 1 x86_64 "Meta-package for FM and Driver"
    DRIVER_ARTIFACTS+=("$br $v")
}

toolkit() { # X.Y FULL NVCC-VERSION
    local xy=$1 full=$2 dash=${1/./-} name="cuda-toolkit-${1/./-}"
    payload_nvcc "$xy" | put "$name" "$full" 1 "/usr/local/cuda-$xy/bin/nvcc" 0755
    payload_cuda_version_json "$full" "$3" | put "$name" "$full" 1 "/usr/local/cuda-$xy/version.json" 0644
    lib "$name" "$full" 1 "/usr/local/cuda-$xy/lib64" libcudart.so.12 "libcudart.so.$3"
    # NVIDIA's rpms register /usr/local/cuda with `alternatives` (chkconfig's) in %post.
    scriptlet "$name" "$full" 1 post <<POST
if [ -e /tmp/e2e-slow ]; then
    echo "\$\$" >/tmp/e2e-slow-started
    sleep 8
fi
alternatives --install /usr/local/cuda cuda /usr/local/cuda-$xy ${dash//-/}
alternatives --install /usr/local/cuda-12 cuda-12 /usr/local/cuda-$xy ${dash//-/}
POST
    scriptlet "$name" "$full" 1 postun <<POSTUN
if [ "\$1" -eq 0 ]; then
    alternatives --remove cuda /usr/local/cuda-$xy || :
    alternatives --remove cuda-12 /usr/local/cuda-$xy || :
fi
POSTUN
    REQ="" DIRS="/usr/local/cuda-$xy"$'\n'"/usr/local/cuda-$xy/bin"$'\n'"/usr/local/cuda-$xy/lib64" \
        mkrpm "$name" none "$full" 1 x86_64 "CUDA Toolkit $xy meta-package"
    REQ="$name = $full-1"$'\n'"cuda-drivers >= 550.54.15" mkrpm "cuda-$dash" none "$full" 1 x86_64 "CUDA $xy meta-package (toolkit and driver)"
}

cudnn_nccl() {
    local v=9.1.0.70
    lib libcudnn9-cuda-12 "$v" 1 /usr/lib64 libcudnn.so.9 libcudnn.so.9.1.0
    REQ="" mkrpm libcudnn9-cuda-12 none "$v" 1 x86_64 "cuDNN runtime libraries for CUDA 12"
    put libcudnn9-devel-cuda-12 "$v" 1 /usr/include/cudnn_version_v9.h 0644 <<'HDR'
/* gpuprov e2e stand-in for cudnn_version.h (cuDNN 9.1.0); the define block has the real format. */
#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR 9
#define CUDNN_MINOR 1
#define CUDNN_PATCHLEVEL 0

#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

#endif /* CUDNN_VERSION_H */
HDR
    # cuDNN 9 rpms put the headers in /usr/include and the versioned copies behind alternatives.
    scriptlet libcudnn9-devel-cuda-12 "$v" 1 post <<'POST'
alternatives --install /usr/include/cudnn_version.h libcudnn_version_h /usr/include/cudnn_version_v9.h 90
POST
    REQ="libcudnn9-cuda-12 = $v-1" mkrpm libcudnn9-devel-cuda-12 none "$v" 1 x86_64 "cuDNN development headers for CUDA 12"
    REQ="libcudnn9-cuda-12 = $v-1"$'\n'"libcudnn9-devel-cuda-12 = $v-1" mkrpm cudnn9-cuda-12 none "$v" 1 x86_64 "cuDNN 9 for CUDA 12 meta-package"
    local cu
    for cu in 12.2 12.4 12.5; do
        # NVIDIA's rhel repos: libnccl-2.21.5-1+cuda12.4.x86_64 (the CUDA build in the release).
        lib libnccl 2.21.5 "1+cuda$cu" /usr/lib64 libnccl.so.2 libnccl.so.2.21.5
        REQ="" mkrpm libnccl none 2.21.5 "1+cuda$cu" x86_64 "NVIDIA Collective Communication Library (NCCL) Runtime"
        put libnccl-devel 2.21.5 "1+cuda$cu" /usr/include/nccl.h 0644 <<'HDR'
/* gpuprov e2e stand-in for nccl.h */
#define NCCL_MAJOR 2
#define NCCL_MINOR 21
#define NCCL_PATCH 5
HDR
        REQ="libnccl = 2.21.5-1+cuda$cu" mkrpm libnccl-devel none 2.21.5 "1+cuda$cu" x86_64 "NVIDIA Collective Communication Library (NCCL) Development Files"
    done
}

container_toolkit() {
    sed "s/@VERSION@/$CTK/" "$HERE/stubs/nvidia-ctk" | put nvidia-container-toolkit-base "$CTK" 1 /usr/bin/nvidia-ctk 0755
    payload_container_runtime "$CTK" | put nvidia-container-toolkit-base "$CTK" 1 /usr/bin/nvidia-container-runtime 0755
    payload_container_config @/sbin/ldconfig | put nvidia-container-toolkit-base "$CTK" 1 /etc/nvidia-container-runtime/config.toml 0644
    CONFIGS=/etc/nvidia-container-runtime/config.toml mkrpm nvidia-container-toolkit-base none "$CTK" 1 x86_64 "NVIDIA Container Toolkit Base"
    lib libnvidia-container1 "$CTK" 1 /usr/lib64 libnvidia-container.so.1 "libnvidia-container.so.$CTK"
    REQ="" mkrpm libnvidia-container1 none "$CTK" 1 x86_64 "NVIDIA container runtime library"
    payload_container_cli "$CTK" | put libnvidia-container-tools "$CTK" 1 /usr/bin/nvidia-container-cli 0755
    REQ="libnvidia-container1 >= $CTK-1"$'\n'"libnvidia-container1 < 2.0.0" mkrpm libnvidia-container-tools none "$CTK" 1 x86_64 "NVIDIA container runtime library (command-line tools)"
    put nvidia-container-toolkit "$CTK" 1 /usr/bin/nvidia-container-runtime-hook 0755 <<<$'#!/bin/sh\nexit 0'
    REQ="nvidia-container-toolkit-base = $CTK-1"$'\n'"libnvidia-container-tools >= $CTK-1"$'\n'"libnvidia-container-tools < 2.0.0" \
        mkrpm nvidia-container-toolkit none "$CTK" 1 x86_64 "NVIDIA Container toolkit"
}

# BaseOS: kernel-devel/kernel-headers for the running kernel (and the next kernel, so "for uname -r"
# is a real choice); kernel-devel fills the /lib/modules/<kver>/build link kernel-core leaves dangling.
kernel_pkgs() { # VERSION RELEASE
    local kver="$1-$2.x86_64"
    put kernel-devel "$1" "$2" "/usr/src/kernels/$kver/Makefile" 0644 <<<"# gpuprov e2e stand-in: kernel build tree for $kver"
    REQ="" DIRS="/usr/src/kernels/$kver" mkrpm kernel-devel none "$1" "$2" x86_64 "Development package for building kernel modules to match the kernel"
    put kernel-headers "$1" "$2" /usr/include/linux/e2e-version.h 0644 <<<"/* $kver */"
    REQ="" mkrpm kernel-headers none "$1" "$2" x86_64 "Header files for the Linux kernel for use by glibc"
}

# EPEL's dkms: ships the harness's dkms stand-in (lib/dkms-standin), like dkms does on Debian.
epel_dkms() {
    put dkms 3.0.13 "1.$DIST" /usr/sbin/dkms 0755 <"$HERE/../lib/dkms-standin"
    REQ="" DIRS=/var/lib/dkms mkrpm dkms none 3.0.13 "1.$DIST" noarch "Dynamic Kernel Module Support Framework"
}

# What the installed host already has in its rpm database (installed by lib/rootfs_el.sh, not served):
# the release package (dnf's $releasever and the os-release owner), the running kernel (kernel-core
# owns the /lib/modules/<kver>/build link), and the base system the stand-ins' scriptlets run on.
el_host_pkgs() { # RELEASE-NAME MAJOR KVER-V KVER-R
    local kver="$3-$4.x86_64"
    put "$1" "$2.3" "1.$DIST" "/etc/$1-e2e" 0644 <<<"gpuprov e2e stand-in for $1 $2"
    REQ="" PROV="system-release"$'\n'"system-release($2)"$'\n'"system-release(releasever) = $2" \
        mkrpm "$1" none "$2.3" "1.$DIST" noarch "$1 release files"
    mkdir -p "$(sdir kernel-core "$3" "$4")/root/lib/modules/$kver"
    ln -sfn "/usr/src/kernels/$kver" "$(sdir kernel-core "$3" "$4")/root/lib/modules/$kver/build"
    REQ="" PROV="kernel = $3-$4"$'\n'"installonlypkg(kernel)" DIRS="/lib/modules/$kver" mkrpm kernel-core none "$3" "$4" x86_64 "The Linux kernel"
    # bash, coreutils, glibc, ...: the Debian root's own tools, announced to rpm (scriptlets need /bin/sh).
    # As EL's glibc, its ldconfig searches /usr/lib64 (where EL's library rpms install).
    printf '/usr/lib64\n/lib64\n' | put e2e-el-base 1.0 "1.$DIST" /etc/ld.so.conf.d/e2e-el-lib64.conf 0644
    REQ="" PROV=$'/bin/sh\n/usr/bin/sh\nbash\ncoreutils\nglibc\nfilesystem\nchkconfig\n/usr/sbin/alternatives' \
        mkrpm e2e-el-base none 1.0 "1.$DIST" x86_64 "gpuprov e2e: the Debian userland this EL-shaped root runs on"
}

# --- keys: import into rpm's macros for rpmsign -----------------------------------------------------
sign_rpms() { # DIR KEY-FINGERPRINT
    # rpmsign --addsign; Debian's rpm names gpg2, which bookworm lacks.
    local log="$STAGE/rpmsign.log"
    find "$1" -name '*.rpm' -print0 | GPG_TTY=/dev/null xargs -0 -r rpmsign --define "__gpg $(command -v gpg)" \
        --define "_gpg_name $2" --addsign >"$log" 2>&1 || { cat "$log" >&2; return 1; }
}

# modules.yaml for the nvidia-driver module: one modulemd v2 document per stream, NVIDIA's names
# (<branch>-dkms proprietary, <branch>-open, latest-dkms / open-dkms tracking the newest branch,
# default stream latest-dkms as NVIDIA's defaults document says), profiles default / fm / src.
modules_yaml() { # REPODIR
    local br v stream kind pkgs fm latest_v
    latest_v=$(printf '%s\n' "${DRIVER_ARTIFACTS[@]}" | sort -V -k2 | tail -n 1 | cut -d' ' -f2)
    {
        for entry in "${DRIVER_ARTIFACTS[@]}"; do
            br=${entry% *} v=${entry#* }
            for kind in dkms open; do
                local streams=("$br-$kind")
                if [[ "$v" == "$latest_v" ]]; then streams+=("$([[ $kind == dkms ]] && echo latest-dkms || echo open-dkms)"); fi
                for stream in "${streams[@]}"; do
                    if [[ $kind == dkms ]]; then pkgs=(nvidia-driver nvidia-driver-cuda nvidia-driver-cuda-libs nvidia-persistenced kmod-nvidia-latest-dkms nvidia-kmod-common)
                    else pkgs=(nvidia-open nvidia-driver nvidia-driver-cuda nvidia-driver-cuda-libs nvidia-persistenced kmod-nvidia-open-dkms nvidia-kmod-common); fi
                    fm="cuda-drivers-fabricmanager-$br"
                    printf -- '---\ndocument: modulemd\nversion: 2\ndata:\n  name: nvidia-driver\n  stream: "%s"\n' "$stream"
                    printf '  version: %s\n  context: %s\n  arch: x86_64\n' "$(echo "$v" | tr -d .)" "$(printf '%s' "$stream" | sha256sum | cut -c1-8)"
                    printf '  summary: Nvidia driver for %s branch\n  description: >-\n    gpuprov e2e stand-in module stream.\n' "$stream"
                    printf '  license:\n    module:\n    - MIT\n'
                    printf '  dependencies:\n  - buildrequires:\n      platform: [%s]\n    requires:\n      platform: [%s]\n' "$DIST" "$DIST"
                    printf '  profiles:\n    default:\n      rpms:\n'
                    printf '      - %s\n' "${pkgs[0]}" nvidia-driver-cuda
                    printf '    fm:\n      rpms:\n'
                    printf '      - %s\n' "${pkgs[0]}" nvidia-driver-cuda "$fm"
                    printf '    src:\n      rpms:\n      - %s\n' "${pkgs[-2]}"
                    printf '  artifacts:\n    rpms:\n'
                    local p
                    for p in "${pkgs[@]}"; do
                        case "$p" in
                            nvidia-open | nvidia-kmod-common) printf '    - %s-3:%s-1.%s.noarch\n' "$p" "$v" "$DIST" ;;
                            *) printf '    - %s-3:%s-1.%s.x86_64\n' "$p" "$v" "$DIST" ;;
                        esac
                    done
                    printf '    - nvidia-fabricmanager-%s-0:%s-1.x86_64\n' "$br" "$v"
                    printf '    - %s-0:%s-1.x86_64\n' "$fm" "$v"
                    printf '...\n'
                done
            done
        done
        printf -- '---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: nvidia-driver\n  stream: latest-dkms\n  profiles:\n'
        printf '    latest-dkms: [default]\n    open-dkms: [default]\n...\n'
    } >"$STAGE/modules.yaml"
}

# mkrepo DIR GLOBS...: hard-link the rpms, createrepo_c, optional modules.yaml, signed repomd.
# From $POOL/$DIST signed with the NVIDIA stand-in key, or with OS=1 from $POOL/$DIST-os and the distro key.
mkrepo() {
    local dir="$OUT/www/$1" modules=${MODULES:-} pool="$POOL/$DIST" key=$FPR
    if [[ "${OS:-0}" == 1 ]]; then pool="$POOL/$DIST-os" key=$DISTRO_FPR; fi
    shift
    mkdir -p "$dir"
    local g f
    for g in "$@"; do
        for f in "$pool"/$g; do
            [[ -e "$f" ]] || { echo "build-rpm.sh: no rpm matches $g ($DIST)" >&2; return 1; }
            ln -f "$f" "$dir/"
        done
    done
    createrepo_c --quiet --simple-md-filenames --no-database "$dir" >/dev/null
    if [[ -n "$modules" ]]; then
        modifyrepo_c --mdtype=modules --simple-md-filenames --no-compress "$modules" "$dir/repodata" >/dev/null
    fi
    gpg --batch --quiet --no-tty --yes --local-user "$key" --armor --detach-sign \
        -o "$dir/repodata/repomd.xml.asc" "$dir/repodata/repomd.xml"
}

# build_pool DIST RELEASE-PKG MAJOR KVER-V KVER-R NEXT-KVER-R: every unsigned rpm of one EL major
# into $POOL/DIST (NVIDIA's) and $POOL/DIST-os (the distro's), plus the modules.yaml.
build_pool() {
    DIST=$1
    DRIVER_ARTIFACTS=()
    mkdir -p "$POOL/$DIST" "$POOL/$DIST-os"
    driver_build 550 550.54.15 12.4
    driver_build 550 550.90.07 12.4
    driver_build 560 560.35.03 12.6
    REQ="cuda-drivers-560 >= 560.35.03" mkrpm cuda-drivers none 560.35.03 1 x86_64 "CUDA Driver meta-package"
    local xy
    for xy in 12.2:12.2.2:12.2.140 12.4:12.4.1:12.4.131 12.5:12.5.1:12.5.82; do
        IFS=: read -r a b c <<<"$xy"
        toolkit "$a" "$b" "$c"
    done
    cudnn_nccl
    container_toolkit
    kernel_pkgs "$4" "$5"
    # The next kernel release: a kernel-devel that is NOT the running kernel's.
    kernel_pkgs "$4" "$6"
    epel_dkms
    el_host_pkgs "$2" "$3" "$4" "$5"
    mv "$POOL/$DIST"/{kernel-,dkms-,e2e-el-base-,"$2"-}*.rpm "$POOL/$DIST-os/"
    modules_yaml
    mv "$STAGE/modules.yaml" "$POOL/$DIST/modules.yaml"
    rm -rf "${STAGE:?}"/*-*-*
}

# publish DIST RELEASE-PKG: sign (NVIDIA's with the pinned key, the distro's with the distro key),
# then the repositories and the installed host's rpms.
publish() {
    DIST=$1
    sign_rpms "$POOL/$DIST" "$FPR"
    sign_rpms "$POOL/$DIST-os" "$DISTRO_FPR"
    local slug="rhel${DIST#el}"
    MODULES="$POOL/$DIST/modules.yaml" mkrepo "compute/cuda/repos/$slug/x86_64" \
        'nvidia-driver*' 'nvidia-kmod-common*' 'nvidia-persistenced*' 'nvidia-open-*' 'nvidia-fabricmanager-*' 'kmod-nvidia-*' 'cuda-drivers*' 'cuda-toolkit-*' 'cuda-12-*' 'libcudnn9*' 'cudnn9*' 'libnccl*'
    OS=1 mkrepo "$DIST/baseos/x86_64" 'kernel-devel-*' 'kernel-headers-*'
    OS=1 mkrepo "$DIST/epel/x86_64" 'dkms-*'
    if [[ "$DIST" == el9 ]]; then
        # One container toolkit repo for every EL (nvidia.github.io/libnvidia-container/stable/rpm/$basearch).
        mkrepo libnvidia-container/stable/rpm/x86_64 'nvidia-container-toolkit*' 'libnvidia-container*'
    fi
    mkdir -p "$OUT/el-host/$DIST"
    ln -f "$POOL/$DIST-os/$2"-*.rpm "$POOL/$DIST-os"/kernel-core-*.rpm "$POOL/$DIST-os"/e2e-el-base-*.rpm "$OUT/el-host/$DIST/"
}

t0=$SECONDS
# The unsigned rpms depend only on this script and the payload stand-ins: cached under
# $E2E_RPM_CACHE (run.sh passes the root cache) so a run only signs and publishes.
cache_key=$(cat "${BASH_SOURCE[0]}" "$HERE/payload.sh" "$HERE"/stubs/* "$HERE/../lib/dkms-standin" <("$CC" --version) <(rpm --version) |
    sha256sum | cut -c1-16)
build_all() {
    build_pool el9 rocky-release 9 "$EL9_KERNEL_V" "$EL9_KERNEL_R" 427.13.1.el9_4
    build_pool el8 redhat-release 8 "$EL8_KERNEL_V" "$EL8_KERNEL_R" 553.5.1.el8_10
}
if [[ -n "${E2E_RPM_CACHE:-}" ]]; then
    cached="$E2E_RPM_CACHE/rpmpool-$cache_key"
    mkdir -p "$E2E_RPM_CACHE"
    (
        flock -w 900 9 || { echo "build-rpm.sh: could not lock $E2E_RPM_CACHE/.rpm-lock" >&2; exit 1; }
        if [[ ! -f "$cached/.complete" ]]; then
            find "$E2E_RPM_CACHE" -mindepth 1 -maxdepth 1 -type d -name 'rpmpool-*' ! -name "rpmpool-$cache_key" -exec rm -rf {} +
            build_all
            rm -rf "$cached" && cp -a "$POOL" "$cached" && touch "$cached/.complete"
        fi
        # Still under the lock: a run from another checkout (another key) evicts this pool.
        rm -rf "$POOL" && cp -a "$cached" "$POOL" && rm -f "$POOL/.complete"
    ) 9>"$E2E_RPM_CACHE/.rpm-lock"
else
    build_all
fi
t1=$SECONDS

# The distro's own key (Rocky's / RHEL's / EPEL's stand-in): signs BaseOS, EPEL and the host's rpms,
# and is already imported on the simulated host. NVIDIA's repos use the key gpuprov pins.
gpg --batch --quiet --no-tty --passphrase '' --quick-gen-key 'gpuprov e2e distro <e2e-distro@invalid>' rsa3072 sign never 2>/dev/null
DISTRO_FPR=$(gpg --batch --quiet --with-colons --list-keys e2e-distro@invalid | awk -F: '$1 == "fpr" {print $10; exit}')
gpg --batch --quiet --armor --export "$DISTRO_FPR" >"$OUT/distro-key.asc"
publish el9 rocky-release
publish el8 redhat-release

# NVIDIA's rhel repos serve the key as D42D0685.pub (reference §2.4); here it is the throwaway key.
for slug in rhel8 rhel9; do
    gpg --batch --quiet --armor --export "$FPR" >"$OUT/www/compute/cuda/repos/$slug/x86_64/D42D0685.pub"
    gpg --batch --quiet --armor --export "$WRONG" >"$OUT/www/compute/cuda/repos/$slug/x86_64/wrong-key.pub"
done
gpgconf --kill all >/dev/null 2>&1 || true
rm -rf "$STAGE" "$TOP" "$POOL" "$GNUPGHOME"
echo "rpm mirror built in $((SECONDS - t0)) s (rpms: $((t1 - t0)) s, signing and repositories: $((SECONDS - t1)) s)"
