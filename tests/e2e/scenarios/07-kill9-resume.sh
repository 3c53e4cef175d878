#!/usr/bin/env bash
# (g) gpuprov, apt and dpkg are SIGKILLed while a package's postinst runs (power cut, OOM
# killer); the next apply converges: dpkg repaired, verify passes.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

apply_killed_in_slow_script # while cuda-toolkit-12-4's postinst sleeps
# shellcheck disable=SC2016 # dpkg-query format
status=$(in_root "$ROOT" 10 dpkg-query -W -f='${Status}' cuda-toolkit-12-4 2>/dev/null || true)
log "after the kill: cuda-toolkit-12-4 status '$status'; dpkg --audit: $(dpkg_audit | head -n 3 | paste -sd' ')"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "re-apply after kill -9" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after re-apply" 0
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_no_tmp_files
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
