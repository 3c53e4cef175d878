#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (b) Re-applying a converged host changes nothing: dpkg status byte-identical, no apt-get/dpkg
# write operation, no apt fetch from the mirror, plan reports nothing to do.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "first apply" 0
((GP_RC == 0)) || scenario_end

status_before=$(sha256sum <"$ROOT/var/lib/dpkg/status")
tree_before=$(tree_digest "$ROOT" etc var/lib/dpkg usr/share/keyrings)

# Logging shims in front of the real apt-get and dpkg for the second run.
SHIMLOG=/var/log/e2e-shim.log
for b in /usr/bin/apt-get /usr/bin/dpkg; do
    mv "$ROOT$b" "$ROOT$b.e2e-real"
    printf '#!/bin/sh\necho "%s $*" >>%s\nexec %s.e2e-real "$@"\n' "${b##*/}" "$SHIMLOG" "$b" >"$ROOT$b"
    chmod 0755 "$ROOT$b"
done
: >"$ROOT$SHIMLOG"
mark=$(mirror_mark)

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "second apply" 0

for b in /usr/bin/apt-get /usr/bin/dpkg; do mv "$ROOT$b.e2e-real" "$ROOT$b"; done

assert_eq "dpkg status byte-identical" "$status_before" "$(sha256sum <"$ROOT/var/lib/dpkg/status")"
# Read-only queries are fine (dpkg --audit, -l, -s, -L, --print-architecture, apt-get check/-s).
writes=$(grep -Ev '^dpkg (--audit|-C|-l|--list|-s|--status|-L|--listfiles|-S|--search|--print-architecture|--print-foreign-architectures|--compare-versions|--get-selections|--version)( |$)' "$ROOT$SHIMLOG" |
    grep -Ev '^apt-get (check|(.* )?(-s|--simulate|--dry-run|--just-print|--print-uris)( |$))' || true)
assert_eq "no apt-get/dpkg write operation on re-apply" "" "$writes"
log "apt-get/dpkg calls during re-apply: $(paste -sd';' "$ROOT$SHIMLOG")"
# gpuprov may re-read the indexes itself (plan is computed live); apt must not.
apt_fetches=$(tail -n +"$((mark + 1))" "$MIRROR_DIR/requests.log" | grep -c '"ua": "Debian APT' || true)
assert_eq "no request by apt itself on re-apply" 0 "$apt_fetches"
debs=$(mirror_count_since "$mark" '\.deb$')
assert_eq "no .deb downloaded on re-apply" 0 "$debs"
assert_eq "etc, dpkg db and keyrings unchanged" "$tree_before" "$(tree_digest "$ROOT" etc var/lib/dpkg usr/share/keyrings)"

gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode on a converged host: nothing to do" 0
assert_eq "journal result" "done" "$(journal_result)"
scenario_end
