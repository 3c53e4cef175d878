#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# Signatures as apt checks them: the mirror serves, as the debian12 CUDA InRelease, the same
# index signed with SHA-1, then one whose Valid-Until has passed (both by the pinned key, so
# gpgv alone calls them good). apply refuses each at the cuda-repo step, naming the URL and the
# reason, and nothing the repository would bring reaches the host: no source, no keyring, no
# cached index, no package, dpkg and apt state untouched, and none of the steps before cuda-repo
# run either (nouveau's blacklist is not written): apply runs nothing when a step is blocked.
# With the real InRelease back, plan reads the repository (the control).
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

INRELEASE='compute/cuda/repos/debian12/x86_64/InRelease$'
URL="127.0.0.1:$MIRROR_PORT/compute/cuda/repos/debian12/x86_64/InRelease"
# Path, size, mode and mtime of everything apply could change, but for gpuprov's own repository
# cache, checked on its own below.
host_state() {
    (cd "$ROOT" && find etc usr/share/keyrings usr/local var/lib/dpkg var/lib/apt \
        -printf '%p %s %m %T@\n' | LC_ALL=C sort)
}
before=$(host_state)

refused() { # LABEL FAULT-FILE REASON-REGEX
    mirror_fault "$INRELEASE" "file:$2"
    local mark
    mark=$(mirror_mark)
    gp apply "$PROFILE_IN_ROOT" --yes
    expect_rc "apply with $1" 1
    check "the mirror served $2 as InRelease" test "$(mirror_count_since "$mark" "$INRELEASE")" -ge 1
    check "stderr names the InRelease URL ($1)" grep -qF "$URL" "$GP_STDERR"
    check "stderr says why ($1)" grep -qE "$3" "$GP_STDERR"
    log "$(grep -F "$URL" "$GP_STDERR" | head -n 1)"
    # The cache keeps the verified key (it matched the pin); never the refused index.
    assert_no_file "no cached cuda InRelease ($1)" "$ROOT/var/cache/gpuprov/repos/cuda/InRelease"
    assert_no_file "no cached cuda Packages ($1)" "$ROOT/var/cache/gpuprov/repos/cuda/Packages"
    local after
    after=$(host_state)
    if [[ "$after" == "$before" ]]; then pass "nothing on the host changed ($1)"; else
        fail "apply with $1 changed the host: $(diff <(echo "$before") <(echo "$after") | head -n 20)"
    fi
}
refused "a SHA-1 signature" InRelease.sha1 'weak digest SHA1.*re-signed with SHA-256'
refused "an expired Release" InRelease.expired 'is expired \(Valid-Until Mon, 08 Jan 2024'
assert_no_file "no cuda source" "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources"
assert_no_file "no cuda keyring" "$ROOT/usr/share/keyrings/gpuprov-cuda.gpg"
assert_no_pkg cuda-drivers-550
assert_no_tmp_files

# Control: the same mirror with the real InRelease is accepted (plan: changes pending, exit 2).
mirror_clear_faults
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan with the properly signed InRelease" 2
scenario_end
