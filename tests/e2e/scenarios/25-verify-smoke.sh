#!/usr/bin/env bash
# verify --smoke on hosts where no code can run on a GPU: every smoke test is skipped with the
# reason (never passed), stand-ins never make a test pass, and the private directory is gone.
# As root, a real Python runs isolated from / (a torch.py where the operator stands is never
# imported), and a venv or nccl-tests build someone else could change is refused, not run.
# No apply: the cached root as it comes (4 GPUs on PCI, no driver), then by hand.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=mirror/payload.sh
source "$E2E_DIR/mirror/payload.sh"
# shellcheck source=lib/json_schema.sh
source "$E2E_DIR/lib/json_schema.sh"
scenario_begin clean

# A PyTorch profile whose venv does not exist: smoke.pytorch must say so, not pass.
printf 'framework: {pytorch: "2.x", venv: /opt/venv}\n' >>"$ROOT$PROFILE_IN_ROOT"

# smoke_report FILE: "id status|reason" per smoke test, then the summary, from verify's JSON.
smoke_report() {
    "$E2E_PYTHON" - "$1" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError as e:
    print("invalid-json", e); sys.exit(0)
smoke = doc.get("smoke", {})
for t in smoke.get("tests", []):
    print("%s %s|%s" % (t["id"], t["status"], t["reason"]))
s = smoke.get("summary", {})
print("summary passed=%s failed=%s skipped=%s" % (s.get("passed"), s.get("failed"), s.get("skipped")))
print("passed", doc.get("passed"))
PY
}
private_dirs() { find "$ROOT/tmp" -maxdepth 1 -name 'gpuprov-smoke-*' 2>/dev/null; }

# 1. GPUs on PCI, no driver: nvidia-smi cannot answer, so nothing runs.
gp verify "$PROFILE_IN_ROOT" --smoke --json --junit /tmp/verify.xml
expect_rc "verify --smoke without a driver fails on the driver checks" 1
assert_schema verify "$GP_STDOUT"
report=$(smoke_report "$GP_STDOUT")
log "smoke: $(paste -sd';' <<<"$report")"
for id in smoke.cuda smoke.nccl smoke.pytorch; do
    line=$(grep "^$id " <<<"$report" || true)
    check "$id is skipped" grep -q "^$id skipped|" <<<"$line"
    check "$id says nvidia-smi failed" grep -q "nvidia-smi failed (not installed" <<<"$line"
done
assert_eq "no smoke test passed or failed" "summary passed=0 failed=0 skipped=3" \
    "$(grep '^summary' <<<"$report")"
check "JUnit marks the three skipped" test "$(grep -c '<skipped message="nvidia-smi failed' "$ROOT/tmp/verify.xml")" = 3
assert_eq "no private directory left" "" "$(private_dirs)"

gp verify "$PROFILE_IN_ROOT" --smoke
expect_rc "verify --smoke (text)" 1
assert_grep "text names the skip and its reason" "^- smoke.cuda  *skipped: nvidia-smi failed" "$GP_STDOUT"
assert_grep "text counts the skips" "^3 smoke tests: 0 passed, 0 failed, 3 skipped" "$GP_STDOUT"

# 2. The driver answers (the e2e nvidia-smi stand-in) and the nvcc stand-in prints its banner
#    whatever it is asked: the compile writes no program, so smoke.cuda fails, never passes.
install -m 0755 "$E2E_DIR/mirror/stubs/nvidia-smi" "$ROOT/usr/bin/nvidia-smi"
mkdir -p "$ROOT/proc/driver/nvidia" "$ROOT/usr/local/cuda-12.4/bin"
printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Thu Feb 22 01:44:30 UTC 2024\n' \
    >"$ROOT/proc/driver/nvidia/version"
payload_nvcc 12.4 >"$ROOT/usr/local/cuda-12.4/bin/nvcc"
chmod 0755 "$ROOT/usr/local/cuda-12.4/bin/nvcc"
gp verify "$PROFILE_IN_ROOT" --smoke --json
assert_schema verify "$GP_STDOUT"
report=$(smoke_report "$GP_STDOUT")
log "smoke: $(paste -sd';' <<<"$report")"
check "smoke.cuda fails: the stand-in nvcc built nothing" \
    grep -q "^smoke.cuda failed|nvcc exited 0 but wrote no program at /tmp/gpuprov-smoke-" <<<"$report"
check "smoke.nccl is skipped: no nccl-tests" grep -q "^smoke.nccl skipped|all_reduce_perf (nccl-tests) is not on PATH" <<<"$report"
check "smoke.pytorch is skipped: no venv" grep -q "^smoke.pytorch skipped|/opt/venv/bin/python does not exist" <<<"$report"
assert_eq "verify does not pass" "passed False" "$(grep '^passed' <<<"$report")"
assert_eq "no private directory left" "" "$(private_dirs)"

# 2b. As root, nothing someone else could have planted runs (issue 26 item 1). A real Python:
#     the host's Debian python3, its standard library and the libraries the root lacks, copied in.
py=$(readlink -f /usr/bin/python3)
pyver=$(basename "$py")
cp -a "$py" "$ROOT/usr/bin/$pyver"
ln -sfn "$pyver" "$ROOT/usr/bin/python3"
cp -a "/usr/lib/$pyver" "$ROOT/usr/lib/"
for lib in $(ldd "$py" | awk '$3 ~ /^\// {print $3}'); do
    [[ -e "$ROOT$lib" ]] || cp -L "$lib" "$ROOT$lib"
