#!/usr/bin/env bash
# (j) apply as an unprivileged user refuses with a clear message and changes nothing;
# plan works unprivileged (design.md: "Never changes anything; works unprivileged").
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

DIRS=(etc var/lib/dpkg var/lib/apt var/lib/gpuprov usr/share/keyrings)
before=$(tree_digest "$ROOT" "${DIRS[@]}")
gp --as 65534:65534 apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply as nobody" 1
check "says it needs root" grep -Eqi 'root|privilege' <(gp_output)
assert_eq "nothing changed" "$before" "$(tree_digest "$ROOT" "${DIRS[@]}")"
# An ordinary user has a home for gpuprov's private index cache; nobody's (/nonexistent) does not.
install -d -o 65534 -g 65534 "$ROOT/tmp/e2e-home"
GP_HOME=/tmp/e2e-home gp --as 65534:65534 plan "$PROFILE_IN_ROOT"
expect_rc "plan as an unprivileged user with a home" 0
assert_eq "nothing changed by plan either" "$before" "$(tree_digest "$ROOT" "${DIRS[@]}")"
scenario_end
