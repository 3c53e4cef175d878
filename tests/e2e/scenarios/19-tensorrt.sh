#!/usr/bin/env bash
# (s) TensorRT in lockstep with CUDA. The mirror carries TensorRT 10.4.0.26 as a +cuda12.2 and a
# higher-sorting +cuda12.5 build and 10.5.0.18 only as +cuda12.5; the CUDA 12.4 profile with
# `tensorrt: {version: "10"}` must get every package of the set at 10.4.0.26-1+cuda12.2 (never
# a build for a newer CUDA, never a mix), the library in ldconfig's cache, trtexec's banner in
# verify, and a converged plan afterwards.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

printf 'tensorrt: {version: "10"}\n' >>"$ROOT$PROFILE_IN_ROOT"
cp "$ROOT$PROFILE_IN_ROOT" "$OUT/profile.yaml"
WANT=10.4.0.26-1+cuda12.2
SET=(tensorrt libnvinfer10 libnvinfer-plugin10 libnvinfer-vc-plugin10 libnvinfer-lean10
    libnvinfer-dispatch10 libnvonnxparsers10 libnvinfer-bin)

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json" 0
check "the plan pins the whole set to $WANT" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
step = next(s for s in d["steps"] if s["id"] == "tensorrt")
pins = {i["name"]: i["version"] for i in step["installs"]}
want = {n: sys.argv[2] for n in sys.argv[3:]}
sys.exit(0 if pins == want else "tensorrt installs: %r" % pins)' "$GP_STDOUT" "$WANT" "${SET[@]}"
check "the plan says why the +cuda12.2 build" grep -q 'cuda12.2 build' "$GP_STDOUT"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply --yes" 0
assert_eq "journal result" done "$(journal_result)"
for p in "${SET[@]}"; do assert_pkg "$p" "$WANT"; done
check "libnvinfer.so.10 is in the linker cache" grep -q 'libnvinfer.so.10 ' <(in_root "$ROOT" 30 /sbin/ldconfig -p)

gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify" 0
check "verify ran trtexec and read TensorRT 10.4.0 from its banner" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = {c["id"]: c for c in d["checks"]}
ok = all(c[i]["passed"] for i in ("tensorrt.library", "tensorrt.package", "tensorrt.trtexec"))
sys.exit(0 if ok and c["tensorrt.trtexec"]["found"] == "TensorRT 10.4.0" else repr(c.get("tensorrt.trtexec")))' "$GP_STDOUT"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode after apply: nothing to do" 0

# The set moved by hand to the +cuda12.5 build (what an unpinned `apt-get install tensorrt=...`
# of the higher-sorting build does) is not the profile's: the plan puts the +cuda12.2 set back.
in_root "$ROOT" 120 apt-get install -y --allow-downgrades libnvinfer-lean10=10.4.0.26-1+cuda12.5 \
    libnvinfer10=10.4.0.26-1+cuda12.5 libnvinfer-plugin10=10.4.0.26-1+cuda12.5 \
    libnvinfer-vc-plugin10=10.4.0.26-1+cuda12.5 libnvinfer-dispatch10=10.4.0.26-1+cuda12.5 \
    libnvonnxparsers10=10.4.0.26-1+cuda12.5 libnvinfer-bin=10.4.0.26-1+cuda12.5 \
    tensorrt=10.4.0.26-1+cuda12.5 >"$OUT/mix.log" 2>&1 || { cat "$OUT/mix.log" >&2; fail "setting up the +cuda12.5 set"; }
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan on the +cuda12.5 set: changes pending" 2
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply puts the +cuda12.2 set back" 0
for p in "${SET[@]}"; do assert_pkg "$p" "$WANT"; done
check "dpkg --audit is clean" test -z "$(dpkg_audit)"
scenario_end
