#!/usr/bin/env bash
# e2e-no-mirror: uses neither the Debian 12 root nor the mirror (run.sh skips both when every scenario it runs says so)
# (t) aarch64, as on GH200/GB200/GB300 hosts: the cross-built release binary (scripts/build-arm64.sh,
# GPUPROV_ARM64_BIN, default build-arm64/gpuprov) runs `gpuprov facts` under qemu-user in an
# arm64 Debian 12 root (debootstrap's first stage, cached), where no x86_64 program can run. It
# reports the machine as aarch64, NVIDIA's CUDA repository directory for it as sbsa, dpkg's
# architecture arm64, the debian12 slug, and the Grace Hopper GPU on the PCI bus. Then
# scripts/package.sh --arch arm64: the .deb says Architecture arm64, the .rpm aarch64, each holds
# the aarch64 binary (check-portable), and the .deb's binary runs the same way in the root.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
mkdir -p "$OUT"

BIN=${GPUPROV_ARM64_BIN:-$REPO_ROOT/build-arm64/gpuprov}
QEMU=$(command -v qemu-aarch64-static) || die "qemu-aarch64-static missing (scripts/deps.sh --test)"
CHROOT=$(command -v chroot)
if [[ ! -x "$BIN" ]]; then
    fail "no aarch64 gpuprov at $BIN (build it with scripts/build-arm64.sh)"
    scenario_end
fi
check "the binary passes scripts/check-portable.sh as aarch64" \
    "$REPO_ROOT/scripts/check-portable.sh" "$BIN" aarch64

ROOT=$(rootfs_copy "$(rootfs_base_foreign arm64)" "$SCENARIO")
install -D -m 0755 "$BIN" "$ROOT/usr/local/bin/gpuprov"
install -D -m 0755 "$QEMU" "$ROOT/usr/bin/qemu-aarch64-static"
check "the root is Debian 12" grep -q '^VERSION_ID="12"' "$ROOT/etc/os-release"
check "the root has the aarch64 dynamic loader" test -e "$ROOT/lib/ld-linux-aarch64.so.1"
check "and no x86_64 one: nothing of the host's runs in it" test ! -e "$ROOT/lib64/ld-linux-x86-64.so.2"

# What facts reads of the kernel: an arm64 kernel and one GH200 (NVIDIA 0x2342, compute
# capability 9.0; reference nvidia-facts.md GPU table) on the PCI bus.
mkdir -p "$ROOT/proc/sys/kernel" "$ROOT/sys/bus/pci/devices/0009:01:00.0" "$ROOT/sys/module"
printf '6.1.0-28-arm64\n' >"$ROOT/proc/sys/kernel/osrelease"
printf 'MemTotal:       491520000 kB\nMemAvailable:   480000000 kB\n' >"$ROOT/proc/meminfo"
: >"$ROOT/proc/modules"
dev=$ROOT/sys/bus/pci/devices/0009:01:00.0
printf '0x10de\n' >"$dev/vendor"
printf '0x2342\n' >"$dev/device"
printf '0x030200\n' >"$dev/class"

# arm64 [ARGS...]: gpuprov ARGS under qemu-user in the root (the environment set on the host side:
# the root's env is an arm64 program too). Sets RC; stdout in $OUT/arm64.out.
arm64() {
    set +e
    env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TERM=dumb NO_COLOR=1 \
        timeout -k 5 120 "$CHROOT" "$ROOT" /usr/bin/qemu-aarch64-static /usr/local/bin/gpuprov "$@" \
        >"$OUT/arm64.out" 2>"$OUT/arm64.err"
    RC=$?
    set -e
    log "gpuprov $* under qemu-aarch64 -> exit $RC"
}

arm64 --version
assert_eq "gpuprov --version runs under qemu-aarch64" 0 "$RC"
assert_grep "and prints the version" '^gpuprov [0-9]+\.[0-9]+\.[0-9]+$' "$OUT/arm64.out"

arm64 facts --json
assert_eq "facts --json runs under qemu-aarch64" 0 "$RC"
cp "$OUT/arm64.out" "$OUT/facts.json"
check "facts: arch aarch64, repo_arch sbsa, pkg_arch arm64, debian12, the GH200 on PCI" \
    "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
got = (d["arch"], d["repo_arch"], d["pkg_arch"], d["os"]["repo_slug"], d["os"]["family"],
       d["kernel"], [g.get("device_id") or g.get("device") for g in d["gpus"]])
want = ("aarch64", "sbsa", "arm64", "debian12", "debian", "6.1.0-28-arm64")
ok = got[:6] == want and len(got[6]) == 1 and "2342" in str(got[6][0]).lower()
sys.exit(0 if ok else "got %r" % (got,))' "$OUT/facts.json"

arm64 facts
assert_eq "facts (text) runs under qemu-aarch64" 0 "$RC"
assert_grep "the text names aarch64 and sbsa" 'aarch64' "$OUT/arm64.out"
assert_grep "and sbsa" 'sbsa' "$OUT/arm64.out"

# The packages (the binary stripped, as released). package.sh reuses build-arm64 as it is.
pkgdir=$E2E_WORK/package-arm64
if "$REPO_ROOT/scripts/package.sh" --arch arm64 "$pkgdir" >"$OUT/package.log" 2>&1; then
    pass "scripts/package.sh --arch arm64"
else
    fail "scripts/package.sh --arch arm64 failed: $(tail -n 5 "$OUT/package.log")"
    scenario_end
fi
deb=$(ls "$pkgdir"/gpuprov_*_arm64.deb)
rpm=$(find "$pkgdir" -name 'gpuprov-*.aarch64.rpm' | head -n 1)
assert_eq "the .deb is Architecture arm64" arm64 "$(dpkg-deb -f "$deb" Architecture)"
assert_grep "the .deb depends on libc6 and libgcc-s1" '^Depends: libc6 \(>= 2\.[0-9]+\), libgcc-s1 \(>= [0-9.]+\), libcurl4' \
    <(dpkg-deb -f "$deb")
check "the .rpm exists" test -f "$rpm"
assert_eq "the .rpm is aarch64" aarch64 "$(rpm -qp --qf '%{ARCH}' "$rpm" 2>/dev/null)"
check "the .rpm asks for the aarch64 libc (rpm's automatic requires)" \
    grep -q '^libc.so.6(GLIBC_2.17)(64bit)$' <(rpm -qp --requires "$rpm" 2>/dev/null)
unpacked=$E2E_WORK/unpacked-arm64
mkdir -p "$unpacked/deb"
dpkg-deb -x "$deb" "$unpacked/deb"
check "the .deb's binary passes check-portable as aarch64" \
    "$REPO_ROOT/scripts/check-portable.sh" "$unpacked/deb/usr/bin/gpuprov" aarch64
# rpm records each file's file(1) class at build time.
assert_grep "the .rpm's /usr/bin/gpuprov is an aarch64 ELF" '^/usr/bin/gpuprov[[:space:]]+ELF 64-bit LSB .*ARM aarch64' \
    <(rpm -qp --qf '[%{FILENAMES}\t%{FILECLASS}\n]' "$rpm" 2>/dev/null)
install -m 0755 "$unpacked/deb/usr/bin/gpuprov" "$ROOT/usr/local/bin/gpuprov"
arm64 facts --json
check "the packaged binary's facts say aarch64/sbsa under qemu-aarch64" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if (d["arch"], d["repo_arch"]) == ("aarch64", "sbsa") else repr(d["arch"]))' "$OUT/arm64.out"
scenario_end
