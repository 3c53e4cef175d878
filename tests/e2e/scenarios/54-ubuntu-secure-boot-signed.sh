#!/usr/bin/env bash
# e2e-timeout: 300
# (54) Ubuntu + Secure Boot (issue 23, acceptance line 1): an Ubuntu 24.04-shaped root running
# Ubuntu's generic kernel 6.8.0-50 with Secure Boot on (the SecureBoot efivar, and the kernel's
# built-in keys in /proc/keys holding the stand-in for Canonical's module signing key) and
# Ubuntu's archive (mirror/ubuntu_archive.py, the shape recorded in tests/fixtures/ubuntu-archive).
# `driver.flavor: server`: the plan picks Canonical's signed precompiled modules as ubuntu-drivers
# --gpgpu does (nvidia-headless-no-dkms-580-server, nvidia-utils-580-server, this kernel's
# linux-modules-nvidia-580-server-6.8.0-50-generic and the flavour metapackage
# linux-modules-nvidia-580-server-generic) and no DKMS package; apply converges; verify proves the
# loaded module's signer is Canonical's (the modprobe stand-in refuses unsigned or unknown-key
# modules with "Key was rejected by service", as the kernel does). Then the archive publishes
# kernel ABI 6.8.0-51 (its image, its module package, the bumped metapackages) and a plain
# `apt-get dist-upgrade` (what unattended-upgrades does: new dependencies included) brings the
# matching module package with the kernel; the forecast for the next boot (6.8.0-51) finds its
# module present and signed by Canonical. The revert check, on a copy of the host taken before
# the update: without the flavour metapackage the same upgrade brings the kernel and no module,
# and the forecast exits 1 naming 6.8.0-51-generic.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
SIM_KERNEL=6.8.0-50-generic # Ubuntu's generic flavour: the signed module packages follow it
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
scenario_begin clean
NEW=$E2E_UBUNTU_KERNEL_NEXT
B=580
V=$E2E_UBUNTU_580_SERVER
CANONICAL="Canonical Ltd. Kernel Module Signing"
SIGNED=("nvidia-headless-no-dkms-$B-server" "nvidia-utils-$B-server"
    "linux-modules-nvidia-$B-server-$SIM_KERNEL" "linux-modules-nvidia-$B-server-generic")
# shellcheck disable=SC2054 # one argument, a list of steps
ONLY=(--only secure-boot,driver)

rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/hosts/ubuntu-24.04/etc/os-release" "$ROOT/etc/os-release"
rootfs_simulate_secure_boot "$ROOT" "$MIRROR_DIR/canonical-module-key"

# Ubuntu's archive as 24.04 configures it (deb822, ubuntu-keyring's keyring), on the mirror.
SRC=/etc/apt/sources.list.d/ubuntu.sources
gpg --dearmor <"$MIRROR_DIR/www/compute/cuda/repos/ubuntu2404/x86_64/3bf863cc.pub" \
    >"$ROOT/usr/share/keyrings/ubuntu-archive-keyring.gpg"
archive() { # TREE: the archive as published now (noble) or after the kernel update (noble-next)
    printf 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n' \
        "$(mirror_url "$1/")" >"$ROOT$SRC"
}
archive "$E2E_UBUNTU_ARCHIVE"
check "apt-get update (Ubuntu's archive)" in_root "$ROOT" 120 apt-get -q update
# The running kernel installed as Ubuntu installs it: linux-image-generic -> its ABI's image.
check "apt-get install linux-image-generic (the running kernel's packages)" \
    in_root "$ROOT" 180 apt-get -q -y install linux-image-generic
assert_pkg "linux-image-$SIM_KERNEL" 6.8.0-50.51

P=/etc/gpuprov/e2e-sb.yaml
printf 'name: e2e-sb\nextends: %s\ndriver: {branch: "%s", flavor: server}\n' "$PROFILE_IN_ROOT" "$B" >"$ROOT$P"

gp facts --json
expect_rc "facts" 0
assert_eq "facts: Secure Boot on, Ubuntu, kernel $SIM_KERNEL" "True ubuntu $SIM_KERNEL" \
    "$(json_value "$GP_STDOUT" 'str(d["secure_boot"]) + " " + d["os"]["id"] + " " + d["kernel"]')"

