#!/usr/bin/env bash
# Build the EL half of the test mirror. NVIDIA's driver rpms, and the distribution packages they
# require, are built from the recorded fixtures in tests/fixtures/nvidia-repos/ (RPM.md there):
# every name, epoch, version, release, arch and relation field exactly as recorded, only the
# payloads are stand-ins (by the fixture's Payload role). Built with rpmbuild (one run per group
# of distinct names, tests/e2e/mirror/rpm_fixtures.py writes the specs), signed with rpmsign,
# published with createrepo_c (+ modifyrepo_c for the nvidia-driver module streams of rhel8/9,
# as NVIDIA's genmodules.py makes them) and a detached, armored `repodata/repomd.xml.asc`.
#
# usage: mirror/build-rpm.sh OUTDIR   (after mirror/build.sh OUTDIR: same key, same www/)
# OUTDIR/www/compute/cuda/repos/rhel{8,9,10}/x86_64/  NVIDIA's CUDA repo: driver (fixtures), CUDA, cuDNN, NCCL
# OUTDIR/www/libnvidia-container/stable/rpm/x86_64/   the container toolkit's rpm repo
# OUTDIR/www/el{8,9,10}/{baseos,appstream,epel}/x86_64/ the distribution: BaseOS (kernel-devel/-headers,
#                                                     linux-firmware, python3-dnf-plugin-versionlock),
#                                                     AppStream (the graphics/OpenCL libraries NVIDIA's
#                                                     rpms require), EPEL (dkms)
# OUTDIR/el-host/el{8,9,10}/*.rpm                     what an installed EL host already has (not served):
#                                                     release package, kernel-core, base-system stand-in
# The payload reuses the apt side's stand-ins (payload.sh, stubs/nvidia-smi, lib/dkms-standin via
# EPEL's dkms), so both families behave the same. The versionlock plugin's payload is the build
# host's own Debian dnf-plugins-core files (apt-get install dnf-plugins-core; never committed).
set -euo pipefail

OUT=${1:?usage: build-rpm.sh OUTDIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIXTURES=$(cd "$HERE/../../fixtures/nvidia-repos" && pwd)
RPMFX=("${E2E_PYTHON:-python3}" "$HERE/rpm_fixtures.py")
OUT=$(cd "$OUT" && pwd)
export GNUPGHOME="$OUT/gnupg"
[[ -d "$GNUPGHOME" ]] || { echo "build-rpm.sh: run mirror/build.sh $OUT first (its key is in $GNUPGHOME)" >&2; exit 1; }
FPR=$(cat "$OUT/fingerprint")
WRONG=$(cat "$OUT/wrong-fingerprint")
STAGE="$OUT/rpmstage"
TOP="$OUT/rpmbuild"
POOL="$OUT/rpmpool"
DISTS=(el9 el8 el10)
rm -rf "$STAGE" "$TOP" "$POOL" "$OUT/el-host" "$OUT"/www/el8 "$OUT"/www/el9 "$OUT"/www/el10 \
    "$OUT"/www/compute/cuda/repos/rhel8 "$OUT"/www/compute/cuda/repos/rhel9 "$OUT"/www/compute/cuda/repos/rhel10 \
    "$OUT"/www/libnvidia-container/stable/rpm
mkdir -p "$STAGE" "$TOP" "$POOL"
CC=${CC:-cc}
CTK=1.17.3

# Simulated kernels (lib/rootfs_el.sh boots the first of each): RHEL 8.9's, Rocky 9.3's and Rocky
# 10.0's (uname -r on a Rocky 10.0 host, code id 52453768126), each with the next kernel of its
# stream (6.12.0-55.39.1.el10_0 from a Rocky 10 dnf history, code id 1959219682), so "for uname -r"
# is a real choice.
declare -A KERNEL_V=([el8]=4.18.0 [el9]=5.14.0 [el10]=6.12.0)
declare -A KERNEL_R=([el8]=513.5.1.el8_9 [el9]=362.24.1.el9_3 [el10]=55.27.1.el10_0)
declare -A KERNEL_NEXT_R=([el8]=553.5.1.el8_10 [el9]=427.13.1.el9_4 [el10]=55.39.1.el10_0)
# The host's release package and its version (dnf's $releasever; the os-release files are in
# tests/fixtures/os/): RHEL 8's, Rocky 9.3's, Rocky 10.0's.
declare -A RELEASE_PKG=([el8]=redhat-release [el9]=rocky-release [el10]=rocky-release)
declare -A RELEASE_VER=([el8]=8.9 [el9]=9.3 [el10]=10.0)
# The DKMS stand-in's BUILD_EXCLUSIVE_KERNEL for the fixtures' branches (580, 595, 610), which build
# on every EL kernel here (4.18, 5.14, 6.12).
DRIVER_KERNELS='^(4\.|5\.|6\.)'

# shellcheck source=mirror/payload.sh
source "$HERE/payload.sh" # mkso and the payload both mirror halves package
# shellcheck source=mirror/dcgm.sh
source "$HERE/dcgm.sh" # DCGM's payloads (stage_role's dcgm-core and dcgm-plugins)

# The build host's Debian versionlock plugin, the payload of the python3-dnf-plugin-versionlock
# stand-in (the EL roots have it removed, as a stock RHEL/Rocky image lacks it).
VERSIONLOCK_FILES=(/usr/lib/python3/dist-packages/dnf-plugins/versionlock.py /etc/dnf/plugins/versionlock.conf
    /etc/dnf/plugins/versionlock.list)
for f in "${VERSIONLOCK_FILES[@]}"; do
    [[ -f "$f" ]] || { echo "build-rpm.sh: $f missing: the build host needs Debian's dnf-plugins-core (tests/e2e/DEPS)" >&2; exit 1; }
done

# Staging: files under $STAGE/<key>/root, scriptlets in $STAGE/<key>/{post,preun,postun}, owned
# directories in $STAGE/<key>/dirs, %config(noreplace) files in $STAGE/<key>/configs; <key> is
# NAME-VERSION-RELEASE (one dist at a time: build_pool runs per EL major).
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
    mkdir -p "$d" "$STAGE/.so"
    # mkso's object depends only on the soname: compile each once (a compiler run per copy was
    # most of this build's time).
    [[ -f "$STAGE/.so/$5" ]] || mkso "$5" "$STAGE/.so/$5"
    cp "$STAGE/.so/$5" "$d/$6"
    ln -sf "$6" "$d/$5"
    : >"$(sdir "$1" "$2" "$3")/ldconfig" # EL's library packages run ldconfig in %post/%postun
}

