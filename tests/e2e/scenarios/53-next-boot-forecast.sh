#!/usr/bin/env bash
# e2e-timeout: 600
# (53) The next-boot forecast (issue 23 items 2-3). A Debian 12 host set up with the driver (550
# from the legacy graph, DKMS-built for the running kernel) gets a second, newer kernel whose
# headers are missing, the most reported GPU-host failure (peers-2026.md P1): the next boot
# (no boot loader in the root: the newest installed kernel, and the forecast says so) has no
# nvidia module. The driver step's kernel hook runs as the kernel package runs it (run-parts
# --exit-on-error over /etc/kernel/postinst.d with the version and image, initramfs-tools' own
# hook first) and logs the verdict without failing the install; `forecast` exits 1 naming that
# kernel and the fix; `gpuprov_next_boot_ready{kernel=...}` reads 0; the plan and status carry
# the forecast. After the fix the forecast names (the headers in place, then its dkms command),
# forecast exits 0 and the metric reads 1.
# Then the mirror publishes a newer build of branch 550's userspace (libnvidia-compute-550,
# nvidia-driver-550, cuda-drivers-550 at $E2E_DRIVER_USERSPACE_ONLY) without its module
# (nvidia-dkms-550 stays at $E2E_DRIVER_VERSION), a second signed source in the root. The stand-ins
# carry the 550 graph's Depends, which follow NVIDIA's (nvidia-driver-550 wants nvidia-dkms-550 and
# libnvidia-compute-550 at its own version; the recorded debian12 nvidia-driver wants
# nvidia-kernel-dkms at its own): apt keeps the userspace back, holds or not, so no version
# mismatch can come from `apt upgrade`. The scenario proves that: apt sees the new build, its
# upgrade moves no driver package, the forecast stays ready with no
# upgrade-userspace-without-module (a false alarm would fail it), nothing is installed. Then the
# whole build, module included: held, the forecast says nothing; with the holds released it names
# upgrade-needs-reboot (userspace and module move together, the loaded module stays the old one
# until the reboot: NVML mismatch meanwhile), and nothing is installed.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
# shellcheck source=lib/driver_graph.sh
source "$E2E_DIR/lib/driver_graph.sh"
scenario_begin clean
ONLY=(--only nouveau,cuda-repo,driver)
HOOK=/etc/kernel/postinst.d/zz-gpuprov-forecast
NEW=6.1.0-31-amd64

gp plan "$PROFILE_IN_ROOT" "${ONLY[@]}"
expect_rc "plan" 0
assert_grep "the plan shows the kernel hook the driver step installs" "$HOOK" "$GP_STDOUT"
gp apply "$PROFILE_IN_ROOT" --yes "${ONLY[@]}"
expect_rc "apply (nouveau, cuda-repo, driver)" 0
check "the hook is installed and executable" test -x "$ROOT$HOOK"
assert_grep "the hook runs the forecast for the kernel it is given" 'forecast --hook --kernel "\$1"' "$ROOT$HOOK"

gp_schema forecast forecast "$PROFILE_IN_ROOT" --json
expect_rc "forecast with only the running kernel: ready" 0
assert_eq "next boot: the running kernel" "$SIM_KERNEL" "$(json_value "$GP_STDOUT" 'd["next_boot"]["kernel"]')"
assert_eq "its module is DKMS's $E2E_DRIVER_VERSION" "$E2E_DRIVER_VERSION dkms" \
    "$(json_value "$GP_STDOUT" 'd["kernels"][0]["module"]["version"] + " " + d["kernels"][0]["module"]["origin"]')"
assert_eq "the upgrade was looked at" True "$(json_value "$GP_STDOUT" 'd["upgrade"]["asked"]')"

