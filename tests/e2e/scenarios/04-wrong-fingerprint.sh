#!/usr/bin/env bash
# (d) The key served at key_url is not the one the profile pins: apply fails before trusting it;
# no keyring and no source are written.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
render_profile wrong-key.pub

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with a mismatching key" 1
check "error mentions the fingerprint" grep -qi 'fingerprint' <(gp_output)
wrong=$(mirror_wrong_fingerprint)
if gp_output | tr -d ' ' | grep -qi -e "$wrong" -e "$(mirror_fingerprint)"; then
    pass "error shows the expected or the received fingerprint"
else
    log "note: the error does not show either fingerprint (expected $(mirror_fingerprint), got $wrong)"
fi
assert_no_file "no cuda source" "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources"
assert_no_file "no cuda keyring" "$ROOT/usr/share/keyrings/gpuprov-cuda.gpg"
assert_no_pkg cuda-drivers-550
assert_no_pkg cuda-toolkit-12-4
assert_no_tmp_files
assert_eq "journal result" failed "$(journal_result)"
scenario_end