# --- the plan: Canonical's signed modules for the running kernel's flavour ----------------------
gp plan "$P" "${ONLY[@]}" --json
expect_rc "plan --json" 0
cp "$GP_STDOUT" "$OUT/plan.json"
installs=$(json_value "$GP_STDOUT" '" ".join(sorted(i["name"] for i in d["transaction"]["install"]))')
log "plan installs: $installs"
for p in "${SIGNED[@]}"; do
    check "the plan installs $p" grep -qw -- "$p" <<<"$installs"
done
# A DKMS package: nvidia-dkms-*, *-dkms (nvidia-headless-no-dkms-* is the set's userspace).
dkms_names() { tr ' ' '\n' | grep -E '(^|-)dkms($|-)' | grep -v -- '-no-dkms-' || true; }
assert_eq "the plan installs no DKMS package" "" "$(dkms_names <<<"$installs")"
assert_eq "no package of the plan is held (the module packages follow the kernel metapackage)" "" \
    "$(json_value "$GP_STDOUT" '" ".join(i["name"] for i in d["transaction"]["install"] if i["hold"])')"
gp plan "$P" "${ONLY[@]}"
expect_rc "plan" 0
assert_grep "the plan says why" "Canonical-signed precompiled modules for kernel $SIM_KERNEL" "$GP_STDOUT"
assert_grep "the secure-boot step has no key to enrol" "signed by Canonical" "$GP_STDOUT"

# --- apply, verify -----------------------------------------------------------------------------
gp apply "$P" --yes "${ONLY[@]}" # lib/scenario.sh then checks the next plan is empty
expect_rc "apply on the Secure Boot host" 0
for p in "${SIGNED[@]}"; do
    check "$p installed" test -n "$(pkg_version "$p")"
done
assert_pkg "linux-modules-nvidia-$B-server-$SIM_KERNEL" 6.8.0-50.51+1
# shellcheck disable=SC2016 # dpkg-query format, not shell
assert_eq "no DKMS package installed" "" "$(in_root "$ROOT" 30 dpkg-query -W -f='${Package} ${Status}\n' |
    awk '$NF == "installed" {print $1}' | dkms_names)"
KO=/lib/modules/$SIM_KERNEL/kernel/nvidia-${B}srv/nvidia.ko
assert_file "the module package linked the signed module into place" "$ROOT$KO"
assert_eq "the root's own modinfo: signed by Canonical's key" "$CANONICAL" \
    "$(in_root "$ROOT" 30 modinfo -k "$SIM_KERNEL" -F signer nvidia)"
check "the loaded module is $V" grep -q "^NVRM version: NVIDIA UNIX x86_64 Kernel Module  $V  " \
    "$ROOT/proc/driver/nvidia/version"
gp verify "$P" "${ONLY[@]}"
expect_rc "verify" 0
cp "$GP_STDOUT" "$OUT/verify.txt"
assert_grep "verify proves the signer" "secure-boot.module-signer.*signed by $CANONICAL" "$GP_STDOUT"

# The stand-in kernel is as strict as the real one: the same module without its signature is
# refused under Secure Boot (so the load above proves the signature).
rm -rf "$ROOT/proc/driver/nvidia" "$ROOT/sys/module/nvidia"
sed -i '/^nvidia /d' "$ROOT/proc/modules"
obj=/usr/lib/linux-restricted-modules/$SIM_KERNEL/nvidia-$B-server/nvidia.ko
cp "$ROOT$KO" "$OUT/nvidia.ko.signed"
cp "$ROOT$obj" "$ROOT$KO"
set +e
refused=$(in_root "$ROOT" 30 modprobe nvidia 2>&1)
set -e
assert_eq "an unsigned nvidia.ko is refused" "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service" "$refused"
cp "$OUT/nvidia.ko.signed" "$ROOT$KO"
check "the signed one loads again" in_root "$ROOT" 30 modprobe nvidia

# The revert check's host: this one, before the kernel update, less the flavour metapackage.
REVERT=$(rootfs_copy "$ROOT" "$SCENARIO-revert")

