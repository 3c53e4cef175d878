#!/usr/bin/env bash
# e2e-timeout: 900
# EL 10 (issue 19): a fresh Rocky 10-shaped host (no versionlock plugin, as a stock image) against
# the rhel10 half of the mirror: no module streams, branches 595 (595.71.05, 595.91.07) and 610
# (610.57.04) with NVIDIA's relations as recorded (nvidia-open requires its parts >= only). A
# profile on 595 with the open modules and fabric manager: the plan enables no module, pins the
# branch's whole driver closure (nothing of 610, though dnf alone would reach it) and installs
# dnf's versionlock plugin from BaseOS; apply converges, verify passes, the closure and fabric
# manager are versionlocked at 595.91.07, and a second apply changes nothing.
# Issue 21: a second, newer kernel is installed (kernel-core's /lib/modules/<k>/vmlinuz, its build
# link and its image), which the next boot may pick; the nouveau blacklist must be in both
# initramfs images: the plan runs dracut once per installed kernel, and both images postdate the
# blacklist. That kernel needs its driver too: the plan installs its kernel-devel (BaseOS carries
# it, dnf says so) and has DKMS build for it (NVIDIA's %post builds for the running kernel only);
# after apply both kernel-devel rpms are in and `dkms status` shows the module for both.
set -euo pipefail
EL_OS=rocky-10
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean
NEWER=6.12.0-55.39.1.el10_0.x86_64 # mirror/build-rpm.sh KERNEL_NEXT_R: BaseOS has its kernel-devel
mkdir -p "$ROOT/lib/modules/$NEWER"
ln -sfn "/usr/src/kernels/$NEWER" "$ROOT/lib/modules/$NEWER/build" # kernel-core's, dangling
printf 'e2e placeholder kernel\n' >"$ROOT/lib/modules/$NEWER/vmlinuz"
printf 'e2e placeholder initramfs\n' >"$ROOT/boot/initramfs-$NEWER.img"

# cv-train's stack (CUDA 13.0 runs on 595) on branch 595; the libraries this scenario is not about
# are left out to keep it quick (steps.skip: the final verify leaves them out too).
cat >"$ROOT/etc/gpuprov/e2e-el10.yaml" <<'YAML'
name: e2e-el10
extends: /etc/gpuprov/e2e.yaml
host: {os: [rhel-10]}
driver: {branch: "595", flavor: open, hold: true}
fabric_manager: true
steps: {skip: [cudnn, nccl, container-toolkit, monitoring]}
YAML
P=/etc/gpuprov/e2e-el10.yaml
V=595.91.07
EVR=3:$V-1.el10
CLOSURE="nvidia-open kmod-nvidia-open-dkms nvidia-driver nvidia-driver-cuda nvidia-driver-libs
    nvidia-driver-cuda-libs nvidia-kmod-common nvidia-modprobe nvidia-persistenced libnvidia-ml
    libnvidia-cfg libnvidia-gpucomp"

gp plan "$P"
expect_rc "plan on Rocky 10" 0
cp "$GP_STDOUT" "$OUT/plan.txt"
assert_grep "plan: EL 10 has no module streams" "no module streams" "$GP_STDOUT"
check "plan: no module stream enabled" bash -c "! grep -qi 'module enable\|module switch' '$GP_STDOUT'"
assert_grep "plan installs the versionlock plugin from the distribution" \
    "install +python3-dnf-plugin-versionlock +4\.7\.0-9\.el10" "$GP_STDOUT"
for p in $CLOSURE; do
    assert_grep "plan installs $p at $EVR, held" "install +$p +$EVR +\(held\)" "$GP_STDOUT"
done
check "plan: nothing of 610" bash -c "! grep -q '610\.57\.04' '$GP_STDOUT'"
for k in "$SIM_KERNEL" "$NEWER"; do
    assert_grep "plan: dracut regenerates $k's initramfs" \
        "dracut --force /boot/initramfs-$k\.img $k" "$GP_STDOUT"
