#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# e2e-timeout: 600
# EL: mirror failures: 500 on repodata/repomd.xml, a key download that hangs, a truncated
# primary.xml.gz. Each apply fails with the URL and the cause, leaves no .repo without its key,
# no half-written file and no package; once the mirror is healthy again the next apply converges.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

BASE="127.0.0.1:$MIRROR_PORT/compute/cuda/repos/rhel9/x86_64"
REPO=/etc/yum.repos.d/gpuprov-cuda.repo
KEY=/etc/pki/rpm-gpg/gpuprov-cuda.asc

after_failure() { # LABEL
    assert_source_has_key "$REPO ($1)" "$KEY"
    assert_no_tmp_files
    if [[ -s "$ROOT$KEY" ]]; then
        assert_eq "key file, if present, is the mirror key ($1)" "$(mirror_fingerprint)" "$(keyring_fprs "$KEY" | paste -sd,)"
    fi
    assert_no_rpm cuda-toolkit-13-0
    assert_no_rpm nvidia-driver
}

# 1. HTTP 500 on the signed repository metadata.
mirror_fault 'compute/cuda/repos/rhel9/x86_64/repodata/repomd\.xml$' 500
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with repomd.xml answering 500" 1
check "stderr names the repomd.xml URL" grep -qF "$BASE/repodata/repomd.xml" "$GP_STDERR"
check "stderr names the HTTP status 500" grep -q '500' "$GP_STDERR"
after_failure "repomd.xml 500"

# 2. The key download hangs 15 s per try (see 05-mirror-faults).
mirror_fault 'compute/cuda/repos/rhel9/x86_64/D42D0685\.pub$' hang:15
rm -f "$ROOT$KEY" "$ROOT$REPO"
gp --timeout 200 apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with the key download hanging" 1
log "apply gave up on the hanging key after ${GP_SECONDS}s"
check "stderr names the key URL" grep -qF "$BASE/D42D0685.pub" "$GP_STDERR"
after_failure "key hangs"

# 3. primary.xml.gz cut off half-way with a full Content-Length.
mirror_fault 'compute/cuda/repos/rhel9/x86_64/repodata/primary\.xml\.gz$' truncate
rm -rf "$ROOT"/var/cache/dnf/gpuprov-cuda-*
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with a truncated primary.xml.gz" 1
check "stderr names the primary URL" grep -qF "$BASE/repodata/primary.xml.gz" "$GP_STDERR"
after_failure "primary truncated"

# Healthy again: converge.
mirror_clear_faults
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply after the mirror recovered" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after recovery" 0
assert_eq "key file is the mirror key" "$(mirror_fingerprint)" "$(keyring_fprs "$KEY" | paste -sd,)"
assert_el_converged
scenario_end
