#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# EL infrastructure self-test, independent of gpuprov: the EL-shaped root's own dnf and rpm
# (database at /var/lib/rpm) install NVIDIA-named, signed stand-in rpms from the signed rpm-md
# mirror over HTTPS, the nvidia-driver module streams behave as on NVIDIA's rhel9 repo (the recorded
# graph: 580 and 595 with genmodules' streams), the module builds only with kernel-devel for the
# running kernel, versionlock (the plugin from BaseOS) holds, and faults reach dnf. Scenario 40 is
# the open flavour's and EL 10's control; this one takes the proprietary stream.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean --no-gpuprov

check "no host mounts inside the root" test -z "$(awk -v p="$ROOT/" 'index($2, p) == 1' /proc/mounts)"
assert_eq "rpm's database is EL's" /var/lib/rpm "$(in_root "$ROOT" 10 rpm --eval '%_dbpath')"
check "rpmdb.sqlite at /var/lib/rpm" test -s "$ROOT/var/lib/rpm/rpmdb.sqlite"
assert_eq "os-release is Rocky 9's" 'PLATFORM_ID="platform:el9"' "$(grep '^PLATFORM_ID=' "$ROOT/etc/os-release")"
assert_rpm rocky-release 9.3-1.el9
assert_rpm kernel-core "${SIM_KERNEL%.x86_64}"
assert_eq "dnf's \$releasever from the release package" 9 \
    "$(in_root "$ROOT" 60 python3 -c 'import dnf; b = dnf.Base(); print(dnf.rpm.detect_releasever("/"))' 2>/dev/null)"

# NVIDIA's documented setup (driver guide, RHEL 9 "Network repository"), by hand: the key, the .repo.
cp "$MIRROR_DIR/www/compute/cuda/repos/rhel9/x86_64/D42D0685.pub" "$ROOT/etc/pki/rpm-gpg/e2e-cuda.asc"
cat >"$ROOT/etc/yum.repos.d/e2e-manual-cuda.repo" <<REPO
[cuda-rhel9-x86_64]
name=cuda-rhel9-x86_64
baseurl=$(mirror_url compute/cuda/repos/rhel9/x86_64/)
enabled=1
gpgcheck=1
repo_gpgcheck=1
gpgkey=file:///etc/pki/rpm-gpg/e2e-cuda.asc
REPO
check "dnf makecache over HTTPS, repomd.xml.asc verified (repo_gpgcheck=1)" dnf_in_root -y makecache
modlist=$(dnf_in_root module list nvidia-driver 2>&1 || true)
printf '%s\n' "$modlist" >"$OUT/module-list.txt"
for s in 580 580-dkms 580-open 595 595-dkms 595-open latest 'latest-dkms \[d\]' open-dkms; do
    check "module stream nvidia-driver:${s%% *} listed" grep -Eq "^nvidia-driver +$s( |$)" <<<"$modlist"
done
# Modular filtering: nothing from a stream that is not enabled; the default stream, latest-dkms,
# follows the newest branch (595).
out=$(dnf_in_root --assumeno install nvidia-driver 2>&1 || true)
check "without a stream enabled, nvidia-driver resolves to the default stream (595)" grep -q '3:595.91.07-1.el9' <<<"$out"

check "dnf module enable nvidia-driver:580-dkms" dnf_in_root -y module enable nvidia-driver:580-dkms
assert_eq "modules.d records the stream" 580-dkms "$(enabled_stream nvidia-driver)"
out=$(dnf_in_root --assumeno install nvidia-driver-cuda 2>&1 || true)
check "the enabled stream resolves to its newest build" grep -q '3:580.178.04-1.el9' <<<"$out"

