# shellcheck shell=bash
# Per-scenario helpers for the EL scenarios (scenarios/3x-el-*.sh): like lib/scenario.sh, on an
# EL-shaped root (lib/rootfs_el.sh) with real dnf and rpm against the rpm half of the mirror.
# EL_OS=rocky-9 (default), rocky-10 or rhel-8 before sourcing picks the host (el_use_os switches
# it within a scenario, for a second root).

EL_OS=${EL_OS:-rocky-9}
EL_MAJOR=${EL_OS##*-}
case "$EL_MAJOR" in
    8) SIM_KERNEL=${SIM_KERNEL:-4.18.0-513.5.1.el8_9.x86_64} ;;
    9) SIM_KERNEL=${SIM_KERNEL:-5.14.0-362.24.1.el9_3.x86_64} ;;
    10) SIM_KERNEL=${SIM_KERNEL:-6.12.0-55.27.1.el10_0.x86_64} ;;
    *) echo "scenario_el.sh: EL_OS=$EL_OS is not rocky-10, rocky-9 or rhel-8" >&2; exit 1 ;;
esac
PROFILE_TEMPLATE=e2e-el.yaml.in
EL_CUDA_KEY=D42D0685.pub
# shellcheck source=lib/scenario.sh
source "$(dirname "${BASH_SOURCE[0]}")/scenario.sh"
# shellcheck source=lib/rootfs_el.sh
source "$E2E_DIR/lib/rootfs_el.sh"

# el_use_os OS: the next el_scenario_begin builds this EL host (rocky-10|rocky-9|rhel-8) in a root
# of its own, for a scenario that checks two EL majors; the previous root stays until run.sh ends.
el_use_os() {
    EL_OS=$1 EL_MAJOR=${1##*-} SIM_KERNEL=$(el_kernel "${1##*-}")
    [[ -n "$SIM_KERNEL" ]] || die "el_use_os: no simulated kernel for $1"
    EL_ROOT_NAME=$SCENARIO-$1
}

# el_scenario_begin clean|nouveau [--no-gpuprov]
el_scenario_begin() {
    begin_args "$@"
    local mode=$BEGIN_MODE want_bin=$BEGIN_WANT_BIN
    ROOT=$(rootfs_el_new "${EL_ROOT_NAME:-$SCENARIO}") || die "could not build the EL root"
    rootfs_simulate_host "$ROOT" "$mode"
    # EL's boot files, not Debian's: /boot/initramfs-<kver>.img (dracut), no initrd.img.
    rm -f "$ROOT/boot/initrd.img-$SIM_KERNEL" "$ROOT/boot/vmlinuz-$SIM_KERNEL" "$ROOT/boot/config-$SIM_KERNEL"
    printf 'e2e placeholder initramfs\n' >"$ROOT/boot/initramfs-$SIM_KERNEL.img"
    printf 'e2e placeholder kernel\n' >"$ROOT/lib/modules/$SIM_KERNEL/vmlinuz"
    rootfs_trust_ca "$ROOT" "$MIRROR_DIR/tls/ca.pem"
    rootfs_el_host "$ROOT" "$EL_OS" || die "could not make $ROOT an $EL_OS host"
    rootfs_install_systemctl "$ROOT"
    rootfs_el_install_tools "$ROOT"
    rootfs_install_docker "$ROOT"
    render_profile "$EL_CUDA_KEY"
    if ((want_bin)); then
        rootfs_install_gpuprov "$ROOT" || scenario_end
    fi
    log "scenario $SCENARIO: $EL_OS root $ROOT (kernel $SIM_KERNEL)"
}

# A reboot on EL: the nouveau blacklist takes effect only when it is inside the initramfs dracut
# built (nouveau loads from the initramfs before the root's /etc/modprobe.d is read).
el_reboot() {
    local had_nouveau=0
    grep -q '^nouveau ' "$ROOT/proc/modules" && had_nouveau=1
    rootfs_reboot "$ROOT"
    if ((had_nouveau)) && ! grep -qs '^blacklist nouveau' "$ROOT/boot/initramfs-$SIM_KERNEL.img"; then
        log "reboot: the initramfs has no nouveau blacklist: nouveau loads again"
        rootfs_simulate_host_nouveau_again
    fi
}
rootfs_simulate_host_nouveau_again() {
    mkdir -p "$ROOT/sys/module/nouveau/parameters"
    printf '%s\n' -1 >"$ROOT/sys/module/nouveau/parameters/modeset"
    grep -q '^nouveau ' "$ROOT/proc/modules" ||
        printf 'nouveau 2809856 0 - Live 0x0000000000000000\ndrm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000\n' \
            >>"$ROOT/proc/modules"
}

# The rpm view of the root (the root's own rpm, its own database).
rpm_evr() { # NAME -> [epoch:]version-release of the installed package(s), one per line; empty when none
    in_root "$ROOT" 30 rpm -q --qf '%{EPOCH}:%{VERSION}-%{RELEASE}\n' "$1" 2>/dev/null |
        sed -n 's/^(none)://p; /^[0-9][0-9]*:/p' || true
}
assert_rpm() { # NAME EVR
    assert_eq "rpm $1 installed at $2" "$2" "$(rpm_evr "$1")"
}
assert_no_rpm() {
    local v
    v=$(rpm_evr "$1")
    if [[ -z "$v" ]]; then pass "rpm $1 not installed"; else fail "rpm $1 must not be installed (found $v)"; fi
}
rpm_all() { # every installed NEVRA with its install time, sorted
    in_root "$ROOT" 60 rpm -qa --qf '%{NAME}-%{EPOCH}:%{VERSION}-%{RELEASE}.%{ARCH} %{INSTALLTIME}\n' | LC_ALL=C sort
}
rpm_verify_all() { # rpm -Va: files changed since install (empty on a consistent root, configs aside)
    in_root "$ROOT" 120 rpm -Va --nomtime 2>&1 | grep -v ' c /' || true
}
# The rpm database, byte for byte (sqlite file and its WAL), and dnf's history.
rpmdb_digest() {
    (cd "$ROOT" && sha256sum var/lib/rpm/rpmdb.sqlite var/lib/rpm/rpmdb.sqlite-wal var/lib/dnf/history.sqlite* 2>/dev/null) || true
}
el_versionlock_plugin_evr() { # the distribution's python3-dnf-plugin-versionlock (mirror BaseOS, fixtures)
    case "$EL_MAJOR" in 8) echo 4.0.21-3.el8 ;; 9) echo 4.3.0-11.el9 ;; 10) echo 4.7.0-9.el10 ;; esac
}
versionlock_list() { grep -v '^#' "$ROOT/etc/dnf/plugins/versionlock.list" 2>/dev/null | sed '/^$/d' || true; }
enabled_stream() { # MODULE -> the stream dnf has enabled, from /etc/dnf/modules.d
    sed -n '/^state=enabled/{x;p;d}; /^stream=/h' "$ROOT/etc/dnf/modules.d/$1.module" 2>/dev/null | sed 's/^stream=//'
}
dnf_in_root() { in_root "$ROOT" "${DNF_TIMEOUT:-300}" dnf "$@"; }