done
assert_grep "plan installs the newer kernel's kernel-devel" "kernel-devel-$NEWER" "$GP_STDOUT"
assert_grep "plan: DKMS builds for the newer kernel" "dkms autoinstall -k $NEWER" "$GP_STDOUT"
check "plan: no DKMS build asked for the running kernel (the package's %post does it)" \
    bash -c "! grep -q 'dkms autoinstall -k $SIM_KERNEL' '$GP_STDOUT'"

gp apply "$P" --yes
expect_rc "apply on a fresh Rocky 10 host" 0
gp verify "$P"
expect_rc "verify after apply" 0

assert_rpm python3-dnf-plugin-versionlock 4.7.0-9.el10
for p in $CLOSURE; do assert_rpm "$p" "$EVR"; done
assert_rpm nvidia-fabricmanager "$V-1.el10"
assert_rpm libnvidia-nscq "$V-1.el10"
assert_no_rpm kmod-nvidia-latest-dkms
assert_no_rpm cuda-drivers
assert_eq "no NVIDIA package of another branch installed" "" \
    "$(in_root "$ROOT" 30 rpm -qa --qf '%{NAME} %{VERSION}\n' | grep -E '^\S*nvidia\S* ' | grep -v " $V\$" || true)"
assert_eq "no nvidia-driver module stream (EL 10 has none)" "" "$(enabled_stream nvidia-driver)"
assert_eq "kernel-devel for both installed kernels" \
    "$(printf 'kernel-devel-%s\n' "${SIM_KERNEL%.x86_64}" "${NEWER%.x86_64}" | sort)" \
    "$(in_root "$ROOT" 30 rpm -q kernel-devel --qf '%{NAME}-%{VERSION}-%{RELEASE}\n' | sort)"
assert_rpm cuda-toolkit-13-0 13.0.1-1
assert_eq "dkms built the module for both installed kernels" \
    "$(printf 'nvidia/%s, %s, x86_64: installed\n' "$V" "$SIM_KERNEL" "$V" "$NEWER" | sort)" \
    "$(in_root "$ROOT" 10 dkms status | sort)"
check "the newer kernel's module is the $V build" \
    grep -qx "version: $V" "$ROOT/lib/modules/$NEWER/updates/dkms/nvidia.ko"
check "the loaded module is the open $V" grep -q "Open Kernel Module for x86_64  $V " "$ROOT/proc/driver/nvidia/version"
locked=$(versionlock_list)
printf '%s\n' "$locked" >"$OUT/versionlock.list"
for p in $CLOSURE nvidia-fabricmanager libnvidia-nscq; do
    check "versionlock holds $p" grep -qE "^$p-[0-9]+:$V-1\.el10\.\*$" <<<"$locked"
done
check "versionlock holds nothing of another build" bash -c "! grep -v ':$V-' <<<'$locked' | grep -q ."
# dnf itself now refuses the newer branch: the locks are what keeps it.
set +e
out=$(dnf_in_root --assumeno install nvidia-driver-3:610.57.04-1.el10 2>&1)
set -e
check "locked: dnf will not move nvidia-driver to 610" grep -q 'filtered out by exclude filtering' <<<"$out"
assert_eq "journal result" "done" "$(journal_result)"
BL=$ROOT/etc/modprobe.d/blacklist-nouveau.conf
for k in "$SIM_KERNEL" "$NEWER"; do
    check "$k's initramfs regenerated after the blacklist" test "$ROOT/boot/initramfs-$k.img" -nt "$BL"
    assert_grep "$k's initramfs carries the blacklist" '^blacklist nouveau$' "$ROOT/boot/initramfs-$k.img"
    assert_grep "dracut ran for $k" "^dracut $k /boot/initramfs-$k\.img\$" "$ROOT/var/log/e2e-dracut.log"
done

gp plan "$P" --detailed-exitcode
expect_rc "plan --detailed-exitcode after apply: nothing to do" 0
before=$(rpmdb_digest)
locks_before=$(versionlock_list)
gp apply "$P" --yes
expect_rc "second apply" 0
assert_eq "second apply: the rpm database and dnf's history unchanged" "$before" "$(rpmdb_digest)"
assert_eq "second apply: the locks unchanged" "$locks_before" "$(versionlock_list)"
scenario_end