# mkrpm NAME EPOCH VERSION RELEASE ARCH SUMMARY: queues one stand-in that is not from a fixture
# (toolkits, cuDNN, NCCL, container toolkit, kernel and host packages) as a stanza of
# $STAGE/generated.txt, built with the fixtures' rpm_fixtures.py specs. Dependency tags from the
# environment: REQ, PROV, CONFL (newline-separated "name [op evr]"), CONFIGS (paths marked
# %config(noreplace)), DIRS (directories the package owns).
mkrpm() {
    local name=$1 epoch=$2 ver=$3 rel=$4 arch=$5 d line
    [[ "$epoch" == none ]] && epoch=0
    d=$(sdir "$name" "$ver" "$rel")
    mkdir -p "$d/root"
    printf '%s\n' "${DIRS:-}" | sed '/^$/d' >"$d/dirs"
    printf '%s\n' "${CONFIGS:-}" | sed '/^$/d' >"$d/configs"
    while IFS= read -r line; do [[ -z "$line" ]] || mkdir -p "$d/root$line"; done <<<"${DIRS:-}"
    {
        printf 'Package: %s\nEpoch: %s\nVersion: %s\nRelease: %s\nArch: %s\n' "$name" "$epoch" "$ver" "$rel" "$arch"
        stanza_field Requires "${REQ:-}"
        stanza_field Provides "${PROV:-}"
        stanza_field Conflicts "${CONFL:-}"
        printf 'Payload: none\nSource: [generated]\nStatus: INFERRED\nReason: %s\n\n' "$6"
    } >>"$STAGE/generated.txt"
}

stanza_field() { # FIELD LINES: a multi-line fixture field (continuation lines start with a space)
    [[ -n "$2" ]] || return 0
    printf '%s: %s\n' "$1" "$(head -n 1 <<<"$2")"
    tail -n +2 <<<"$2" | sed '/^$/d; s/^/ /'
}

nvidia_smi() { sed "s/^CUDA_VERSION=.*/CUDA_VERSION=$1/" "$HERE/stubs/nvidia-smi"; }

