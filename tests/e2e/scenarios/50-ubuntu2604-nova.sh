#!/usr/bin/env bash
# e2e-timeout: 900
# (50) Ubuntu 26.04 (issue 21): its 7.0 kernel ships CONFIG_NOVA_CORE=m, and nova_core binds
# Turing and newer GPUs before nvidia can (beclab/Olares PR#3963, LP #2150845: `modprobe nvidia`
# then fails; the modprobe stand-in refuses the same way). On an Ubuntu 26.04-shaped root (its real
# os-release, the kernel's config with CONFIG_NOVA_CORE=m, nova_core loaded and every GPU's sysfs
# driver link naming NovaCore) cv-train on the recorded 2026 graph (ubuntu2604 slug): the plan
# blacklists nova_core and nova_drm beside nouveau and says the driver loads after a reboot; apply
# stops once with exit 3 (reboot-required); after the simulated reboot (the blacklist is in the
# regenerated initramfs, so nova_core stays out and nvidia binds) the resume unit finishes the job
# and verify passes.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# The simulated kernel keeps its default version: the stand-in driver builds declare DKMS's
# BUILD_EXCLUSIVE_KERNEL up to 6.11 (mirror/build.sh), so on a 7.0 version no module would build;
# what makes it 26.04's kernel here is its config (CONFIG_NOVA_CORE=m) and nova_core holding the GPUs.
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
# NVIDIA signs ubuntu2604 with its own key file, 60DF8A40.pub (the mirror serves its key under that
# name and no 3bf863cc.pub there): the profile's key_url names it, as a profile for 26.04 must.
render_profile 60DF8A40.pub

rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/os/ubuntu-26.04/etc/os-release" "$ROOT/etc/os-release"
rootfs_simulate_nova "$ROOT"

UNIT=/etc/systemd/system/gpuprov-resume.service
BLACKLIST=/etc/modprobe.d/blacklist-nouveau.conf
# cv-train lists the platforms its stack is published for; this root is Ubuntu 26.04.
P=/etc/gpuprov/e2e-2604.yaml
printf 'name: e2e-2604\nextends: %s\nhost: {os: [ubuntu-26.04]}\n' "$PROFILE_IN_ROOT" >"$ROOT$P"

gp facts --json
expect_rc "facts on the Ubuntu 26.04 root" 0
check "facts: ubuntu2604 slug, nova_core loaded" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
gpus = [g for g in d["gpus"] if g["vendor_id"] == "0x10de"]
sys.exit(0 if d["os"]["repo_slug"] == "ubuntu2604" and d["nova_core_loaded"]
         and gpus and all(g["driver"] == "NovaCore" for g in gpus) else 1)' "$GP_STDOUT"

gp plan "$P"
expect_rc "plan on Ubuntu 26.04" 0
cp "$GP_STDOUT" "$OUT/plan.txt"
assert_grep "plan: blacklists nova_core" '^ *[+]blacklist nova_core$' "$GP_STDOUT"
assert_grep "plan: blacklists nova_drm" '^ *[+]blacklist nova_drm$' "$GP_STDOUT"
assert_grep "plan: blacklists nouveau" '^ *[+]blacklist nouveau$' "$GP_STDOUT"
assert_grep "plan: regenerates every kernel's initramfs" 'update-initramfs -u -k all' "$GP_STDOUT"
assert_grep "plan: the driver loads after a reboot" 'nova_core is loaded: the driver loads after a reboot' "$GP_STDOUT"
assert_grep "plan: the ubuntu2604 repository" 'repos/ubuntu2604/x86_64' "$GP_STDOUT"
assert_grep "plan: ubuntu2604's key is its 60DF8A40.pub" 'repos/ubuntu2604/x86_64/60DF8A40\.pub' "$GP_STDOUT"

gp apply "$P" --yes
expect_rc "apply while nova_core holds the GPUs: reboot required" 3
assert_eq "journal result" reboot-required "$(journal_result)"
assert_grep "nova_core blacklisted" '^blacklist nova_core$' "$ROOT$BLACKLIST"
assert_grep "nova_drm blacklisted" '^blacklist nova_drm$' "$ROOT$BLACKLIST"
assert_grep "nouveau blacklisted" '^blacklist nouveau$' "$ROOT$BLACKLIST"
check "the initramfs was regenerated after the blacklist" test "$ROOT/boot/initrd.img-$SIM_KERNEL" -nt "$ROOT$BLACKLIST"
check "the regenerated initramfs carries the blacklist" bash -c \
    "chroot '$ROOT' lsinitramfs /boot/initrd.img-$SIM_KERNEL | grep -qx 'etc/modprobe.d/blacklist-nouveau.conf'"
assert_file "resume unit written" "$ROOT$UNIT"
check "no driver module before the reboot" test ! -e "$ROOT/proc/driver/nvidia/version"
gp doctor
check "doctor names the GPU nova_core holds" grep -q "nova-core-bound" "$GP_STDOUT"
gp verify "$P"
check "verify fails while nova_core holds the GPUs" test "$GP_RC" -ne 0
assert_grep "verify names the bound GPU" 'bound to nova_core' "$GP_STDOUT"

# --- the reboot: the blacklist in the initramfs keeps nova_core out, nvidia binds -------------
rootfs_reboot "$ROOT"
check "nova_core not loaded after the reboot" test ! -d "$ROOT/sys/module/nova_core"
check "the module DKMS built loads at boot" test -e "$ROOT/proc/driver/nvidia/version"
run_resume_unit "$UNIT"
assert_no_file "resume unit removed when done" "$ROOT$UNIT"
assert_eq "journal result" "done" "$(journal_result)"
gp verify "$P"
expect_rc "verify after the resume" 0
gp plan "$P" --detailed-exitcode
expect_rc "plan after the resume: nothing to do" 0
scenario_end