# The newer kernel arrives as Debian's linux-image package lays it out (image, modules tree,
# config), without linux-headers-$NEW. The package's postinst then runs the hooks.
mkdir -p "$ROOT/lib/modules/$NEW/kernel"
printf 'e2e placeholder kernel\n' >"$ROOT/boot/vmlinuz-$NEW"
cp "$ROOT/boot/config-$SIM_KERNEL" "$ROOT/boot/config-$NEW"
for f in modules.order modules.builtin modules.builtin.modinfo; do : >"$ROOT/lib/modules/$NEW/$f"; done
t0=$SECONDS
set +e
hook_out=$(in_root "$ROOT" 300 run-parts --report --exit-on-error --arg="$NEW" --arg="/boot/vmlinuz-$NEW" /etc/kernel/postinst.d 2>&1)
hook_rc=$?
set -e
log "kernel hooks ($((SECONDS - t0)) s): $hook_out"
assert_eq "the hooks let the kernel install (driver.kernel_guard: warn)" 0 "$hook_rc"
check "initramfs-tools' hook made the new kernel's image" test -s "$ROOT/boot/initrd.img-$NEW"
if grep -q "next boot into $NEW would not have working GPUs" <<<"$hook_out"; then
    pass "the hook warns on the package manager's output"
else fail "the hook warns on the package manager's output"; fi
assert_grep "the hook logged the forecast" "forecast for kernel $NEW: not ready" "$ROOT/var/log/gpuprov.log"
assert_grep "... with the finding" "forecast error kernel-without-module: .*$NEW" "$ROOT/var/log/gpuprov.log"

gp forecast "$PROFILE_IN_ROOT"
expect_rc "forecast with a newer kernel without headers" 1
assert_grep "forecast names the kernel as the next boot's" "next boot: $NEW \(the newest installed kernel" "$GP_STDOUT"
assert_grep "forecast names the finding and the kernel" "kernel-without-module: the next boot's kernel $NEW has no nvidia module: its headers are not installed" "$GP_STDOUT"
assert_grep "forecast names the fix" "fix: apt-get install linux-headers-$NEW, then dkms install nvidia/$E2E_DRIVER_VERSION -k $NEW" "$GP_STDOUT"
fix=$(sed -n 's/^ *fix: apt-get install linux-headers-[^,]*, then //p' "$GP_STDOUT" | head -n 1)
gp_schema forecast forecast "$PROFILE_IN_ROOT" --json
expect_rc "forecast --json" 1
assert_eq "JSON: not ready, one error about $NEW" "False 1 $NEW" \
    "$(json_value "$GP_STDOUT" 'str(d["ready"]) + " " + str(d["summary"]["errors"]) + " " + d["findings"][0]["kernel"]')"
gp metrics
expect_rc "metrics" 0
assert_grep "the metric reads 0 for $NEW" "^gpuprov_next_boot_ready\{kernel=\"$NEW\"\} 0$" "$GP_STDOUT"
gp plan "$PROFILE_IN_ROOT" "${ONLY[@]}"
expect_rc "plan (nothing to change)" 0
assert_grep "the plan carries the forecast" "next boot: $NEW .*NOT READY" "$GP_STDOUT"
gp status
assert_grep "status carries the forecast" "kernel-without-module" "$GP_STDOUT"

# The fix: linux-headers-$NEW (its build tree), then the command the forecast named.
mkdir -p "$ROOT/usr/src/linux-headers-$NEW"
ln -sfn "/usr/src/linux-headers-$NEW" "$ROOT/lib/modules/$NEW/build"
read -r -a fix_argv <<<"$fix"
check "the forecast's fix is a dkms command ($fix)" test "${fix_argv[0]:-}" = dkms
check "the fix builds the module for $NEW" in_root "$ROOT" 120 "${fix_argv[@]}"
gp forecast "$PROFILE_IN_ROOT"
expect_rc "forecast after the fix: ready" 0
assert_grep "the kernel is ready" "ok +$NEW \[next boot\]: module $E2E_DRIVER_VERSION \(dkms\)" "$GP_STDOUT"
gp metrics
assert_grep "the metric reads 1 for $NEW" "^gpuprov_next_boot_ready\{kernel=\"$NEW\"\} 1$" "$GP_STDOUT"

