#!/usr/bin/env bash
# EL: the key served at key_url is not the one the profile pins: apply fails before trusting it.
# No key file, no .repo, no key in rpm's keyring, no module stream, and the rpm database untouched.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean
render_profile wrong-key.pub

rpmdb_before=$(rpmdb_digest)
etc_before=$(tree_digest "$ROOT" etc)
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with a mismatching key" 1
check "error mentions the fingerprint" grep -qi 'fingerprint' <(gp_output)
assert_no_file "no cuda .repo" "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_no_file "no cuda key file" "$ROOT/etc/pki/rpm-gpg/gpuprov-cuda.asc"
assert_eq "rpm's keyring: only the distro key" 1 "$(in_root "$ROOT" 10 rpm -q gpg-pubkey | wc -l)"
assert_eq "no module stream enabled" "" "$(ls "$ROOT/etc/dnf/modules.d")"
assert_no_rpm nvidia-driver
assert_no_rpm cuda-toolkit-12-4
assert_eq "rpm database byte-identical" "$rpmdb_before" "$(rpmdb_digest)"
assert_eq "/etc unchanged" "$etc_before" "$(tree_digest "$ROOT" etc)"
assert_no_tmp_files
assert_eq "journal result" failed "$(journal_result)"
scenario_end
