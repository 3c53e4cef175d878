#!/usr/bin/env bash
# e2e-timeout: 600
# EL: gpuprov, dnf and rpm are SIGKILLed while an rpm scriptlet runs (power cut, OOM killer):
# rpm's lock and dnf's rpmdb_lock.pid are left behind with a dead pid. The next apply converges,
# verify passes, rpm -Va is clean and no package is installed twice.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

apply_killed_in_slow_script # while cuda-toolkit-13-0's %post sleeps
log "after the kill: cuda-toolkit-13-0 '$(rpm_evr cuda-toolkit-13-0)'; dnf lock pid file: $(cat "$ROOT/var/lib/dnf/rpmdb_lock.pid" 2>/dev/null || echo none)"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "re-apply after kill -9" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after re-apply" 0
# rpm has no half-configured state (dpkg's --configure -a): the killed %post's
# `alternatives --install` is lost and neither rpm -V nor dnf notices; converging includes
# redoing it (assert_el_converged checks /usr/local/cuda).
assert_el_converged
assert_nvcc_on_path 13.0 13.0.88
scenario_end