# --- The mirror publishes 550's userspace at $E2E_DRIVER_USERSPACE_ONLY, not its module ---------
t_us=$SECONDS
USRC=/etc/apt/sources.list.d/e2e-userspace-only.sources
keyring=$(sed -n 's/^Signed-By: //p' "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources")
check "gpuprov's CUDA source names the keyring it installed ($keyring)" test -s "$ROOT$keyring"
drivers_before=$(driver_versions)
printf 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: %s\n' \
    "$(mirror_url "$E2E_USERSPACE_ONLY_REPO/")" "$keyring" >"$ROOT$USRC"
# apt-get update exits non-zero on a source whose InRelease does not verify with Signed-By.
check "apt-get update with the second source (signed by the mirror's key)" \
    in_root "$ROOT" 120 apt-get -q update
cand() { in_root "$ROOT" 30 apt-cache policy "$1" | awk '$1 == "Candidate:" {print $2}'; }
assert_eq "apt sees the new userspace build" "$E2E_DRIVER_USERSPACE_ONLY-1" "$(cand libnvidia-compute-550)"
assert_eq "... and no new module" "$E2E_DRIVER_VERSION-1" "$(cand nvidia-dkms-550)"
# apt's own answer, with gpuprov's holds and without them: the Depends alone keep it back.
for how in held ignore-hold; do
    args=(upgrade --with-new-pkgs)
    [[ $how == held ]] || args=(--ignore-hold "${args[@]}")
    sim=$(apt_sim "${args[@]}")
    printf '%s\n' "$sim" >"$OUT/userspace-only-upgrade-$how.txt"
    assert_eq "apt upgrade ($how) moves no driver package" "" \
        "$(grep -E '^(Inst|Remv) ' <<<"$sim" | awk '{print $2 " "}' | grep -E "$DRIVER_RE" | grep -Ev "$NOT_DRIVER_RE" || true)"
done
if grep -A3 'kept back' <<<"$sim" | grep -qw libnvidia-compute-550; then
    pass "without holds apt keeps libnvidia-compute-550 back (nvidia-driver-550 pins it, and its own new build wants nvidia-dkms-550 $E2E_DRIVER_USERSPACE_ONLY-1)"
else fail "without holds apt keeps libnvidia-compute-550 back (see $OUT/userspace-only-upgrade-ignore-hold.txt)"; fi

gp_schema forecast forecast "$PROFILE_IN_ROOT" --json
expect_rc "forecast with the userspace-only build published: ready" 0
assert_eq "the forecast read apt's upgrade, which moves no driver package" "True " \
    "$(json_value "$GP_STDOUT" 'str(d["upgrade"]["asked"]) + " " + " ".join(a["name"] for a in d["upgrade"]["actions"] if "nvidia" in a["name"])')"
assert_eq "no finding (no upgrade-userspace-without-module on a build apt cannot take)" "" \
    "$(json_value "$GP_STDOUT" '" ".join(x["id"] for x in d["findings"])')"
assert_eq "the driver stays $E2E_DRIVER_VERSION" "$E2E_DRIVER_VERSION" "$(json_value "$GP_STDOUT" 'd["driver_version"]')"
assert_eq "nothing was installed (dpkg's driver packages unchanged)" "$drivers_before" "$(driver_versions)"

# --- The whole build published, module included: the mismatch until the reboot --------------------
# With gpuprov's holds apt moves nothing and the forecast says nothing; a host without them (an
# admin's `apt-mark unhold`, a profile without driver.hold) would take userspace and module
# together, and the module loaded now stays 550.90.07 until the reboot: the forecast names that
# NVML mismatch before anything is installed.
printf 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: %s\n' \
    "$(mirror_url "$E2E_DRIVER_NEXT_REPO/")" "$keyring" >"$ROOT$USRC"