# Logging shims for the no-op scenario: every dnf/rpm/dracut call appends its argv to
# /var/log/e2e-calls.log, one line per call (newlines inside an argument, as in rpm's --qf, become spaces).
install_call_log_shims() {
    local tool real
    for tool in dnf rpm dracut; do
        real=$(in_root "$ROOT" 5 sh -c "command -v $tool") || continue
        mv "$ROOT$real" "$ROOT$real.e2e-real"
        cat >"$ROOT$real" <<SHIM
#!/bin/sh
printf '%s\\n' "$tool \$(printf '%s ' "\$@" | tr '\\n' ' ')" >>/var/log/e2e-calls.log
exec "$real.e2e-real" "\$@"
SHIM
        chmod 0755 "$ROOT$real"
    done
}

# What a converged cv-train EL host has, read from rpm, dnf's files and the simulated kernel:
# branch 580's newest build from NVIDIA's 580-open module stream (the recorded rhel8/9 graph:
# 580.95.05 and 580.178.04 in the stream, 595 beside it), open modules, CUDA 13.0's builds.
EL_DRIVER_VERSION=580.178.04
EL_DRIVER_EVR=3:$EL_DRIVER_VERSION-1.el$EL_MAJOR
el_driver_closure() { # nvidia-open and the packages it requires, as the 580-open stream resolves them
    printf '%s\n' nvidia-open kmod-nvidia-open-dkms nvidia-driver nvidia-driver-cuda nvidia-driver-libs \
        nvidia-driver-cuda-libs nvidia-kmod-common nvidia-modprobe nvidia-persistenced libnvidia-ml \
        libnvidia-cfg libnvidia-gpucomp
}
assert_el_converged() {
    assert_eq "nvidia-driver module stream enabled" 580-open "$(enabled_stream nvidia-driver)"
    local p
    for p in $(el_driver_closure); do assert_rpm "$p" "$EL_DRIVER_EVR"; done
    assert_eq "no NVIDIA driver package of another build (the container toolkit has its own versions)" "" \
        "$(in_root "$ROOT" 30 rpm -qa --qf '%{NAME} %{VERSION}\n' | grep -E '^\S*nvidia\S* ' | grep -v container |
            grep -v " $EL_DRIVER_VERSION\$" || true)"
    assert_no_rpm kmod-nvidia-latest-dkms # the proprietary modules: the other flavour
    assert_no_rpm cuda-drivers            # the floating meta would take the newest stream
    assert_rpm python3-dnf-plugin-versionlock "$(el_versionlock_plugin_evr)" # preflight's, for the hold
    assert_rpm kernel-devel "${SIM_KERNEL%.x86_64}" # for the running kernel, not the newer one
    assert_rpm dkms "3.0.13-1.el$EL_MAJOR"
    assert_rpm cuda-toolkit-13-0 13.0.1-1
    # cuda-toolkit-13-0's %post registers it with alternatives (lost if that %post was killed).
    assert_eq "/usr/local/cuda resolves to the 13.0 toolkit" "$ROOT/usr/local/cuda-13.0" \
        "$(in_root "$ROOT" 5 readlink -f /usr/local/cuda | sed "s|^|$ROOT|")"
    assert_no_rpm cuda-toolkit-12-4
    assert_no_rpm cuda-13-0               # cuda-X-Y drags a driver in; never used
    assert_rpm libcudnn9-cuda-13 9.19.0.56-1
    assert_rpm libnccl 2.27.7-1+cuda13.0
    local v
    v=$(rpm_evr libnccl-devel)
    if [[ -n "$v" ]]; then assert_eq "libnccl-devel matches CUDA 13.0 when installed" 2.27.7-1+cuda13.0 "$v"; fi
    assert_rpm nvidia-container-toolkit 1.17.3-1
    assert_eq "dkms built the module for the running kernel" \
        "nvidia/$EL_DRIVER_VERSION, $SIM_KERNEL, x86_64: installed" "$(in_root "$ROOT" 10 dkms status)"
    check "the loaded module is the installed build, open" grep -q "Open Kernel Module for x86_64  $EL_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
    assert_eq "no package installed twice" "" "$(in_root "$ROOT" 60 rpm -qa --qf '%{NAME}.%{ARCH}\n' | grep -v '^gpg-pubkey\.' | sort | uniq -d)"
    assert_eq "rpm -Va: every installed file intact" "" "$(rpm_verify_all)"
    assert_eq "journal result" "done" "$(journal_result)"
    assert_no_tmp_files
}