# stage_role NAME VERSION RELEASE ROLE ARGS... (FIXTURE_EPOCH: its epoch): the stand-in payload of one fixture rpm (RPM.md,
# "Payload roles").
stage_role() {
    local n=$1 v=$2 r=$3 role=$4 d
    shift 4
    d=$(sdir "$n" "$v" "$r")
    mkdir -p "$d/root"
    case "$role" in
        none) ;;
        driver-marker) put "$n" "$v" "$r" /usr/share/nvidia/e2e-driver-version 0644 <<<"$v" ;;
        library)
            local so
            for so in "$@"; do lib "$n" "$v" "$r" /usr/lib64 "$so" "${so%%.so*}.so.$v"; done
            ;;
        nvidia-smi) nvidia_smi "${1#cuda=}" | put "$n" "$v" "$r" /usr/bin/nvidia-smi 0755 ;;
        persistenced)
            payload_persistenced | put "$n" "$v" "$r" /usr/bin/nvidia-persistenced 0755
            payload_persistenced_unit | put "$n" "$v" "$r" /usr/lib/systemd/system/nvidia-persistenced.service 0644
            ;;
        kmod-common)
            # NVIDIA's kmod-common ships /usr/lib/modprobe.d/nvidia.conf, which blacklists nouveau and
            # orders nvidia-uvm/nvidia-drm after nvidia (NVIDIA/yum-packaging-nvidia-kmod-common 570).
            # Its %post (nvidia-boot-update: grubby rd.driver.blacklist=nouveau) is not simulated.
            put "$n" "$v" "$r" /usr/lib/modprobe.d/nvidia.conf 0644 <<CONF
# gpuprov e2e stand-in (nvidia-e2e-kmod-common) of nvidia-kmod-common $v's modprobe configuration
blacklist nouveau
softdep nvidia post: nvidia-uvm nvidia-drm
CONF
            ;;
        dkms-source)
            # NVIDIA's kmod %post: dkms add/build/install, failures ignored (`|| :`), so a module DKMS
            # cannot build leaves the install green and the module unloadable, as on real hosts. Both
            # flavours register the DKMS module "nvidia" from /usr/src/nvidia-<version>; the open
            # source's module says MODULE_LICENSE("Dual MIT/GPL") (lib/dkms-standin), so the loaded
            # module reports "Open Kernel Module" as the real one does.
            if [[ "${1:-}" == open ]]; then
                put "$n" "$v" "$r" "/usr/src/nvidia-$v/e2e-module-license" 0644 <<<"Dual MIT/GPL"
            fi
            put "$n" "$v" "$r" "/usr/src/nvidia-$v/dkms.conf" 0644 <<DKMS
PACKAGE_NAME="nvidia"
PACKAGE_VERSION="$v"
AUTOINSTALL="yes"
BUILT_MODULE_NAME[0]="nvidia"
DEST_MODULE_LOCATION[0]="/extra"
BUILT_MODULE_NAME[1]="nvidia-peermem"
DEST_MODULE_LOCATION[1]="/extra"
BUILD_EXCLUSIVE_KERNEL="$DRIVER_KERNELS"
DKMS
            printf '/usr/src/nvidia-%s\n' "$v" >"$d/dirs"
            scriptlet "$n" "$v" "$r" post <<POST
dkms add -m nvidia -v $v -q || :
# Rebuild and make available for the currently running kernel
dkms build -m nvidia -v $v -q || :
dkms install -m nvidia -v $v -q --force || :
POST
            scriptlet "$n" "$v" "$r" preun <<PREUN
