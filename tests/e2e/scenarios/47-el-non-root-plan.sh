#!/usr/bin/env bash
# EL: `gpuprov plan` as an ordinary user (uid 1000; issue 26 item 17). dnf's CLI refuses install
# and shell without root ("has to be run with superuser privileges"), --assumeno or not, so plan
# asks dnf's own solver through its Python API on a private cache (src/pkg/dnf/dnf_api.hpp). On a
# fresh Rocky 9 host: the user's plan exits 0, says which resolver answered (text and JSON) and
# changes nothing; its transactions are root's plan's on the same host, action for action
# (packages, versions, kinds, order, module streams, blocked or not). Measured: 48 s (three
# plans: the user's with a cold then a warm private cache, 13 s and 8 s; root's, 18 s), run beside
# 31-el-fresh-apply on the shared 2-core machine.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

DIRS=(etc var/lib/rpm var/lib/dnf var/lib/gpuprov var/cache/dnf var/cache/gpuprov)
before=$(tree_digest "$ROOT" "${DIRS[@]}")
install -d -o 1000 -g 1000 "$ROOT/tmp/e2e-home"
GP_HOME=/tmp/e2e-home gp --as 1000:1000 plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json as uid 1000" 0
cp "$GP_STDOUT" "$OUT/user-plan.json"
GP_HOME=/tmp/e2e-home gp --as 1000:1000 plan "$PROFILE_IN_ROOT"
expect_rc "plan as uid 1000, text, warm private cache" 0
check "text: resolved by dnf's solver through its Python API as uid 1000" \
    grep -Eq "resolved by dnf [0-9.]+'s own solver through its Python API, as uid 1000 on a private cache \(/tmp/e2e-home/" "$GP_STDOUT"
assert_eq "nothing under /etc, rpm's or dnf's state or root's caches changed by the user's plans" \
    "$before" "$(tree_digest "$ROOT" "${DIRS[@]}")"

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json as root" 0
cp "$GP_STDOUT" "$OUT/root-plan.json"
# The promise in both: every transaction's actions and module streams, in dnf's order.
same=0
"$E2E_PYTHON" - "$OUT/user-plan.json" "$OUT/root-plan.json" >"$OUT/compare.txt" 2>&1 <<'PY' || same=$?
import json, sys
user, root = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("steps", "install", "upgrade", "downgrade", "reinstall", "remove", "modules", "first", "blocked")
def view(plan):
    return [{k: t[k] for k in keys} for t in plan["transactions"]]
u, r = view(user), view(root)
print("user resolvers:", [t["resolver"] for t in user["transactions"]])
print("root resolvers:", [t["resolver"] for t in root["transactions"]])
print(json.dumps(u, indent=1))
ok = u == r and u and any(t["install"] for t in u)
ok = ok and all(t["resolver"] == "dnf-python-api" for t in user["transactions"])
ok = ok and all(t["resolver"] == "dnf" for t in root["transactions"])
if not ok:
    print("--- root ---")
    print(json.dumps(r, indent=1))
sys.exit(0 if ok else 1)
PY
check "the user's transactions are root's, action for action ($OUT/compare.txt)" test "$same" -eq 0
scenario_end
