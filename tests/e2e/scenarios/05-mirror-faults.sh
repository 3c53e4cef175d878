#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (e) Mirror failures: 500 on InRelease, a key download that hangs, a truncated Packages index.
# Each apply fails with the URL and the cause, leaves no source without its key and no
# half-written file; once the mirror is healthy again the next apply converges.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

BASE="127.0.0.1:$MIRROR_PORT/compute/cuda/repos/debian12/x86_64"
SRC=/etc/apt/sources.list.d/gpuprov-cuda.sources
KEY=/usr/share/keyrings/gpuprov-cuda.gpg

after_failure() { # LABEL
    assert_source_has_key "$SRC ($1)" "$KEY"
    assert_no_tmp_files
    if [[ -s "$ROOT$KEY" ]]; then
        assert_eq "keyring, if present, is the mirror key ($1)" "$(mirror_fingerprint)" "$(keyring_fprs "$KEY" | paste -sd,)"
    fi
    assert_no_pkg cuda-toolkit-12-4
}

# 1. HTTP 500 on the signed index.
mirror_fault 'compute/cuda/repos/debian12/x86_64/InRelease$' 500
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with InRelease answering 500" 1
check "stderr names the InRelease URL" grep -qF "$BASE/InRelease" "$GP_STDERR"
check "stderr names the HTTP status 500" grep -q '500' "$GP_STDERR"
after_failure "InRelease 500"

# 2. The key download hangs: the server accepts, sends nothing for 15 s, then closes. (The
# server's default hang is 60 s; gpuprov retries 4 times, so 60 s would cost 4+ minutes of CI.)
# This proves a hung mirror ends in a bounded, clean failure, not the curl timeout value itself.
mirror_fault 'compute/cuda/repos/debian12/x86_64/3bf863cc\.pub$' hang:15
rm -f "$ROOT$KEY" "$ROOT$SRC"   # force a key fetch even if case 1 already installed it
gp --timeout 200 apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with the key download hanging" 1
log "apply gave up on the hanging key after ${GP_SECONDS}s"
check "stderr names the key URL" grep -qF "$BASE/3bf863cc.pub" "$GP_STDERR"
after_failure "key hangs"

# 3. Packages (and Packages.gz) cut off half-way with a full Content-Length.
mirror_fault 'compute/cuda/repos/debian12/x86_64/Packages(\.gz)?$' truncate
rm -rf "$ROOT"/var/lib/apt/lists/127.0.0.1_*
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with a truncated Packages index" 1
check "stderr names the Packages URL" grep -qE "$BASE/Packages" "$GP_STDERR"
after_failure "Packages truncated"

# Healthy again: converge.
mirror_clear_faults
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply after the mirror recovered" 0
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after recovery" 0
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_eq "keyring is the mirror key" "$(mirror_fingerprint)" "$(keyring_fprs "$KEY" | paste -sd,)"
assert_no_tmp_files
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