# Remove all versions from DKMS registry
dkms remove -m nvidia -v $v -q --all || :
PREUN
            ;;
        tool) printf '#!/bin/sh\necho "%s %s (gpuprov e2e stand-in)"\n' "${1##*/}" "$v" | put "$n" "$v" "$r" "$1" 0755 ;;
        fabricmanager)
            payload_fabricmanager "$v" | put "$n" "$v" "$r" /usr/bin/nv-fabricmanager 0755
            payload_fabricmanager_unit | put "$n" "$v" "$r" /usr/lib/systemd/system/nvidia-fabricmanager.service 0644
            ;;
        dcgm-core)
            # The host engine, dcgmi (which prints the version with its epoch) and NVIDIA's unit.
            payload_dcgm_hostengine "$v" | put "$n" "$v" "$r" /usr/bin/nv-hostengine 0755
            payload_dcgmi "$FIXTURE_EPOCH:$v-$r" | put "$n" "$v" "$r" /usr/bin/dcgmi 0755
            payload_dcgm_unit | put "$n" "$v" "$r" /usr/lib/systemd/system/nvidia-dcgm.service 0644
            ;;
        dcgm-plugins) payload_dcgm_plugins "$v" "${1#cuda=}" | put "$n" "$v" "$r" "$DCGM_LIBEXEC/plugins/cuda${1#cuda=}/README" 0644 ;;
        versionlock-plugin)
            local f
            # shellcheck disable=SC2094 # put writes under the stage root, not to $f
            for f in "${VERSIONLOCK_FILES[@]}"; do put "$n" "$v" "$r" "$f" 0644 <"$f"; done
            printf '%s\n' /etc/dnf/plugins/versionlock.conf /etc/dnf/plugins/versionlock.list >"$d/configs"
            ;;
        *) echo "build-rpm.sh: unknown payload role $role ($n)" >&2; return 1 ;;
    esac
}

# build_specs REPO-FILE POOL-DIR: rpmbuild every spec rpm_fixtures.py writes for REPO-FILE.
build_specs() {
    local spec log="$STAGE/rpmbuild.log"
    "${RPMFX[@]}" specs "$1" "$STAGE" "$STAGE/specs" >"$STAGE/specs.list"
    while IFS= read -r spec; do
        rpmbuild -bb --quiet --define "_topdir $TOP" --define "_rpmdir $2" \
            --define '_build_id_links none' --define 'debug_package %{nil}' --define '__os_install_post %{nil}' \
            --define '_binary_payload w9.gzdio' --define "_buildhost e2e.invalid" \
            --define '_rpmfilename %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' "$spec" >"$log" 2>&1 ||
            { cat "$log" >&2; echo "build-rpm.sh: rpmbuild $spec failed" >&2; return 1; }
    done <"$STAGE/specs.list"
    rm -rf "$STAGE/specs"
}

# build_fixture REPO-FILE POOL-DIR: stage each recorded rpm's payload by its role, then build them.
build_fixture() {
    local key name epoch ver rel arch payload
    while IFS=$'\t' read -r key name epoch ver rel arch payload; do
        # shellcheck disable=SC2086 # the role's arguments are words
        FIXTURE_EPOCH=$epoch stage_role "$name" "$ver" "$rel" $payload
    done < <("${RPMFX[@]}" plan "$1")
    build_specs "$1" "$2"
}

