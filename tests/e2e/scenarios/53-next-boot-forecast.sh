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
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
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