# el_announce_libs: tells the root's rpm database about the shared libraries an EL host's glibc,
# libgcc and libcurl rpms provide, so a package with automatic requires (gpuprov's .rpm) installs
# with dnf's own dependency check. The provides are the root's real libraries' (rpm's elfdeps),
# with every symbol version newer than the EL release's toolchain dropped: RHEL 9 ships glibc 2.34
# and GCC 11, RHEL 8 glibc 2.28 and GCC 8 (Red Hat's "Considerations in adopting RHEL 9/8"). A
# binary that needs a newer GLIBC_/GCC_ version than the EL host has cannot install, as on EL.
el_announce_libs() {
    local glibc gcc
    case "$EL_MAJOR" in
        8) glibc=2.28 gcc=8.99 ;;
        9) glibc=2.34 gcc=11.99 ;;
        10) glibc=2.39 gcc=14.99 ;; # RHEL 10: glibc 2.39, GCC 14 (INFERRED, not looked up)
    esac
    local lib provides=() p
    for lib in /lib/x86_64-linux-gnu/{libc.so.6,libm.so.6,libpthread.so.0,libdl.so.2,librt.so.1,libgcc_s.so.1} \
        /lib64/ld-linux-x86-64.so.2 /usr/lib/x86_64-linux-gnu/libcurl.so.4; do
        p=$(in_root "$ROOT" 5 readlink -f "$lib" || true)
        [[ -n "$p" && -f "$ROOT$p" ]] || die "el_announce_libs: the root has no $lib"
        mapfile -t -O "${#provides[@]}" provides < <(/usr/lib/rpm/elfdeps --provides "$ROOT$p")
    done
    local spec=$E2E_WORK/e2e-el-libs-$SCENARIO
    rm -rf "$spec" && mkdir -p "$spec"
    {
        printf 'Name: e2e-el-libs\nVersion: 1.0\nRelease: 1.el%s\nLicense: none\nBuildArch: x86_64\n' "$EL_MAJOR"
        printf 'Summary: gpuprov e2e: the root'"'"'s shared libraries as EL %s'"'"'s rpms provide them\n' "$EL_MAJOR"
        printf 'Provides: rtld(GNU_HASH)\n'
        printf '%s\n' "${provides[@]}" | LC_ALL=C sort -u | "$E2E_PYTHON" -c '
import re, sys
glibc, gcc = (tuple(int(x) for x in v.split(".")) for v in sys.argv[1:3])
for line in sys.stdin:
    p = line.strip()
    m = re.search(r"\((GLIBC|GCC)_([0-9.]+)\)", p)
    if m and tuple(int(x) for x in m.group(2).split(".")) > (glibc if m.group(1) == "GLIBC" else gcc):
        continue
    print("Provides: " + p)
' "$glibc" "$gcc"
        printf '\n%%description\nNo files: dependency information only.\n\n%%files\n'
    } >"$spec/e2e-el-libs.spec"
    rpmbuild -bb --quiet --define "_topdir $spec" --define "_rpmdir $spec" "$spec/e2e-el-libs.spec" \
        >"$OUT/e2e-el-libs.log" 2>&1 || die "el_announce_libs: rpmbuild failed ($OUT/e2e-el-libs.log)"
    cp "$spec"/x86_64/e2e-el-libs-*.rpm "$ROOT/tmp/e2e-el-libs.rpm"
    in_root "$ROOT" 60 rpm -i --force-debian /tmp/e2e-el-libs.rpm || die "el_announce_libs: rpm -i failed"
    rm -f "$ROOT/tmp/e2e-el-libs.rpm"
}
