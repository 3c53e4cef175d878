#!/usr/bin/env bash
# Benchmarks for docs/benchmarks.md: plan in-process (bench/plan_bench) and the real binary's
# wall time for `gpuprov plan cv-train` (median of many runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --target gpuprov plan_bench >/dev/null
build/bench/plan_bench "${1:-200}" "${2:-6000}"
runs=${3:-50}
times=()
for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N)
    build/gpuprov --root tests/fixtures/hosts/ubuntu-22.04 plan cv-train >/dev/null 2>&1 || true
    e=$(date +%s%N)
    times+=($(((e - s) / 1000)))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$((runs / 2 + 1))p")
echo "gpuprov plan cv-train (binary, --root fixture, NVIDIA repos unreachable), $runs runs: median $((median / 1000)).$(((median % 1000) / 100)) ms"
