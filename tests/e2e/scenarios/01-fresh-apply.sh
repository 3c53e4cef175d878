#!/usr/bin/env bash
# (a) Fresh Debian 12 host, 4x A100, no nouveau: apply converges in one run and verify passes.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
scenario_begin clean
# The --json documents of a real run validate against docs/schemas (issue 20 item 2).
schemas_before_apply

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on a fresh host" 0
APPLY_OUT=$GP_STDOUT
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after apply" 0

FPR=$(mirror_fingerprint)
assert_eq "cuda keyring holds exactly the mirror key" "$FPR" "$(keyring_fprs /usr/share/keyrings/gpuprov-cuda.gpg | paste -sd,)"
assert_eq "container-toolkit keyring holds exactly the mirror key" "$FPR" \
    "$(keyring_fprs /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg | paste -sd,)"
assert_no_file "no apt-key trusted.gpg" "$ROOT/etc/apt/trusted.gpg"
assert_no_file "cuda-keyring's own path is left to that package" "$ROOT/usr/share/keyrings/cuda-archive-keyring.gpg"

SRC=$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources
assert_file "cuda deb822 source" "$SRC"
assert_grep "cuda source: Types" '^Types: *deb$' "$SRC"
assert_grep "cuda source: URIs on the mirror, debian12 slug" "^URIs: *https://127\.0\.0\.1:$MIRROR_PORT/compute/cuda/repos/debian12/x86_64/?$" "$SRC"
assert_grep "cuda source: flat suite" '^Suites: */$' "$SRC"
assert_grep "cuda source: Signed-By the keyring" '^Signed-By: */usr/share/keyrings/gpuprov-cuda\.gpg$' "$SRC"
CSRC=$ROOT/etc/apt/sources.list.d/gpuprov-container-toolkit.sources
assert_file "container-toolkit deb822 source" "$CSRC"
assert_grep "container-toolkit source: URIs" "^URIs: *https://127\.0\.0\.1:$MIRROR_PORT/libnvidia-container/stable/deb/amd64/?$" "$CSRC"
assert_grep "container-toolkit source: Signed-By" '^Signed-By: */usr/share/keyrings/nvidia-container-toolkit-keyring\.gpg$' "$CSRC"

assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
check "cuda-drivers-550 is held" grep -qx cuda-drivers-550 <(holds)
assert_no_pkg cuda-drivers      # floating meta would pull branch 560
assert_no_pkg nvidia-driver-560
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_no_pkg cuda-toolkit-12-5
assert_no_pkg cuda-12-4         # cuda-X-Y drags a driver in; never used
assert_pkg libcudnn9-cuda-12 9.1.0.70-1
assert_pkg libnccl2 2.21.5-1+cuda12.4
v=$(pkg_version libnccl-dev)
if [[ -n "$v" ]]; then assert_eq "libnccl-dev matches CUDA 12.4 when installed" 2.21.5-1+cuda12.4 "$v"; fi
assert_pkg nvidia-container-toolkit 1.17.3-1

assert_nvcc_on_path 12.4 12.4.131

BL=$ROOT/etc/modprobe.d/blacklist-nouveau.conf
assert_grep "nouveau blacklisted" '^blacklist nouveau$' "$BL"
assert_grep "nouveau modeset=0" '^options nouveau modeset=0$' "$BL"
check "initramfs regenerated (placeholder replaced by a real image)" \
    test "$(stat -c %s "$ROOT/boot/initrd.img-$SIM_KERNEL")" -gt 100000
assert_grep "docker runtime configured by nvidia-ctk" '"nvidia-container-runtime"' "$ROOT/etc/docker/daemon.json"

# Progress: off a terminal, apt's status lines become a line every few seconds, and the last.
n=$(grep -Ec '^    \[ *[0-9]+%\] .*\([0-9]+:[0-9]{2}\)$' "$APPLY_OUT" || true)
check "apply shows the transaction's progress ($n lines)" test "$n" -ge 2
assert_grep "progress reaches 100% when the transaction is done" '^    \[100%\] done ' "$APPLY_OUT"
# The log: every command gpuprov ran, with how it ended, how long it took, and its output.
LOG=$ROOT/var/log/gpuprov.log
assert_grep "log: the install transaction with exit code and duration" \
    '^[0-9T:.+-]+ gpuprov\[[0-9]+\] run=[0-9a-f]{8} info: run `apt-get install .*cuda-drivers-550=[^ ]* .*` -> exit 0 in [0-9]+\.[0-9]{3} s$' "$LOG"
assert_grep "log: apt's own output" 'stdout\| pmstatus:nvidia-driver-550:[0-9.]+:Installed nvidia-driver-550 ' "$LOG"
assert_grep "log: the index refresh" 'run `apt-get update .*gpuprov-cuda\.sources.*` -> exit 0 in' "$LOG"
assert_grep "log: read-only probes too" 'query `nvidia-smi --query-gpu=.*` -> exit 0 in' "$LOG"
rid() { grep -E "$1" "$LOG" | head -n 1 | grep -o 'run=[0-9a-f]\{8\}'; }
check "log: the refresh and the install carry the same run id" \
    test "$(rid 'run `apt-get update')" = "$(rid 'run `apt-get install')"
# Each run is framed by its own start and end line (issue 20 item 3): apply and verify (and the
# plans between them) are separate runs, each with exactly one of each.
apply_rid=$(rid 'start: .*gpuprov apply ')
verify_rid=$(rid 'start: .*gpuprov verify ')
check "log: apply and verify are two runs" test -n "$apply_rid" -a -n "$verify_rid" -a "$apply_rid" != "$verify_rid"
check "log: the apply run holds the refresh and the install" test "$(rid 'run `apt-get install')" = "$apply_rid"
for r in $(grep -o 'run=[0-9a-f]\{8\}' "$LOG" | sort -u); do
    check "log: $r has one start and one end line" \
        test "$(grep -F "$r " "$LOG" | grep -c ' info: start: ')/$(grep -F "$r " "$LOG" | grep -c ' info: end: exit ')" = 1/1
done
check "log: not world-readable" test "$(stat -c %a "$LOG")" = 640
# No package installed gpuprov here (apply ran /usr/local/bin/gpuprov): apply put the rule the
# packages ship in place, so the log is rotated (issue 26 item 5).
check "logrotate's rule for the log, as the packages ship it" \
    cmp -s "$REPO_ROOT/dist/logrotate/gpuprov" "$ROOT/etc/logrotate.d/gpuprov"
# The metrics timer's run, every minute: a few summary lines with sizes, never the output of
# nvidia-smi and the kernel log it reads.
lines_before=$(wc -l <"$LOG")
gp metrics --textfile /var/lib/prometheus/node-exporter
expect_rc "metrics" 0
metrics_log=$(tail -n +"$((lines_before + 1))" "$LOG")
printf '%s\n' "$metrics_log" >"$OUT/metrics-run.log"
check "metrics logs no command output" bash -c '! grep -Eq "(stdout|stderr)\| " "$1"' _ "$OUT/metrics-run.log"
assert_grep "metrics logs each probe's size" \
    'query `nvidia-smi --query-gpu=.*` -> exit 0 in [0-9.]+ s \(stdout [0-9.]+ (B|KiB), stderr 0 B, not logged\)' \
    "$OUT/metrics-run.log"
check "metrics adds at most 10 lines to the log ($(wc -l <"$OUT/metrics-run.log"))" \
    test "$(wc -l <"$OUT/metrics-run.log")" -le 10
schemas_after_apply
assert_eq "journal result" "done" "$(journal_result)"
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
assert_no_tmp_files
scenario_end