done
check "a real Python runs in the root" in_root "$ROOT" 30 python3 -c 'import encodings, site'
# The venv of the profile, as `python3 -m venv` lays it out.
mkdir -p "$ROOT/opt/venv/bin" "$ROOT/opt/venv/lib/$pyver/site-packages"
ln -sfn "/usr/bin/$pyver" "$ROOT/opt/venv/bin/python"
printf 'home = /usr/bin\ninclude-system-site-packages = false\n' >"$ROOT/opt/venv/pyvenv.cfg"
# Where the operator stands, anyone may write (a shared scratch directory): a torch.py there.
install -d -m 1777 "$ROOT/srv/scratch"
cat >"$ROOT/srv/scratch/torch.py" <<'PY'
open("/tmp/planted-torch-ran", "w").write("imported from the caller's directory\n")
__version__ = "2.4.1+cu124"
PY
chown 65534:65534 "$ROOT/srv/scratch/torch.py"
# gp, started in DIR inside the root (cd DIR && gpuprov ARGS).
gp_in() {
    local dir=$1
    shift
    GP_N=$((GP_N + 1))
    GP_STDOUT="$OUT/gp$GP_N.stdout" GP_STDERR="$OUT/gp$GP_N.stderr"
    set +e
    in_root "$ROOT" 300 /usr/bin/env -C "$dir" gpuprov "$@" >"$GP_STDOUT" 2>"$GP_STDERR"
    GP_RC=$?
    set -e
    log "(in $dir) gpuprov $* -> exit $GP_RC (out: $GP_STDOUT)"
}
gp_in /srv/scratch verify "$PROFILE_IN_ROOT" --smoke --json
report=$(smoke_report "$GP_STDOUT")
log "smoke: $(paste -sd';' <<<"$report")"
assert_no_file "the torch.py in the caller's directory was not imported" "$ROOT/tmp/planted-torch-ran"
check "Python ran isolated: torch is not importable from the venv" \
    grep -q "^smoke.pytorch skipped|torch is not importable by /opt/venv/bin/python: ModuleNotFoundError" <<<"$report"
check "the command shows -I" grep -q '"/opt/venv/bin/python -I - < ' "$GP_STDOUT"

# A venv someone else owns: refused, not run. Its .pth file would run at Python's start.
printf 'import os; open("/tmp/planted-pth-ran", "w").write("ran")\n' \
    >"$ROOT/opt/venv/lib/$pyver/site-packages/planted.pth"
chown -R 65534:65534 "$ROOT/opt/venv"
gp verify "$PROFILE_IN_ROOT" --smoke --json
report=$(smoke_report "$GP_STDOUT")
log "smoke: $(paste -sd';' <<<"$report")"
check "smoke.pytorch fails: the venv is not root's" \
    grep -q "^smoke.pytorch failed|refusing to run /opt/venv/bin/python as root: .*directory /opt/venv (owner uid 65534" <<<"$report"
assert_no_file "nothing of the venv ran" "$ROOT/tmp/planted-pth-ran"
# nccl-tests built in a directory another user owns: refused, not run.
install -d -o 65534 -g 65534 "$ROOT/opt/nccl-tests" "$ROOT/opt/nccl-tests/build"
printf '#!/bin/sh\ntouch /tmp/planted-nccl-ran\n' >"$ROOT/opt/nccl-tests/build/all_reduce_perf"
chmod 0755 "$ROOT/opt/nccl-tests/build/all_reduce_perf"
gp verify "$PROFILE_IN_ROOT" --smoke --json
report=$(smoke_report "$GP_STDOUT")
check "smoke.nccl fails: all_reduce_perf is in another user's directory" \
    grep -q "^smoke.nccl failed|refusing to run /opt/nccl-tests/build/all_reduce_perf as root: .*directory /opt/nccl-tests (owner uid 65534" <<<"$report"
assert_no_file "all_reduce_perf did not run" "$ROOT/tmp/planted-nccl-ran"
rm -rf "$ROOT/opt/nccl-tests" "$ROOT/opt/venv"
rm -f "$ROOT/usr/bin/nvidia-smi"

# 3. No NVIDIA GPU on PCI at all.
for d in "$ROOT"/sys/bus/pci/devices/*; do
    if [[ "$(cat "$d/vendor" 2>/dev/null)" == 0x10de ]]; then rm -rf "$d"; fi
done
gp verify "$PROFILE_IN_ROOT" --smoke --json
report=$(smoke_report "$GP_STDOUT")
assert_eq "all three skipped without a GPU" "summary passed=0 failed=0 skipped=3" \
    "$(grep '^summary' <<<"$report")"
check "the reason is the missing GPU" grep -q "^smoke.cuda skipped|no NVIDIA GPU on PCI" <<<"$report"

# 4. --root: the programs would run here, not in the root.
gp --root /srv verify "$PROFILE_IN_ROOT" --smoke
expect_rc "verify --smoke --root is refused (a usage error)" 64
assert_grep "the refusal says why" "verify --smoke --root /srv is refused" "$GP_STDERR"
scenario_end
