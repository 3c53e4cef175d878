# shellcheck shell=bash
# Debian root filesystems for the e2e suite: Debian 12 for every scenario, Debian 11 and 13 for
# the packaged binary's portability (scenario 20).
#
# One minbase root is debootstrapped once and cached under $E2E_CACHE, keyed by a hash of
# everything that shapes it (suite, mirror, include list, recipe version). Every scenario gets
# a fresh copy under $E2E_WORK/roots/. Nothing from the host is mounted into a root: /proc and
# /sys inside it are plain directories holding the simulated kernel files gpuprov reads.

E2E_CACHE=${E2E_CACHE:-/var/cache/gpuprov-e2e}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ROOTFS_SUITE=bookworm
# Runtime libraries of build/gpuprov (Debian 12 sonames) plus what the steps call.
ROOTFS_INCLUDE=libcurl4,libyaml-cpp0.7,libfmt9,libspdlog1.10,libssl3,initramfs-tools,kmod
ROOTFS_RECIPE=4 # bump when rootfs_finish_base changes
# The other suites: the packaged binary's own runtime needs (libcurl, opened when it fetches) and
# what rootfs_simulate_host shapes. Debian 13 renamed libcurl4 in its 64-bit time_t transition,
# and its apt verifies with sqv, so gpgv (which gpuprov verifies with) is no longer there.
declare -A ROOTFS_SUITE_INCLUDE=(
    [bullseye]=libcurl4,initramfs-tools,kmod
    [trixie]=libcurl4t64,gpgv,initramfs-tools,kmod
)

# Simulated host. A scenario may set SIM_KERNEL before scenario_begin (e2e 15 runs a kernel the
# driver's DKMS build does not support). The loaded driver's version is whatever DKMS built.
SIM_KERNEL=${SIM_KERNEL:-6.1.0-28-amd64}
SIM_GPU_COUNT=4
SIM_GPU_DEVICE=0x20b2 # A100-SXM4-80GB

rootfs_key() { # SUITE INCLUDE
    printf '%s|%s|%s|%s\n' "$1" "$DEBIAN_MIRROR" "$2" "$ROOTFS_RECIPE" | sha256sum | cut -c1-16
}

# rootfs_base [SUITE]: prints the path of the cached base root (Debian 12 unless SUITE names
# another of ROOTFS_SUITE_INCLUDE), building it when absent.
rootfs_base() {
    local suite=${1:-$ROOTFS_SUITE} include=$ROOTFS_INCLUDE prefix=root- lock=.lock dlog=debootstrap.log key dir
    if [[ "$suite" != "$ROOTFS_SUITE" ]]; then
        include=${ROOTFS_SUITE_INCLUDE[$suite]:?"no e2e root recipe for suite $suite"}
        prefix=root-$suite-
        lock=.lock-$suite # building it never holds up the scenarios that need Debian 12
        dlog=debootstrap-$suite.log
    fi
    key=$(rootfs_key "$suite" "$include")
    dir="$E2E_CACHE/$prefix$key"
    mkdir -p "$E2E_CACHE"
    (
        flock -w 900 9 || die "could not lock $E2E_CACHE/$lock within 900 s"
        if [[ -f "$dir/.e2e-complete" ]]; then exit 0; fi
        # Older keys of this suite and the manual probe root are dead weight.
        local older='root-????????????????'
        [[ "$prefix" == root- ]] || older="$prefix*"
        find "$E2E_CACHE" -mindepth 1 -maxdepth 1 -type d \( -name "$older" -o -name 'probe-root' \) \
            ! -name "$prefix$key" -exec rm -rf {} +
        local tmp="$dir.tmp.$$"
        rm -rf "$tmp"
        log "debootstrap $suite (minbase, include=$include) -> $dir"
        local t0=$SECONDS
        if ! timeout 900 debootstrap --variant=minbase --include="$include" \
            "$suite" "$tmp" "$DEBIAN_MIRROR" >"$E2E_CACHE/$dlog" 2>&1; then
            tail -n 30 "$E2E_CACHE/$dlog" >&2
            umount_below "$tmp"
            rm -rf "$tmp"
            die "debootstrap failed (log: $E2E_CACHE/$dlog)"
        fi
        umount_below "$tmp"
        rootfs_finish_base "$tmp"
        touch "$tmp/.e2e-complete"
        mv "$tmp" "$dir"
        log "base root built in $((SECONDS - t0)) s"
    ) 9>"$E2E_CACHE/$lock" || return 1
    printf '%s\n' "$dir"
}

