#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# EL: re-applying a converged host changes nothing: the rpm database and dnf's history are
# byte-identical, no dnf/rpm call writes (logging shims), no rpm is downloaded, /etc is
# unchanged, and plan reports nothing to do.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "first apply" 0
((GP_RC == 0)) || scenario_end

rpmdb_before=$(rpmdb_digest)
rpms_before=$(rpm_all)
tree_before=$(tree_digest "$ROOT" etc var/lib/rpm var/lib/dnf var/lib/dkms boot)
install_call_log_shims
: >"$ROOT/var/log/e2e-calls.log"
mark=$(mirror_mark)

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "second apply" 0
calls=$(cat "$ROOT/var/log/e2e-calls.log")
log "dnf/rpm/dracut calls during re-apply: $(paste -sd';' <<<"$calls")"
# Read-only: rpm queries, dnf's --assumeno resolution and listings. Anything else writes
# (install/remove/shell/module enable/versionlock add/makecache/dracut).
writes=$(grep -Ev '^rpm (-q[a-zA-Z]*|--query|-V[a-zA-Z]*|--verify|-K|--checksig|--eval|-E)( |$)' <<<"$calls" |
    grep -Ev '^dnf (.* )?--assumeno( |$)' |
    grep -Ev '^dnf (.* )?(module list|repoquery|versionlock list|list|info|check-update)( |$)' || true)
assert_eq "no dnf/rpm/dracut write operation on re-apply" "" "$writes"
assert_eq "rpm database and dnf history byte-identical" "$rpmdb_before" "$(rpmdb_digest)"
assert_eq "the same packages, installed at the same times" "$rpms_before" "$(rpm_all)"
rpms=$(mirror_count_since "$mark" '\.rpm$')
assert_eq "no .rpm downloaded on re-apply" 0 "$rpms"
assert_eq "etc, rpm db, dnf state, dkms and boot unchanged" "$tree_before" \
    "$(tree_digest "$ROOT" etc var/lib/rpm var/lib/dnf var/lib/dkms boot | grep -v 'var/log/e2e-calls.log')"

gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode on a converged host: nothing to do" 0
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