check "apt-get update with the whole newer build" in_root "$ROOT" 120 apt-get -q update
assert_eq "apt sees the new module too" "$E2E_DRIVER_USERSPACE_ONLY-1" "$(cand nvidia-dkms-550)"
gp forecast "$PROFILE_IN_ROOT" --json
expect_rc "forecast, the driver held: ready" 0
assert_eq "no finding while gpuprov's holds stand" "" "$(json_value "$GP_STDOUT" '" ".join(x["id"] for x in d["findings"])')"
mapfile -t held < <(in_root "$ROOT" 30 apt-mark showhold | grep -E "$DRIVER_RE" | grep -Ev "$NOT_DRIVER_RE" || true)
check "gpuprov held the driver packages (${held[*]})" test "${#held[@]}" -gt 0
check "apt-mark unhold ${held[*]}" in_root "$ROOT" 60 apt-mark unhold "${held[@]}"
gp forecast "$PROFILE_IN_ROOT" --json
expect_rc "forecast without the holds: a warning, still ready" 0
assert_eq "the forecast names one warning: upgrade-needs-reboot" "upgrade-needs-reboot warning" \
    "$(json_value "$GP_STDOUT" '" ".join(x["id"] + " " + x["severity"] for x in d["findings"])')"
summary=$(json_value "$GP_STDOUT" 'd["findings"][0]["summary"] if d["findings"] else ""')
if [[ $summary == *"$E2E_DRIVER_VERSION -> $E2E_DRIVER_USERSPACE_ONLY"*"version mismatch"* ]]; then
    pass "... naming both builds and the NVML mismatch ($summary)"
else fail "... naming both builds and the NVML mismatch: $summary"; fi
assert_eq "nothing was installed" "$drivers_before" "$(driver_versions)"
check "apt-mark hold ${held[*]} (as gpuprov left them)" in_root "$ROOT" 60 apt-mark hold "${held[@]}"

rm -f "$ROOT$USRC"
check "apt-get update without the second source" in_root "$ROOT" 120 apt-get -q update
assert_eq "the candidate is the held build again" "$E2E_DRIVER_VERSION-1" "$(cand libnvidia-compute-550)"
log "newer builds published: $((SECONDS - t_us)) s"

# driver.kernel_guard: block: the plan names the mode, apply rewrites the hook with --block, and
# the next kernel without headers fails its postinst's run-parts (the package's configuration).
BLOCKED=6.1.0-32-amd64
printf 'extends: %s\ndriver: {kernel_guard: block}\n' "$PROFILE_IN_ROOT" >"$ROOT/tmp/block.yaml"
gp plan /tmp/block.yaml "${ONLY[@]}"
expect_rc "plan with kernel_guard: block" 0
assert_grep "the plan names the guard's mode" "note: driver.kernel_guard: block: $HOOK refuses" "$GP_STDOUT"
gp apply /tmp/block.yaml --yes "${ONLY[@]}"
expect_rc "apply (the blocking hook)" 0
assert_grep "the hook now blocks" 'forecast --hook --kernel "\$1" --block' "$ROOT$HOOK"
mkdir -p "$ROOT/lib/modules/$BLOCKED/kernel"
printf 'e2e placeholder kernel\n' >"$ROOT/boot/vmlinuz-$BLOCKED"
cp "$ROOT/boot/config-$SIM_KERNEL" "$ROOT/boot/config-$BLOCKED"
for f in modules.order modules.builtin modules.builtin.modinfo; do : >"$ROOT/lib/modules/$BLOCKED/$f"; done
set +e
hook_out=$(in_root "$ROOT" 300 run-parts --report --exit-on-error --arg="$BLOCKED" --arg="/boot/vmlinuz-$BLOCKED" /etc/kernel/postinst.d 2>&1)
hook_rc=$?
set -e
log "kernel hooks (block): rc $hook_rc: $hook_out"
check "the hooks fail the kernel's install (driver.kernel_guard: block)" test "$hook_rc" -ne 0
if grep -q "refusing kernel $BLOCKED: no nvidia module" <<<"$hook_out"; then
    pass "the refusal names the kernel"
else fail "the refusal names the kernel"; fi

scenario_end
