#!/usr/bin/env bash
# (i) The same profile on an Ubuntu 22.04 host resolves {distro} to ubuntu2204.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

rm -f "$ROOT/etc/os-release"    # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/e2e/os-release/ubuntu-22.04" "$ROOT/etc/os-release"

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json on Ubuntu 22.04" 0
report=$("$E2E_PYTHON" - "$GP_STDOUT" "$MIRROR_PORT" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError as e:
    print("invalid-json", e); sys.exit(0)
want = "https://127.0.0.1:%s/compute/cuda/repos/ubuntu2204/x86_64" % sys.argv[2]
repo = [s for s in doc.get("steps", []) if s.get("id") == "cuda-repo"]
text = json.dumps(repo)
print("cuda-repo-step", "present" if repo else "absent")
print("ubuntu-url", "yes" if want in text else "no")
print("debian-anywhere", "yes" if "repos/debian12" in json.dumps(doc) else "no")
PY
)
log "plan summary: $(paste -sd';' <<<"$report")"
check "plan --json is one JSON document" test -z "$(grep '^invalid-json' <<<"$report")"
assert_eq "cuda-repo step in the plan" "cuda-repo-step present" "$(grep '^cuda-repo-step' <<<"$report")"
assert_eq "cuda-repo step uses the ubuntu2204 URL" "ubuntu-url yes" "$(grep '^ubuntu-url' <<<"$report")"
assert_eq "no repos/debian12 URL anywhere in the plan" "debian-anywhere no" "$(grep '^debian-anywhere' <<<"$report")"
scenario_end
