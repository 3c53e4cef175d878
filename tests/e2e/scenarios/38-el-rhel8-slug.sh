#!/usr/bin/env bash
# EL: a RHEL 8.7 host (verbatim os-release): the plan resolves NVIDIA's repository to the rhel8
# slug, never rhel9, and apply installs the .el8 builds from it with RHEL 8's kernel-devel.
set -euo pipefail
EL_OS=rhel-8
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json on RHEL 8" 0
check "plan names the rhel8 repository" grep -q "compute/cuda/repos/rhel8/x86_64" "$GP_STDOUT"
check "plan never mentions rhel9" bash -c "! grep -q rhel9 '$GP_STDOUT'"
check "plan resolves the .el8 driver build" grep -q '580\.178\.04-1\.el8' "$GP_STDOUT"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on RHEL 8" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify on RHEL 8" 0
assert_grep "cuda .repo: rhel8 slug" "^baseurl=https://127\.0\.0\.1:$MIRROR_PORT/compute/cuda/repos/rhel8/x86_64/?$" \
    "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_el_converged
scenario_end
