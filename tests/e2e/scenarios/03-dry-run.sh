#!/usr/bin/env bash
# (c) `apply --dry-run` and `plan` change nothing on the host, yet already know the exact
# package versions apply would install (resolved against the mirror's own signed index).
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

DIRS=(etc var/lib/dpkg var/lib/apt usr/share/keyrings usr/local/cuda-12.4)
before=$(tree_digest "$ROOT" "${DIRS[@]}")

gp apply "$PROFILE_IN_ROOT" --yes --dry-run
expect_rc "apply --dry-run" 0
gp plan "$PROFILE_IN_ROOT"
expect_rc "plan" 0
check "plan names the CUDA toolkit package" grep -q 'cuda-toolkit-12-4' "$GP_STDOUT"
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json" 0
json_out=$OUT/plan.json
cp "$GP_STDOUT" "$json_out"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode on a fresh host: changes pending" 2

after=$(tree_digest "$ROOT" "${DIRS[@]}")
if [[ "$before" == "$after" ]]; then pass "etc, dpkg/apt state, keyrings identical after dry run and plan"; else
    fail "dry run changed the host:"
    diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -n 30 >&2 || true
fi
assert_no_file "no journal written by a dry run" "$ROOT/var/lib/gpuprov/state.json"

# The --json plan: one document on stdout, exact versions from the mirror's index.
report=$("$E2E_PYTHON" - "$json_out" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError as e:
    print("invalid-json", e); sys.exit(0)
steps = {s.get("id"): s for s in doc.get("steps", [])}
print("ids", ",".join(steps))
for sid, name in [("driver", "cuda-drivers-550"), ("cuda-toolkit", "cuda-toolkit-12-4"),
                  ("cudnn", "libcudnn9-cuda-12"), ("nccl", "libnccl2"),
                  ("container-toolkit", "nvidia-container-toolkit")]:
    inst = {i.get("name"): i.get("version") for i in steps.get(sid, {}).get("installs", [])}
    print("install", sid, name, inst.get(name, "<absent>"))
    print("status", sid, steps.get(sid, {}).get("status", "<absent>"))
PY
)
log "plan --json summary: $(paste -sd';' <<<"$report")"
check "plan --json is a single JSON document" test -z "$(grep '^invalid-json' <<<"$report")"
assert_eq "plan step order" "ids preflight,nouveau,cuda-repo,secure-boot,driver,fabric-manager,cuda-toolkit,cudnn,nccl,tensorrt,infiniband,container-toolkit,tuning,mig,monitoring,dcgm,readiness,verify" \
    "$(grep '^ids ' <<<"$report")"
assert_eq "plan: driver install version, the branch's newest build" "install driver cuda-drivers-550 $E2E_DRIVER_VERSION-1" "$(grep '^install driver ' <<<"$report")"
assert_eq "plan: toolkit install version" "install cuda-toolkit cuda-toolkit-12-4 12.4.1-1" "$(grep '^install cuda-toolkit ' <<<"$report")"
assert_eq "plan: cudnn install version" "install cudnn libcudnn9-cuda-12 9.1.0.70-1" "$(grep '^install cudnn ' <<<"$report")"
assert_eq "plan: nccl build for CUDA 12.4, not the newer +cuda12.5" "install nccl libnccl2 2.21.5-1+cuda12.4" "$(grep '^install nccl ' <<<"$report")"
assert_eq "plan: container toolkit version" "install container-toolkit nvidia-container-toolkit 1.17.3-1" "$(grep '^install container-toolkit ' <<<"$report")"
assert_eq "plan: toolkit step pending" "status cuda-toolkit pending" "$(grep '^status cuda-toolkit ' <<<"$report")"
scenario_end
