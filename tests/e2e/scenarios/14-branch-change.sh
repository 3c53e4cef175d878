#!/usr/bin/env bash
# (n) A planned branch change from a held host: gpuprov installed branch 535 (CUDA 12.2) with
# hold: true; the profile moves to 550 (CUDA 12.4). The plan shows every part of it (unhold,
# removal of the old branch with versions, install of the new one, hold); apply runs it, stops
# at reboot-required while the 535 module is still loaded, and the resumed run after the reboot
# verifies 550 and holds its closure.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
# Ubuntu 22.04: NVIDIA's ubuntu2204 repository carries CUDA 12.2 (debian12's starts at 12.3), the
# newest toolkit branch 535 runs without minor-version compatibility.
rm -f "$ROOT/etc/os-release"
cp "$REPO_ROOT/tests/fixtures/e2e/os-release/ubuntu-22.04" "$ROOT/etc/os-release"

cat >"$ROOT/etc/gpuprov/e2e-535.yaml" <<'YAML'
name: e2e-535
extends: /etc/gpuprov/e2e.yaml
driver: {branch: "535"}
cuda: {version: "12.2"}
YAML
gp apply /etc/gpuprov/e2e-535.yaml --yes
expect_rc "apply branch 535" 0
assert_pkg cuda-drivers-535 "$E2E_DRIVER_535-1"
assert_pkg nvidia-driver-535 "$E2E_DRIVER_535-1"
check "the 535 module is loaded" grep -q "Kernel Module  $E2E_DRIVER_535 " "$ROOT/proc/driver/nvidia/version"
for p in cuda-drivers-535 nvidia-driver-535 nvidia-dkms-535 libnvidia-compute-535; do
    check "$p held" grep -qx "$p" <(holds)
done

# --- the change ---------------------------------------------------------------------------------
gp plan "$PROFILE_IN_ROOT"
expect_rc "plan of the branch change (changes pending, not blocked)" 0
assert_grep "plan releases the old branch first" "run apt-mark unhold .*cuda-drivers-535" "$GP_STDOUT"
for p in cuda-drivers-535 nvidia-driver-535 nvidia-dkms-535 libnvidia-compute-535; do
    assert_grep "plan removes $p at its version" "remove +$p +$E2E_DRIVER_535-1" "$GP_STDOUT"
    check "the removal of $p is owned (no --allow-remove)" bash -c "! grep -E 'remove +$p .*not owned' '$GP_STDOUT'"
done
assert_grep "plan installs the new branch, held" "install +nvidia-driver-550 +$E2E_DRIVER_VERSION-1 +\(held\)" "$GP_STDOUT"
assert_grep "plan upgrades the toolkit's NCCL build or installs 12.4's" "libnccl2 .*2\.21\.5-1\+cuda12\.4" "$GP_STDOUT"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply of the change stops for the reboot (535 still loaded)" 3
for p in cuda-drivers-535 nvidia-driver-535 nvidia-dkms-535 libnvidia-compute-535; do assert_no_pkg "$p"; done
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
check "old module still loaded until the reboot" grep -q "Kernel Module  $E2E_DRIVER_535 " "$ROOT/proc/driver/nvidia/version"
assert_eq "journal result" reboot-required "$(journal_result)"
assert_eq "DKMS keeps only the new branch's module" "nvidia/$E2E_DRIVER_VERSION, $SIM_KERNEL, x86_64: installed" "$(in_root "$ROOT" 10 dkms status)"

# --- the reboot and the resume unit ----------------------------------------------------------------
rootfs_reboot "$ROOT"
check "the 550 module loads at boot" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
execstart=$(sed -n 's/^ExecStart=//p' "$ROOT/etc/systemd/system/gpuprov-resume.service" 2>/dev/null | head -n 1)
[[ -n "$execstart" ]] || { fail "no resume unit after the reboot-required run"; scenario_end; }
read -r -a argv <<<"$execstart"
gp "${argv[@]:1}"
expect_rc "the resumed run finishes" 0
assert_eq "journal result" done "$(journal_result)"
for p in cuda-drivers-550 nvidia-driver-550 nvidia-dkms-550 libnvidia-compute-550; do
    check "$p held" grep -qx "$p" <(holds)
done
check "no 535 package held" test -z "$(holds | grep 535 || true)"
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify on 550" 0
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "converged" 0
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
scenario_end