toolkit() { # X.Y FULL NVCC-VERSION
    local xy=$1 full=$2 dash=${1/./-} name="cuda-toolkit-${1/./-}"
    payload_nvcc "$xy" | put "$name" "$full" 1 "/usr/local/cuda-$xy/bin/nvcc" 0755
    payload_cuda_version_json "$full" "$3" | put "$name" "$full" 1 "/usr/local/cuda-$xy/version.json" 0644
    lib "$name" "$full" 1 "/usr/local/cuda-$xy/lib64" "libcudart.so.${xy%%.*}" "libcudart.so.$3"
    # NVIDIA's rpms register /usr/local/cuda with `alternatives` (chkconfig's) in %post.
    scriptlet "$name" "$full" 1 post <<POST
if [ -e /tmp/e2e-slow ]; then
    echo "\$\$" >/tmp/e2e-slow-started
    sleep 8
fi
alternatives --install /usr/local/cuda cuda /usr/local/cuda-$xy ${dash//-/}
alternatives --install /usr/local/cuda-${xy%%.*} cuda-${xy%%.*} /usr/local/cuda-$xy ${dash//-/}
POST
    scriptlet "$name" "$full" 1 postun <<POSTUN
if [ "\$1" -eq 0 ]; then
    alternatives --remove cuda /usr/local/cuda-$xy || :
    alternatives --remove cuda-${xy%%.*} /usr/local/cuda-$xy || :
fi
POSTUN
    REQ="" DIRS="/usr/local/cuda-$xy"$'\n'"/usr/local/cuda-$xy/bin"$'\n'"/usr/local/cuda-$xy/lib64" \
        mkrpm "$name" none "$full" 1 x86_64 "CUDA Toolkit $xy meta-package"
    # cuda-X-Y pulls a driver, floor-only (reference §C: cuda-runtime-11-8 Depends cuda-drivers >= 520.61.05).
    REQ="$name = $full-1"$'\n'"cuda-drivers >= $4" mkrpm "cuda-$dash" none "$full" 1 x86_64 "CUDA $xy meta-package (toolkit and driver)"
}

cudnn() { # VERSION CUDA-MAJOR
    local v=$1 cu=$2
    lib "libcudnn9-cuda-$cu" "$v" 1 /usr/lib64 libcudnn.so.9 "libcudnn.so.${v%.*}"
    REQ="" mkrpm "libcudnn9-cuda-$cu" none "$v" 1 x86_64 "cuDNN runtime libraries for CUDA $cu"
    put "libcudnn9-devel-cuda-$cu" "$v" 1 /usr/include/cudnn_version_v9.h 0644 <<HDR
/* gpuprov e2e stand-in for cudnn_version.h (cuDNN ${v%.*}); the define block has the real format. */
#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR 9
#define CUDNN_MINOR $(cut -d. -f2 <<<"$v")
#define CUDNN_PATCHLEVEL $(cut -d. -f3 <<<"$v")

#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

#endif /* CUDNN_VERSION_H */
HDR
    # cuDNN 9 rpms put the headers in /usr/include and the versioned copies behind alternatives.
    scriptlet "libcudnn9-devel-cuda-$cu" "$v" 1 post <<'POST'
alternatives --install /usr/include/cudnn_version.h libcudnn_version_h /usr/include/cudnn_version_v9.h 90
POST
    REQ="libcudnn9-cuda-$cu = $v-1" mkrpm "libcudnn9-devel-cuda-$cu" none "$v" 1 x86_64 "cuDNN development headers for CUDA $cu"
    REQ="libcudnn9-cuda-$cu = $v-1"$'\n'"libcudnn9-devel-cuda-$cu = $v-1" mkrpm "cudnn9-cuda-$cu" none "$v" 1 x86_64 "cuDNN 9 for CUDA $cu meta-package"
}

nccl() { # VERSION CUDA-X.Y
    local v=$1 cu=$2
    # NVIDIA's rhel repos: libnccl-2.21.5-1+cuda12.4.x86_64 (the CUDA build in the release).
    lib libnccl "$v" "1+cuda$cu" /usr/lib64 libnccl.so.2 "libnccl.so.$v"
    REQ="" mkrpm libnccl none "$v" "1+cuda$cu" x86_64 "NVIDIA Collective Communication Library (NCCL) Runtime"
    put libnccl-devel "$v" "1+cuda$cu" /usr/include/nccl.h 0644 <<HDR
/* gpuprov e2e stand-in for nccl.h */
#define NCCL_MAJOR $(cut -d. -f1 <<<"$v")
#define NCCL_MINOR $(cut -d. -f2 <<<"$v")
#define NCCL_PATCH $(cut -d. -f3 <<<"$v")
HDR
    REQ="libnccl = $v-1+cuda$cu" mkrpm libnccl-devel none "$v" "1+cuda$cu" x86_64 "NVIDIA Collective Communication Library (NCCL) Development Files"
}

cudnn_nccl() {
    cudnn 9.1.0.70 12
    # CUDA 13: cuDNN 9.19.0.56 (libcudnn9-cuda-13-9.19.0.56-1 beside CUDA 13.0.2, code id 69693825355)
    # and NCCL 2.27.7+cuda13.0 (reference §C [C33]).
    cudnn 9.19.0.56 13
    local cu
    for cu in 12.2 12.4 12.5; do nccl 2.21.5 "$cu"; done
    nccl 2.27.7 13.0
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
    # installonlypkg(kernel), as RHEL's kernel.spec gives kernel-devel (redhat/kernel.spec.template,
    # %kernel_devel_package: "Provides: installonlypkg(kernel)", as kernel-core's; seen in CentOS
    # Stream 9's (copy: bella485/centos-stream-9@036aa52) and CIQ's RHEL-derived one
    # (ctrliq/kernel-src-tree@001987a)): dnf keeps one per kernel side by side (installonlypkgs),
    # so every installed kernel has its tree.
    REQ="" PROV="installonlypkg(kernel)" DIRS="/usr/src/kernels/$kver" mkrpm kernel-devel none "$1" "$2" x86_64 "Development package for building kernel modules to match the kernel"
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
el_host_pkgs() { # RELEASE-NAME RELEASE-VERSION MAJOR KVER-V KVER-R
    local kver="$4-$5.x86_64" base_prov
    put "$1" "$2" "1.$DIST" "/etc/$1-e2e" 0644 <<<"gpuprov e2e stand-in for $1 $2"
    REQ="" PROV="system-release"$'\n'"system-release($3)"$'\n'"system-release(releasever) = $3" \
        mkrpm "$1" none "$2" "1.$DIST" noarch "$1 release files"
    mkdir -p "$(sdir kernel-core "$4" "$5")/root/lib/modules/$kver"
    ln -sfn "/usr/src/kernels/$kver" "$(sdir kernel-core "$4" "$5")/root/lib/modules/$kver/build"
    REQ="" PROV="kernel = $4-$5"$'\n'"installonlypkg(kernel)" DIRS="/lib/modules/$kver" mkrpm kernel-core none "$4" "$5" x86_64 "The Linux kernel"
    # bash, coreutils, glibc, python3, dnf-plugins-core ...: the Debian root's own tools, announced to
    # rpm (scriptlets need /bin/sh; the versionlock plugin requires this EL's python ABI and the
    # dnf-plugins-core it was built with, taken from its fixture). As EL's glibc, its ldconfig
    # searches /usr/lib64 (where EL's library rpms install).
    base_prov=$'/bin/sh\n/usr/bin/sh\nbash\ncoreutils\nglibc\nfilesystem\nchkconfig\n/usr/sbin/alternatives\nsystemd'
    base_prov+=$'\n'$("${RPMFX[@]}" field "$FIXTURES/rhel${DIST#el}/$DIST-baseos.txt" python3-dnf-plugin-versionlock Requires)
    printf '/usr/lib64\n/lib64\n' | put e2e-el-base 1.0 "1.$DIST" /etc/ld.so.conf.d/e2e-el-lib64.conf 0644
    REQ="" PROV="$base_prov" mkrpm e2e-el-base none 1.0 "1.$DIST" x86_64 "gpuprov e2e: the Debian userland this EL-shaped root runs on"
}

# --- keys: import into rpm's macros for rpmsign -----------------------------------------------------
sign_rpms() { # DIR KEY-FINGERPRINT
    # rpmsign --addsign; Debian's rpm names gpg2, which bookworm lacks.
    local log="$STAGE/rpmsign.log"
    # Two rpmsign runs at a time (signing a few hundred stand-ins was a third of a cached build).
    find "$1" -name '*.rpm' -print0 | GPG_TTY=/dev/null xargs -0 -r -n 40 -P 2 rpmsign --define "__gpg $(command -v gpg)" \
        --define "_gpg_name $2" --addsign >"$log" 2>&1 || { cat "$log" >&2; return 1; }
}

# mkrepo DIR FILE...: hard-link the named rpms, createrepo_c, optional modules.yaml, signed repomd.
# From $POOL/$DIST signed with the NVIDIA stand-in key, or with OS=1 from $POOL/$DIST-os and the distro key.
mkrepo() {
    local dir="$OUT/www/$1" modules=${MODULES:-} pool="$POOL/$DIST" key=$FPR
    if [[ "${OS:-0}" == 1 ]]; then pool="$POOL/$DIST-os" key=$DISTRO_FPR; fi
    shift
    mkdir -p "$dir"
    local f
    for f in "$@"; do
        [[ -e "$pool/$f" ]] || { echo "build-rpm.sh: $pool has no $f ($DIST)" >&2; return 1; }
        ln -f "$pool/$f" "$dir/"
    done
    createrepo_c --quiet --simple-md-filenames --no-database "$dir" >/dev/null
    if [[ -n "$modules" ]]; then
        modifyrepo_c --mdtype=modules --simple-md-filenames --no-compress "$modules" "$dir/repodata" >/dev/null
    fi
    gpg --batch --quiet --no-tty --yes --local-user "$key" --armor --detach-sign \
        -o "$dir/repodata/repomd.xml.asc" "$dir/repodata/repomd.xml"
}
# shellcheck disable=SC2086 # pool_files DIR GLOB...: the file names in DIR the globs match
pool_files() { (cd "$1" && shopt -s nullglob && for g in "${@:2}"; do printf '%s\n' $g; done); }

# build_pool DIST: every unsigned rpm of one EL major into $POOL/DIST (NVIDIA's), $POOL/DIST-os
# (the distribution's), the repositories' file lists and the modules.yaml.
build_pool() {
    DIST=$1
    local slug="rhel${DIST#el}" fx="$FIXTURES/rhel${DIST#el}"
    mkdir -p "$POOL/$DIST" "$POOL/$DIST-os"
    : >"$STAGE/generated.txt"
    build_fixture "$fx/cuda-$slug-x86_64.txt" "$POOL/$DIST"
    build_fixture "$fx/cuda-$slug-x86_64.dcgm.txt" "$POOL/$DIST"
    build_fixture "$fx/$DIST-baseos.txt" "$POOL/$DIST-os"
    build_fixture "$fx/$DIST-appstream.txt" "$POOL/$DIST-os"
    # cuda-X-Y's floor: the toolkit driver of its CUDA release (12.2 -> 535, 12.4 -> 550, 12.5 -> 555,
    # 13.0 -> 580.65.06 as src/data/nvidia-matrix.yaml). 13.0.1 is CUDA 13.0 Update 1, whose
    # components are 13.0.88 (cuda-toolkit-13-0-13.0.1-1 with config-common 13.0.88 in NVIDIA's
    # amzn2023 repo, code id 70438254377).
    local xy
    for xy in 12.2:12.2.2:12.2.140:535.104.05 12.4:12.4.1:12.4.131:550.54.15 12.5:12.5.1:12.5.82:555.42.06 \
        13.0:13.0.1:13.0.88:580.65.06; do
        IFS=: read -r a b c d <<<"$xy"
        toolkit "$a" "$b" "$c" "$d"
    done
    cudnn_nccl
    container_toolkit
    kernel_pkgs "${KERNEL_V[$DIST]}" "${KERNEL_R[$DIST]}"
    kernel_pkgs "${KERNEL_V[$DIST]}" "${KERNEL_NEXT_R[$DIST]}"
    epel_dkms
    el_host_pkgs "${RELEASE_PKG[$DIST]}" "${RELEASE_VER[$DIST]}" "${DIST#el}" "${KERNEL_V[$DIST]}" "${KERNEL_R[$DIST]}"
    build_specs "$STAGE/generated.txt" "$POOL/$DIST"
    mv "$POOL/$DIST"/{kernel-,dkms-,e2e-el-base-,"${RELEASE_PKG[$DIST]}"-}*.rpm "$POOL/$DIST-os/"
    # What each repository publishes (file names), and the module streams of the rhel8/9 repos.
    "${RPMFX[@]}" names "$fx/cuda-$slug-x86_64.txt" >"$POOL/$DIST/cuda.list"
    "${RPMFX[@]}" names "$fx/cuda-$slug-x86_64.dcgm.txt" >>"$POOL/$DIST/cuda.list"
    pool_files "$POOL/$DIST" 'cuda-toolkit-*' 'cuda-1[23]-*' 'libcudnn9*' 'cudnn9*' 'libnccl*' >>"$POOL/$DIST/cuda.list"
    pool_files "$POOL/$DIST" 'nvidia-container-toolkit*' 'libnvidia-container*' >"$POOL/$DIST/ctk.list"
    { "${RPMFX[@]}" names "$fx/$DIST-baseos.txt" && pool_files "$POOL/$DIST-os" 'kernel-devel-*' 'kernel-headers-*'; } >"$POOL/$DIST-os/baseos.list"
    "${RPMFX[@]}" names "$fx/$DIST-appstream.txt" >"$POOL/$DIST-os/appstream.list"
    pool_files "$POOL/$DIST-os" 'dkms-*' >"$POOL/$DIST-os/epel.list"
    pool_files "$POOL/$DIST-os" "${RELEASE_PKG[$DIST]}-*" 'kernel-core-*' 'e2e-el-base-*' >"$POOL/$DIST-os/host.list"
    local modules
    modules=$(sed -n 's/^Same-As: *//p' "$fx/cuda-$slug-x86_64.txt")
    modules=$fx/${modules:-cuda-$slug-x86_64.txt}
    modules=${modules%.txt}.modules.txt
    if [[ -f "$modules" ]]; then
        # rhel8 rebuilds rhel9's graph: the same streams, its .el8 builds.
        "${RPMFX[@]}" modules "$modules" | sed "s/\.el9\b/.$DIST/g" >"$POOL/$DIST/modules.yaml"
    fi
    rm -rf "${STAGE:?}"/*-*-* "$STAGE/generated.txt"
}

# publish DIST: sign (NVIDIA's with the pinned key, the distro's with the distro key), then the
# repositories and the installed host's rpms.
publish() {
    DIST=$1
    local slug="rhel${DIST#el}" modules=""
    sign_rpms "$POOL/$DIST" "$FPR"
    sign_rpms "$POOL/$DIST-os" "$DISTRO_FPR"
    [[ -f "$POOL/$DIST/modules.yaml" ]] && modules="$POOL/$DIST/modules.yaml"
    # shellcheck disable=SC2046 # one file name a line
    MODULES="$modules" mkrepo "compute/cuda/repos/$slug/x86_64" $(cat "$POOL/$DIST/cuda.list")
    # shellcheck disable=SC2046
    OS=1 mkrepo "$DIST/baseos/x86_64" $(cat "$POOL/$DIST-os/baseos.list")
    # shellcheck disable=SC2046
    OS=1 mkrepo "$DIST/appstream/x86_64" $(cat "$POOL/$DIST-os/appstream.list")
    # shellcheck disable=SC2046
    OS=1 mkrepo "$DIST/epel/x86_64" $(cat "$POOL/$DIST-os/epel.list")
    if [[ "$DIST" == el9 ]]; then
        # One container toolkit repo for every EL (nvidia.github.io/libnvidia-container/stable/rpm/$basearch).
        # shellcheck disable=SC2046
        mkrepo libnvidia-container/stable/rpm/x86_64 $(cat "$POOL/$DIST/ctk.list")
    fi
    mkdir -p "$OUT/el-host/$DIST"
    local f
    while IFS= read -r f; do ln -f "$POOL/$DIST-os/$f" "$OUT/el-host/$DIST/"; done <"$POOL/$DIST-os/host.list"
}

t0=$SECONDS
# The unsigned rpms depend only on this script, the fixtures, the payload stand-ins and the host's
# versionlock plugin: cached under $E2E_RPM_CACHE (run.sh passes the root cache) so a run only signs
# and publishes.
cache_key=$(cat "${BASH_SOURCE[0]}" "$HERE/payload.sh" "$HERE/dcgm.sh" "$HERE/rpm_fixtures.py" "$HERE"/stubs/* "$HERE/../lib/dkms-standin" \
    "${VERSIONLOCK_FILES[@]}" <(cd "$FIXTURES" && find . -type f -name '*.txt' -print0 | LC_ALL=C sort -z | xargs -0 cat) \
    <("$CC" --version) <(rpm --version) | sha256sum | cut -c1-16)
build_all() {
    local d
    for d in "${DISTS[@]}"; do build_pool "$d"; done
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

# The distro's own key (Rocky's / RHEL's / EPEL's stand-in): signs BaseOS, AppStream, EPEL and the
# host's rpms, and is already imported on the simulated host. NVIDIA's repos use the key gpuprov pins.
gpg --batch --quiet --no-tty --passphrase '' --quick-gen-key 'gpuprov e2e distro <e2e-distro@invalid>' rsa3072 sign never 2>/dev/null
DISTRO_FPR=$(gpg --batch --quiet --with-colons --list-keys e2e-distro@invalid | awk -F: '$1 == "fpr" {print $10; exit}')
gpg --batch --quiet --armor --export "$DISTRO_FPR" >"$OUT/distro-key.asc"
for d in "${DISTS[@]}"; do publish "$d"; done

# NVIDIA's rhel repos serve the key as D42D0685.pub (reference §2.4); here it is the throwaway key.
for d in "${DISTS[@]}"; do
    gpg --batch --quiet --armor --export "$FPR" >"$OUT/www/compute/cuda/repos/rhel${d#el}/x86_64/D42D0685.pub"
    gpg --batch --quiet --armor --export "$WRONG" >"$OUT/www/compute/cuda/repos/rhel${d#el}/x86_64/wrong-key.pub"
done
gpgconf --kill all >/dev/null 2>&1 || true
rm -rf "$STAGE" "$TOP" "$POOL" "$GNUPGHOME"
echo "rpm mirror built in $((SECONDS - t0)) s (rpms: $((t1 - t0)) s, signing and repositories: $((SECONDS - t1)) s)"