# --- the kernel update, as unattended-upgrades takes it ------------------------------------------
# With driver.kernel_guard: block, the strictest hook: dpkg configures the new kernel's image
# before its module package, so the hook must see the module arriving in the same run, neither
# refusing the kernel nor warning.
PB=/etc/gpuprov/e2e-sb-block.yaml
printf 'extends: %s\ndriver: {kernel_guard: block}\n' "$P" >"$ROOT$PB"
gp apply "$PB" --yes "${ONLY[@]}"
expect_rc "apply with driver.kernel_guard: block" 0
# shellcheck disable=SC2016 # the hook's literal "$1"
assert_grep "the kernel hook blocks" 'forecast --hook --kernel "\$1" --block' "$ROOT/etc/kernel/postinst.d/zz-gpuprov-forecast"
archive "$E2E_UBUNTU_ARCHIVE_NEXT"
check "apt-get update (kernel $NEW published)" in_root "$ROOT" 120 apt-get -q update
t0=$SECONDS
set +e
up=$(in_root "$ROOT" 300 apt-get -q -y dist-upgrade 2>&1)
up_rc=$?
set -e
printf '%s\n' "$up" >"$OUT/dist-upgrade.txt"
log "dist-upgrade: exit $up_rc in $((SECONDS - t0)) s"
assert_eq "apt-get dist-upgrade (the blocking hook lets the kernel in)" 0 "$up_rc"
if grep -qE 'refusing kernel|would not have working GPUs' <<<"$up"; then
    fail "the kernel hook raised a false alarm during the upgrade (see $OUT/dist-upgrade.txt)"
else pass "the kernel hook raised no alarm during the upgrade"; fi
assert_grep "the hook logged the module as arriving with its package" \
    "forecast warning module-package-pending: .*linux-modules-nvidia-$B-server-$NEW" "$ROOT/var/log/gpuprov.log"
assert_pkg "linux-image-$NEW" 6.8.0-51.52
assert_pkg "linux-modules-nvidia-$B-server-generic" 6.8.0.51.51
assert_pkg "linux-modules-nvidia-$B-server-$NEW" 6.8.0-51.52+1
assert_eq "the new kernel's module is signed by Canonical's key" "$CANONICAL" \
    "$(in_root "$ROOT" 30 modinfo -k "$NEW" -F signer nvidia)"

gp_schema forecast forecast "$P" --json
expect_rc "forecast after the kernel update: ready" 0
cp "$GP_STDOUT" "$OUT/forecast.json"
assert_eq "next boot: $NEW" "$NEW" "$(json_value "$GP_STDOUT" 'd["next_boot"]["kernel"]')"
assert_eq "$NEW: module $V, precompiled, signed by Canonical, trusted, ready" \
    "$V precompiled $CANONICAL True True" \
    "$(json_value "$GP_STDOUT" '" ".join(str(x) for k in d["kernels"] if k["kernel"] == "'"$NEW"'" for x in (k["module"]["version"], k["module"]["origin"], k["module"]["signer"], k["signature_trusted"], k["ready"]))')"

# --- revert check: the same update without the flavour metapackage ------------------------------
ROOT=$REVERT
check "remove linux-modules-nvidia-$B-server-generic (a plan without it)" \
    in_root "$ROOT" 120 apt-get -q -y remove "linux-modules-nvidia-$B-server-generic"
archive "$E2E_UBUNTU_ARCHIVE_NEXT"
check "revert: apt-get update" in_root "$ROOT" 120 apt-get -q update
check "revert: apt-get dist-upgrade" in_root "$ROOT" 300 apt-get -q -y dist-upgrade
assert_pkg "linux-image-$NEW" 6.8.0-51.52
assert_no_pkg "linux-modules-nvidia-$B-server-$NEW"
gp forecast "$P"
expect_rc "revert: forecast without the metapackage names the kernel" 1
assert_grep "revert: the finding names $NEW" "kernel-without-module: the next boot's kernel $NEW has no nvidia module" "$GP_STDOUT"
assert_grep "revert: the fix is Canonical's module package and the flavour metapackage" \
    "fix: apt-get install linux-modules-nvidia-$B-server-$NEW linux-modules-nvidia-$B-server-generic " "$GP_STDOUT"
# The fix, as the forecast names it, makes the next boot ready.
read -r -a fix_pkgs <<<"$(sed -n 's/^ *fix: apt-get install \([^(]*\) (.*/\1/p' "$GP_STDOUT" | head -n 1)"
check "revert: the fix (apt-get install ${fix_pkgs[*]})" in_root "$ROOT" 180 apt-get -q -y install "${fix_pkgs[@]}"
gp forecast "$P"
expect_rc "revert: forecast after the fix: ready" 0
kill_procs_in_root || true
rootfs_remove "$ROOT"
ROOT=$E2E_WORK/roots/$SCENARIO

scenario_end