# rootfs_base_foreign ARCH: prints the path of a cached Debian 12 root of another architecture
# (arm64 for scenario 52), building it when absent: debootstrap's first stage only (--foreign),
# the required packages unpacked, nothing configured, which needs no emulator and gives what
# `gpuprov facts` reads (os-release, the dynamic loader and libc of that architecture).
rootfs_base_foreign() {
    local arch=$1 key dir lock=.lock-$1 dlog=debootstrap-$1.log
    key=$(rootfs_key "$ROOTFS_SUITE-foreign-$arch" "")
    dir="$E2E_CACHE/root-$arch-$key"
    mkdir -p "$E2E_CACHE"
    (
        flock -w 900 9 || die "could not lock $E2E_CACHE/$lock within 900 s"
        if [[ -f "$dir/.e2e-complete" ]]; then exit 0; fi
        find "$E2E_CACHE" -mindepth 1 -maxdepth 1 -type d -name "root-$arch-*" ! -name "root-$arch-$key" \
            -exec rm -rf {} +
        local tmp="$dir.tmp.$$" t0=$SECONDS
        rm -rf "$tmp"
        log "debootstrap --foreign --arch $arch $ROOTFS_SUITE (minbase) -> $dir"
        if ! timeout 900 debootstrap --foreign --arch="$arch" --variant=minbase \
            "$ROOTFS_SUITE" "$tmp" "$DEBIAN_MIRROR" >"$E2E_CACHE/$dlog" 2>&1; then
            tail -n 30 "$E2E_CACHE/$dlog" >&2
            rm -rf "$tmp"
            die "debootstrap --foreign failed (log: $E2E_CACHE/$dlog)"
        fi
        # The .debs the second stage would install: dead weight every copy would carry.
        rm -f "$tmp"/var/cache/apt/archives/*.deb
        rm -rf "${tmp:?}/proc" "${tmp:?}/sys"
        mkdir -p "$tmp/proc" "$tmp/sys"
        touch "$tmp/.e2e-complete"
        mv "$tmp" "$dir"
        log "$arch root built in $((SECONDS - t0)) s"
    ) 9>"$E2E_CACHE/$lock" || return 1
    printf '%s\n' "$dir"
}

# debootstrap mounts /proc and /sys in the target while it runs; make sure none is left behind.
umount_below() {
    local m
    while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done < <(awk -v p="$1/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r)
}

# One-time shaping of the base root.
rootfs_finish_base() {
    local r=$1
    # No distro archive inside the roots: scenarios must not depend on (or wait for) the
    # network, and the mirror's request log then shows exactly what gpuprov fetched.
    printf '# gpuprov e2e: Debian archive removed on purpose (offline test host)\n' >"$r/etc/apt/sources.list"
    rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin
    mkdir -p "$r/var/lib/apt/lists/partial"
    # minbase has no ca-certificates; libcurl (OpenSSL) and apt (GnuTLS) both default to this bundle.
    mkdir -p "$r/etc/ssl/certs"
    : >"$r/etc/ssl/certs/ca-certificates.crt"
    # Empty the proc/sys mount points: they hold simulated files per scenario.
    rm -rf "${r:?}/proc" "${r:?}/sys"
    mkdir -p "$r/proc" "$r/sys"
    rootfs_slim "$r"
    printf '%s\n' "$(date -u +%FT%TZ) built by tests/e2e/lib/rootfs.sh" >"$r/etc/gpuprov-e2e-root"
}

# Like Debian's docker "slim" images: no docs, man pages or translations, now or on later
# installs, and no cached .debs. Halves the files every scenario copies.
rootfs_slim() {
    local r=$1
    rm -f "$r"/var/cache/apt/archives/*.deb
    mkdir -p "$r/etc/dpkg/dpkg.cfg.d"
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
        'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
        'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
        >"$r/etc/dpkg/dpkg.cfg.d/01-e2e-slim"
    find "$r/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete 2>/dev/null || true
    find "$r/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
    rm -rf "$r"/usr/share/man/* "$r"/usr/share/info/*
    find "$r/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} + 2>/dev/null || true
}

# rootfs_new NAME [SUITE]: fresh copy of the base root, prints its path.
rootfs_new() {
    local base
    base=$(rootfs_base "${2:-}") || return 1
    rootfs_copy "$base" "$1"
}

# rootfs_copy BASE NAME: fresh copy of a cached root under $E2E_WORK/roots, prints its path.
rootfs_copy() {
    local dst="$E2E_WORK/roots/$2"
    rm -rf "$dst"
    mkdir -p "$E2E_WORK/roots"
    cp -a --reflink=auto "$1" "$dst"
    rm -f "$dst/.e2e-complete"
    printf '%s\n' "$dst"
}

rootfs_remove() {
    local r=$1
    [[ -n "$r" && "$r" == "$E2E_WORK"/roots/* ]] || return 0
    umount_below "$r"
    rm -rf "$r"
}

# Copy gpuprov into the root and make sure every shared library resolves there.
rootfs_install_gpuprov() {
    local r=$1 bin=${GPUPROV_BIN:-$REPO_ROOT/build/gpuprov}
    [[ -x "$bin" ]] || { fail "gpuprov binary not found at $bin (set GPUPROV_BIN or build it)"; return 1; }
    install -D -m 0755 "$bin" "$r/usr/local/bin/gpuprov"
    local lib missing
    missing=$(chroot "$r" /usr/bin/ldd /usr/local/bin/gpuprov 2>&1 | awk '/not found/ {print $1}') || true
    for lib in $missing; do
        local hostpath
        hostpath=$(ldd "$bin" | awk -v l="$lib" '$1 == l {print $3}')
        if [[ -n "$hostpath" && -f "$hostpath" ]]; then
            log "copying $lib from host ($hostpath) into the root"
            install -D -m 0644 "$(readlink -f "$hostpath")" "$r/usr/lib/x86_64-linux-gnu/$lib"
        else
            fail "library $lib needed by gpuprov is missing in the root and on the host"
        fi
    done
    if chroot "$r" /usr/bin/ldd /usr/local/bin/gpuprov 2>&1 | grep -q 'not found'; then
        fail "gpuprov has unresolved libraries inside the root"
        return 1
    fi
}

# rootfs_simulate_host ROOT [nouveau]: the kernel-side view of an HGX A100 box.
rootfs_simulate_host() {
    local r=$1 mode=${2:-}
    mkdir -p "$r/proc/sys/kernel" "$r/proc/driver" "$r/sys/bus/pci/devices" "$r/sys/module" \
        "$r/sys/firmware" "$r/lib/modules/$SIM_KERNEL/build"
    printf '%s\n' "$SIM_KERNEL" >"$r/proc/sys/kernel/osrelease"
    mkdir -p "$r/proc/sys/kernel/random"
    cat /proc/sys/kernel/random/uuid >"$r/proc/sys/kernel/random/boot_id"
    # The installed kernel, as initramfs-tools sees it: `update-initramfs -u` really regenerates
    # /boot/initrd.img-$SIM_KERNEL (the placeholder below is replaced by a ~5 MB image).
    mkdir -p "$r/boot" "$r/lib/modules/$SIM_KERNEL/kernel" "$r/var/lib/initramfs-tools"
    printf 'CONFIG_BLK_DEV_INITRD=y\nCONFIG_RD_GZIP=y\nCONFIG_RD_XZ=y\nCONFIG_RD_ZSTD=y\nCONFIG_MODULE_SIG=y\n' \
        >"$r/boot/config-$SIM_KERNEL"
    printf 'e2e placeholder kernel\n' >"$r/boot/vmlinuz-$SIM_KERNEL"
    printf 'e2e placeholder initrd\n' >"$r/boot/initrd.img-$SIM_KERNEL"
    : >"$r/var/lib/initramfs-tools/$SIM_KERNEL"
    local f
    for f in modules.order modules.builtin modules.builtin.modinfo; do : >"$r/lib/modules/$SIM_KERNEL/$f"; done
    printf 'COMPRESS=gzip\n' >"$r/etc/initramfs-tools/conf.d/e2e-compress.conf"
    cat >"$r/proc/meminfo" <<'MEM'
MemTotal:       270000000 kB
MemFree:        262144000 kB
MemAvailable:   265000000 kB
Buffers:          102400 kB
Cached:          2048000 kB
SwapCached:            0 kB
SwapTotal:             0 kB
SwapFree:              0 kB
MEM
    local i bus
    for ((i = 0; i < SIM_GPU_COUNT; i++)); do
        bus=$(printf '0000:%02x:00.0' $((0x17 + i * 0x14)))
        mkdir -p "$r/sys/bus/pci/devices/$bus"
        printf '0x10de\n' >"$r/sys/bus/pci/devices/$bus/vendor"
        printf '%s\n' "$SIM_GPU_DEVICE" >"$r/sys/bus/pci/devices/$bus/device"
        printf '0x030200\n' >"$r/sys/bus/pci/devices/$bus/class"
        printf '0x10de\n' >"$r/sys/bus/pci/devices/$bus/subsystem_vendor"
        printf '0x1463\n' >"$r/sys/bus/pci/devices/$bus/subsystem_device"
        printf '%s\n' "$((i < 2 ? 0 : 1))" >"$r/sys/bus/pci/devices/$bus/numa_node"
    done
    # A non-NVIDIA device so PCI parsing has something to skip (ASPEED BMC VGA).
    mkdir -p "$r/sys/bus/pci/devices/0000:03:00.0"
    printf '0x1a03\n' >"$r/sys/bus/pci/devices/0000:03:00.0/vendor"
    printf '0x2000\n' >"$r/sys/bus/pci/devices/0000:03:00.0/device"
    printf '0x030000\n' >"$r/sys/bus/pci/devices/0000:03:00.0/class"
    # /proc/modules: real format "name size refcount deps state offset".
    {
        printf 'ext4 1044480 1 - Live 0x0000000000000000\n'
        printf 'mbcache 16384 1 ext4, Live 0x0000000000000000\n'
        if [[ "$mode" == nouveau ]]; then
            printf 'nouveau 2809856 0 - Live 0x0000000000000000\n'
            printf 'drm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000\n'
        fi
    } >"$r/proc/modules"
    if [[ "$mode" == nouveau ]]; then
        mkdir -p "$r/sys/module/nouveau/parameters"
        printf '%s\n' -1 >"$r/sys/module/nouveau/parameters/modeset"
        rm -rf "$r/proc/driver/nvidia"
    fi
}

# rootfs_simulate_nvswitch ROOT: the four third-generation NVSwitches of an HGX H100 8-GPU
# baseboard as sysfs lists them (class 0x068000 "bridge, other", NVIDIA device 0x22a3, no driver
# bound), laid out as tests/fixtures/hosts/ubuntu-24.04 records them. gpuprov's facts count
# these (not the GPU model) to decide that `fabric_manager: auto` wants fabric manager.
rootfs_simulate_nvswitch() {
    local r=$1 bus
    for bus in 0000:05:00.0 0000:06:00.0 0000:07:00.0 0000:08:00.0; do
        mkdir -p "$r/sys/bus/pci/devices/$bus"
        printf '0x10de\n' >"$r/sys/bus/pci/devices/$bus/vendor"
        printf '0x22a3\n' >"$r/sys/bus/pci/devices/$bus/device"
        printf '0x068000\n' >"$r/sys/bus/pci/devices/$bus/class"
    done
}

# rootfs_simulate_nvlink5 ROOT: an HGX B200's NVLink 5 switches as the kernel shows them: no
# NVIDIA PCI bridges (rootfs_simulate_nvswitch's are NVLink 4), but four ConnectX-7 functions
# (15b3:1021, class 0x020700) the switch trays are managed through, each an RDMA device
# (mlx5_0..3) whose PCI VPD holds "SW_MNG", which is how NVIDIA's driver container tells them
# from ConnectX-7 NICs of the same id (gpu-driver-container `_assert_nvlink5_system`). The VPD
# is laid out as the PCI spec's (identifier string, VPD-R keywords, end tag); its exact bytes on a
# real tray are not public, the marker is (sysadmins quote "SMDL=SW_MNG"). mlx5_core, mlx5_ib,
# ib_uverbs and ib_core are loaded; ib_umad is not, but the kernel ships it.
rootfs_simulate_nvlink5() {
    local r=$1 bridge=devices/pci0000:00/0000:00:01.1 i addr
    for i in 0 1 2 3; do
        addr=0000:0$((5 + i)):00.0
        rootfs_ib_function "$r" "$bridge" "$addr" 0x1021 0x020700 "mlx5_$i" "uverbs$i"
        rootfs_ib_port "$r" "mlx5_$i" 1 "4: ACTIVE" "5: LinkUp" "400 Gb/sec (4X NDR)" InfiniBand
        # 0x82 + length, identifier; 0x90 + length, PN / V3 (SMDL=SW_MNG) / RV; 0x78 end.
        printf '\x82\x21\x00Nvidia ConnectX-7 NVSwitch bridge\x90\x24\x00PN\x0fMCX750500B-0D00V3\x0bSMDL=SW_MNGRV\x01\x00\x78' \
            >"$r/sys/$bridge/$addr/vpd"
    done
    rootfs_ib_modules_loaded "$r"
    local kernel
    kernel=$(cat "$r/proc/sys/kernel/osrelease")
    mkdir -p "$r/lib/modules/$kernel/kernel/drivers/infiniband/core"
    printf 'gpuprov e2e stand-in for ib_umad.ko\n' >"$r/lib/modules/$kernel/kernel/drivers/infiniband/core/ib_umad.ko.zst"
}

# rootfs_simulate_ib ROOT [ofed]: the host's RDMA adapters as the kernel publishes them
# (Documentation/ABI/stable/sysfs-class-infiniband): a ConnectX-6 in InfiniBand mode (PCI class
# 0x020700, mlx5_0, port 1 ACTIVE at HDR) and a ConnectX-6 Dx Ethernet NIC (class 0x020000,
# mlx5_1, a RoCE port NCCL must not use). As on a real host the PCI functions live under
# /sys/devices and /sys/bus/pci/devices, /sys/class/infiniband and /sys/class/infiniband_verbs
# hold relative links into them, and each RDMA device's `device` link points back at its
# function. mlx5_core, mlx5_ib, ib_uverbs (a dependency of mlx5_ib) and ib_core are loaded.
# `ofed`: ib_core is MLNX_OFED's (kernel-only install), exporting the peer-memory API that
# nvidia-peermem links against (/proc/kallsyms); otherwise it is the distro kernel's inbox one.
rootfs_simulate_ib() {
    local r=$1 mode=${2:-} bridge=devices/pci0000:00/0000:00:01.1
    rootfs_ib_function "$r" "$bridge" 0000:0c:00.0 0x101b 0x020700 mlx5_0 uverbs0
    rootfs_ib_port "$r" mlx5_0 1 "4: ACTIVE" "5: LinkUp" "200 Gb/sec (4X HDR)" InfiniBand
    rootfs_ib_function "$r" "$bridge" 0000:0c:00.1 0x101d 0x020000 mlx5_1 uverbs1
    rootfs_ib_port "$r" mlx5_1 1 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (2X HDR)" Ethernet
    rootfs_ib_modules_loaded "$r"
    {
        printf 'ffffffffc0a10000 T ib_register_client\t[ib_core]\n'
        printf 'ffffffffc0a10400 T ib_register_device\t[ib_core]\n'
        if [[ "$mode" == ofed ]]; then
            printf 'ffffffffc0a1b2c0 T ib_register_peer_memory_client\t[ib_core]\n'
            printf 'ffffffffc0a1b4e0 T ib_unregister_peer_memory_client\t[ib_core]\n'
        fi
    } >>"$r/proc/kallsyms"
}

# rootfs_ib_modules_loaded ROOT: the inbox RDMA stack an mlx5 adapter loads, as /sys/module and
# /proc/modules show it: mlx5_core, mlx5_ib, ib_uverbs (a dependency of mlx5_ib) and ib_core.
rootfs_ib_modules_loaded() {
    local r=$1 m
    for m in mlx5_core mlx5_ib ib_uverbs ib_core; do mkdir -p "$r/sys/module/$m"; done
    cat >>"$r/proc/modules" <<'MODS'
mlx5_ib 466944 0 - Live 0x0000000000000000
ib_uverbs 172032 1 mlx5_ib, Live 0x0000000000000000
ib_core 442368 2 mlx5_ib,ib_uverbs, Live 0x0000000000000000
mlx5_core 2203648 1 mlx5_ib, Live 0x0000000000000000
MODS
}

# rootfs_ib_function ROOT BRIDGE ADDRESS DEVICE-ID CLASS IBDEV UVERBS: one Mellanox PCI function
# with its RDMA device and verbs node.
rootfs_ib_function() {
    local r=$1 bridge=$2 addr=$3 fn="$1/sys/$2/$3"
    mkdir -p "$fn/infiniband/$6/ports" "$fn/infiniband_verbs/$7" "$r/sys/bus/pci/devices" \
        "$r/sys/class/infiniband" "$r/sys/class/infiniband_verbs"
    printf '0x15b3\n' >"$fn/vendor"
    printf '%s\n' "$4" >"$fn/device"
    printf '%s\n' "$5" >"$fn/class"
    printf '0\n' >"$fn/numa_node"
    ln -sfn "../../../$bridge/$addr" "$r/sys/bus/pci/devices/$addr"
    ln -sfn "../../$bridge/$addr/infiniband/$6" "$r/sys/class/infiniband/$6"
    ln -sfn "../../../$addr" "$fn/infiniband/$6/device"
    printf '1: CA\n' >"$fn/infiniband/$6/node_type"
    printf '20.39.1002\n' >"$fn/infiniband/$6/fw_ver"
    ln -sfn "../../$bridge/$addr/infiniband_verbs/$7" "$r/sys/class/infiniband_verbs/$7"
    ln -sfn "../../../$addr" "$fn/infiniband_verbs/$7/device"
    printf '%s\n' "$6" >"$fn/infiniband_verbs/$7/ibdev"
    printf '1\n' >"$fn/infiniband_verbs/$7/abi_version"
}

# rootfs_ib_port ROOT IBDEV PORT STATE PHYS-STATE RATE [LINK-LAYER]: a port's files in the
# kernel's formats ("4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)", "InfiniBand").
rootfs_ib_port() {
    local d="$1/sys/class/infiniband/$2/ports/$3"
    mkdir -p "$d"
    printf '%s\n' "$4" >"$d/state"
    printf '%s\n' "$5" >"$d/phys_state"
    printf '%s\n' "$6" >"$d/rate"
    if [[ -n "${7:-}" ]]; then printf '%s\n' "$7" >"$d/link_layer"; fi
}

# rootfs_simulate_nova ROOT: Ubuntu 26.04's kernel (7.0, CONFIG_NOVA_CORE=m, LP #2150845) with
# nova_core loaded and bound to every NVIDIA GPU: the PCI driver registers as "NovaCore"
# (drivers/gpu/nova-core/nova_core.rs), the module is nova_core.
rootfs_simulate_nova() {
    local r=$1 dev
    printf 'CONFIG_DRM_NOUVEAU=m\nCONFIG_NOVA_CORE=m\nCONFIG_DRM_NOVA=m\n' >>"$r/boot/config-$SIM_KERNEL"
    mkdir -p "$r/sys/module/nova_core" "$r/sys/bus/pci/drivers/NovaCore"
    printf 'nova_core 1372160 0 - Live 0x0000000000000000\n' >>"$r/proc/modules"
    for dev in "$r"/sys/bus/pci/devices/*; do
        if [[ "$(cat "$dev/vendor")" == 0x10de && "$(cat "$dev/class")" == 0x0302* ]]; then
            ln -sfn ../../../bus/pci/drivers/NovaCore "$dev/driver"
        fi
    done
}

# rootfs_simulate_secure_boot ROOT [KEY-DIR]: UEFI firmware with Secure Boot on. efivarfs shows
# the SecureBoot and SetupMode variables as the kernel does (4 attribute bytes, NV|BS|RT = 0x06,
# then the value: SecureBoot 1, SetupMode 0); that is what gpuprov's facts and
# lib/efivars-standin.sh read. With KEY-DIR the simulated kernel carries that key's certificate
# built in (the mirror's stand-in for Canonical's module signing key, mirror/ubuntu_archive.py),
# as Ubuntu's kernels carry Canonical's: /proc/keys lists it as the kernel does,
# "asymmetri <CN>: <subject key id>: X509.rsa <last 8> []" (the stand-in's key id is its serial,
# which is what modinfo's sig_key shows). lib/modprobe-standin loads, under Secure Boot, only
# modules signed by a key listed there or enrolled as a machine owner key (rootfs_simulate_mok).
rootfs_simulate_secure_boot() {
    local r=$1 keydir=${2:-} ev="$1/sys/firmware/efi/efivars" serial
    mkdir -p "$ev"
    printf '\x06\x00\x00\x00\x01' >"$ev/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
    printf '\x06\x00\x00\x00\x00' >"$ev/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c"
    if [[ -n "$keydir" ]]; then
        serial=$(tr 'A-F' 'a-f' <"$keydir/serial")
        printf '%s I------     1 perm 1f030000     0     0 asymmetri Canonical Ltd. Kernel Module Signing: %s: X509.rsa %s []\n' \
            1d6a5a2e "$serial" "${serial: -8}" >>"$r/proc/keys"
    fi
}

# rootfs_simulate_mok ROOT: what a Debian host booted through shim has for machine owner keys: a
# kernel built for module signing (CONFIG_MODULE_SIG_HASH, as Debian's), sign-file where Debian's
# linux-kbuild-6.1 puts it, Debian's mokutil (a package named mokutil holding
# lib/mokutil-standin) and MokManager, which rootfs_reboot runs. openssl is the host's own binary
# (Debian 12, like the root: the same libssl3) with its configuration: minbase has none, and
# DKMS and gpuprov need it.
rootfs_simulate_mok() {
    local r=$1 kernel pkg
    kernel=$(cat "$r/proc/sys/kernel/osrelease")
    printf 'CONFIG_MODULE_SIG_ALL=y\nCONFIG_MODULE_SIG_HASH="sha256"\n' >>"$r/boot/config-$kernel"
    install -D -m 0755 "$E2E_DIR/lib/sign-file-standin" "$r/usr/lib/linux-kbuild-${kernel%.*}/scripts/sign-file"
    install -D -m 0755 "$E2E_DIR/lib/mokmanager-standin" "$r/usr/lib/gpuprov-e2e/mokmanager"
    install -D -m 0755 "$(command -v openssl)" "$r/usr/bin/openssl"
    install -D -m 0644 /etc/ssl/openssl.cnf "$r/etc/ssl/openssl.cnf" # openssl req reads it
    mkdir -p "$r/usr/lib/ssl"
    ln -sfn /etc/ssl/openssl.cnf "$r/usr/lib/ssl/openssl.cnf"
    in_root "$r" 10 openssl version >/dev/null 2>&1 || die "the host's openssl does not run in the root"
    pkg=$(mktemp -d)
    install -D -m 0755 "$E2E_DIR/lib/mokutil-standin" "$pkg/usr/bin/mokutil"
    mkdir -p "$pkg/DEBIAN"
    printf 'Package: mokutil\nVersion: 0.6.0-2\nArchitecture: amd64\nMaintainer: gpuprov e2e <e2e@localhost>\nDescription: gpuprov e2e stand-in for mokutil\n' \
        >"$pkg/DEBIAN/control"
    dpkg-deb --root-owner-group -b "$pkg" "$r/tmp/mokutil.deb" >/dev/null
    rm -rf "$pkg"
    in_root "$r" 60 dpkg -i /tmp/mokutil.deb >/dev/null || die "could not install the mokutil stand-in"
    rm -f "$r/tmp/mokutil.deb"
}

# A reboot: a new boot id, nouveau gone when the blacklist is in place, no module loaded until
# the boot loads the one DKMS built for the running kernel (if any), then enabled units start.
# Before the kernel, shim's MokManager handles an enrolment request (rootfs_simulate_mok)
# with what the person at the console types: MOK_CONSOLE_PASSWORD (empty: nobody).
rootfs_reboot() {
    local r=$1 id
    id=$(cat /proc/sys/kernel/random/uuid)
    mkdir -p "$r/proc/sys/kernel/random"
    printf '%s\n' "$id" >"$r/proc/sys/kernel/random/boot_id"
    if [[ -x "$r/usr/lib/gpuprov-e2e/mokmanager" ]]; then
        in_root "$r" 30 /usr/lib/gpuprov-e2e/mokmanager "${MOK_CONSOLE_PASSWORD:-}" || true
    fi
    rm -rf "$r/proc/driver/nvidia" "$r/sys/module/nvidia" "$r/sys/module/nvidia_peermem" "$r/run/e2e-systemd"
    sed -i '/^nvidia /d; /^nvidia_peermem /d' "$r/proc/modules"
    if grep -qs '^blacklist nouveau' "$r"/etc/modprobe.d/*.conf; then
        rm -rf "$r/sys/module/nouveau"
        sed -i '/^nouveau /d; /^drm_ttm_helper /d' "$r/proc/modules"
    fi
    if grep -qs '^blacklist nova_core' "$r"/etc/modprobe.d/*.conf; then # and its GPUs unbound
        rm -rf "$r/sys/module/nova_core"
        sed -i '/^nova_core /d' "$r/proc/modules"
        find "$r/sys/bus/pci/devices" -maxdepth 2 -name driver -lname '*/NovaCore' -delete
    fi
    # systemd-modules-load: every module named in /etc/modules-load.d/*.conf (nvidia-peermem
    # pulls nvidia in as its dependency), then udev loads nvidia for the GPUs.
    local m
    while read -r m; do
        if [[ -n "$m" ]]; then in_root "$r" 30 modprobe "$m" </dev/null >/dev/null 2>&1 || true; fi
    done < <(sed -e 's/[#;].*//' "$r"/etc/modules-load.d/*.conf 2>/dev/null)
    in_root "$r" 30 modprobe nvidia >/dev/null 2>&1 || true
    # Boot: enabled units start (nvidia-persistenced, fabric manager) via the systemctl stand-in.
    if [[ -x "$r/usr/bin/systemctl" ]]; then in_root "$r" 60 systemctl e2e-boot || true; fi
}

# The root has no init system; gpuprov takes the systemctl path it takes on a real Debian host.
rootfs_install_systemctl() {
    install -D -m 0755 "$E2E_DIR/lib/systemctl-standin" "$1/usr/bin/systemctl"
}

# The simulated kernel's module tools: dkms builds nvidia.ko for the running kernel (and signs
# it when the host is set up for that), modprobe loads it, modinfo reads it (stand-ins for the
# NVIDIA module only; kmod, /bin/kmod, does the rest). They sit where the real ones do, so lib/killshim's links find them as the real command.
rootfs_install_module_tools() {
    install -D -m 0755 "$E2E_DIR/lib/dkms-standin" "$1/usr/sbin/dkms"
    rm -f "$1/usr/sbin/modprobe" "$1/usr/sbin/modinfo"
    install -D -m 0755 "$E2E_DIR/lib/modprobe-standin" "$1/usr/sbin/modprobe"
    install -D -m 0755 "$E2E_DIR/lib/modinfo-standin" "$1/usr/sbin/modinfo"
    install -D -m 0644 "$E2E_DIR/lib/efivars-standin.sh" "$1/usr/lib/gpuprov-e2e/efivars.sh"
}

# The simulated host's container engine: Debian's docker.io paths (lib/docker-standin), so
# verify's container.engine check finds dockerd. Scenarios about a host without Docker remove it
# (rootfs_remove_docker).
# Its unit, where docker.io ships it, lets the systemctl stand-in start or restart it (a scenario
# that wants it running marks it active: /run/e2e-systemd/docker.service.active).
rootfs_install_docker() {
    install -D -m 0755 "$E2E_DIR/lib/docker-standin" "$1/usr/sbin/dockerd"
    install -D -m 0755 "$E2E_DIR/lib/docker-standin" "$1/usr/bin/docker"
    mkdir -p "$1/lib/systemd/system"
    printf '[Unit]\nDescription=Docker Application Container Engine (gpuprov e2e stand-in)\n\n[Service]\nExecStart=/usr/sbin/dockerd -H fd://\n\n[Install]\nWantedBy=multi-user.target\n' \
        >"$1/lib/systemd/system/docker.service"
}
rootfs_remove_docker() { rm -f "$1/usr/sbin/dockerd" "$1/usr/bin/docker" "$1/lib/systemd/system/docker.service"; }

rootfs_trust_ca() { # ROOT CA_PEM
    cat "$2" >>"$1/etc/ssl/certs/ca-certificates.crt"
}

# rootfs_prepare_host ROOT clean|nouveau: what every fresh test host has besides gpuprov: the
# simulated kernel and GPUs, the mirror's CA, the systemctl, module and Docker stand-ins. One
# list, so a root prepared outside scenario_begin (e2e 18's second host, the bench roots) lacks
# nothing the others have.
rootfs_prepare_host() {
    rootfs_simulate_host "$1" "$2"
    rootfs_trust_ca "$1" "$MIRROR_DIR/tls/ca.pem"
    rootfs_install_systemctl "$1"
    rootfs_install_module_tools "$1"
    rootfs_install_docker "$1"
}

# in_root ROOT TIMEOUT CMD...: run CMD chrooted with a clean environment and a hard deadline.
in_root() {
    local r=$1 t=$2; shift 2
    timeout -k 5 "$t" chroot "$r" /usr/bin/env -i \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 TERM=dumb NO_COLOR=1 DEBIAN_FRONTEND=noninteractive "$@"
}
