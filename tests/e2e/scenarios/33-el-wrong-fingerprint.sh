#!/usr/bin/env bash
# EL: the key served at key_url is not the one the profile pins: apply fails before trusting it.
# No key file, no .repo, no key in rpm's keyring, no module stream, no NVIDIA package. The plan
# has cuda-repo blocked, so apply runs none of the steps before it either (as on apt): rpm's
# database and /etc are as they were.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean
render_profile wrong-key.pub

rpms_before=$(rpm_all)
etc_before=$(tree_digest "$ROOT" etc)
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with a mismatching key" 1
check "error mentions the fingerprint" grep -qi 'fingerprint' <(gp_output)
assert_no_file "no cuda .repo" "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_no_file "no cuda key file" "$ROOT/etc/pki/rpm-gpg/gpuprov-cuda.asc"
assert_eq "rpm's keyring: only the distro key" 1 "$(in_root "$ROOT" 10 rpm -q gpg-pubkey | wc -l)"
assert_eq "no module stream enabled" "" "$(ls "$ROOT/etc/dnf/modules.d")"
assert_no_rpm nvidia-driver
assert_no_rpm cuda-toolkit-13-0
added=$(comm -13 <(echo "$rpms_before") <(rpm_all) | sed -E 's/-(\(none\)|[0-9]+):.*$//' | paste -sd' ')
removed=$(comm -23 <(echo "$rpms_before") <(rpm_all) | paste -sd' ')
assert_eq "rpm: nothing removed or changed" "" "$removed"
assert_eq "rpm: nothing added, not even preflight's kernel-devel" "" "$added"
etc_changed=$(diff <(echo "$etc_before") <(tree_digest "$ROOT" etc) | grep '^[<>] ' |
    sed -E 's/^[<>] ([0-9a-f]{64}  |[^ ]+ [0-9]+:[0-9]+ )//; s/ -> .*$//' | sort -u | paste -sd' ' || true)
assert_eq "/etc: nothing changed, not even nouveau's blacklist" "" "$etc_changed"
assert_no_tmp_files
assert_eq "journal result" failed "$(journal_result)"
scenario_end