# Without kernel-devel the kmod's %post (NVIDIA's, `|| :`) cannot build: rpm succeeds, no module.
check "dnf install kernel-devel for the running kernel" dnf_in_root -y install "kernel-devel-${SIM_KERNEL%.x86_64}" "kernel-headers-${SIM_KERNEL%.x86_64}"
# nvidia-driver-cuda alone is NVIDIA's compute-only set (it requires no nvidia-driver): both, as a
# desktop-and-compute host has them.
check "dnf install nvidia-driver nvidia-driver-cuda cuda-toolkit-13-0" dnf_in_root -y install nvidia-driver nvidia-driver-cuda cuda-toolkit-13-0
assert_rpm nvidia-driver 3:580.178.04-1.el9
assert_rpm kmod-nvidia-latest-dkms 3:580.178.04-1.el9
assert_rpm nvidia-driver-cuda-libs 3:580.178.04-1.el9
assert_rpm dkms 3.0.13-1.el9
assert_rpm cuda-toolkit-13-0 13.0.1-1
assert_no_rpm kmod-nvidia-open-dkms
assert_no_rpm cuda-drivers
check "the NVIDIA key was imported by dnf (gpg-pubkey)" test -n "$(in_root "$ROOT" 10 rpm -q gpg-pubkey | sed -n 2p)"
assert_eq "dkms status" "nvidia/580.178.04, $SIM_KERNEL, x86_64: installed" "$(in_root "$ROOT" 10 dkms status)"
check "modprobe nvidia loads the built module" in_root "$ROOT" 10 modprobe nvidia
out=$(in_root "$ROOT" 10 nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader)
assert_eq "nvidia-smi reports the installed driver" "3, NVIDIA A100-SXM4-80GB, 580.178.04" "$(sed -n 4p <<<"$out")"
assert_eq "nvcc 13.0 via the alternatives link" "Cuda compilation tools, release 13.0, V13.0.88" \
    "$(in_root "$ROOT" 10 /usr/local/cuda/bin/nvcc --version | sed -n 4p)"
check "rpm -V: installed files intact" test -z "$(rpm_verify_all)"

# versionlock holds: a stock EL image lacks the plugin ("No such command"); from BaseOS it locks,
# and a downgrade inside the stream is refused while locked.
set +e
out=$(dnf_in_root versionlock 2>&1)
set -e
check "no versionlock plugin on the stock root ('No such command')" grep -q 'No such command: versionlock' <<<"$out"
check "dnf install python3-dnf-plugin-versionlock (BaseOS)" dnf_in_root -y install python3-dnf-plugin-versionlock
check "dnf versionlock add nvidia-driver" dnf_in_root versionlock add nvidia-driver
check "versionlock.list holds nvidia-driver's NEVRA" grep -q '^nvidia-driver-3:580.178.04-1.el9.\*' <<<"$(versionlock_list)"
set +e
out=$(dnf_in_root --assumeno install nvidia-driver-3:580.95.05-1.el9 2>&1)
set -e
check "locked: the older build is filtered out" grep -q 'All matches were filtered out by exclude filtering' <<<"$out"
printf '%s\n' "$out" >"$OUT/locked-downgrade.txt"

# dracut stand-in: uname -r's image, refuses to overwrite without --force.
set +e
out=$(in_root "$ROOT" 10 dracut 2>&1)
rc=$?
set -e
assert_eq "dracut without --force refuses an existing image" "1 dracut: Will not override existing initramfs (/boot/initramfs-$SIM_KERNEL.img) without --force" "$rc $out"
check "dracut --force regenerates /boot/initramfs-<kver>.img" in_root "$ROOT" 10 dracut --force
check "image carries the modprobe.d configuration" grep -q 'nvidia-e2e-kmod-common' "$ROOT/boot/initramfs-$SIM_KERNEL.img"

# Signatures: the NVIDIA stand-ins carry the pinned key's signature, which rpm checks against its keyring.
cp "$MIRROR_DIR/www/compute/cuda/repos/rhel9/x86_64/nvidia-driver-580.95.05-1.el9.x86_64.rpm" "$ROOT/tmp/"
assert_eq "rpm -K: the NVIDIA rpm's signature verifies with the imported key" \
    "/tmp/nvidia-driver-580.95.05-1.el9.x86_64.rpm: digests signatures OK" \
    "$(in_root "$ROOT" 10 rpm -K /tmp/nvidia-driver-580.95.05-1.el9.x86_64.rpm 2>&1)"

# Faults reach dnf.
mirror_fault 'rhel9/x86_64/repodata/repomd.xml$' 500
set +e
out=$(dnf_in_root -y makecache --refresh --repo cuda-rhel9-x86_64 2>&1)
rc=$?
set -e
mirror_clear_faults
assert_eq "dnf fails on the injected 500" 1 "$rc"
check "dnf names the 500" grep -q '500' <<<"$out"
scenario_end
