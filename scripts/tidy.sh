#!/usr/bin/env bash
# clang-tidy over src/ with the checked-in .clang-tidy, from a configure-only clang build
# directory (build-tidy: compile_commands.json, nothing compiled). Fails on any finding.
#   scripts/tidy.sh [--analyzer] [file-regex]     e.g. scripts/tidy.sh 'src/repo/'
# --analyzer adds the clang static analyzer (clang-analyzer-*, not its opt-in checks), which
# doubles the time and so is not in .clang-tidy.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v run-clang-tidy >/dev/null || { echo "tidy.sh: run-clang-tidy missing (scripts/deps.sh --test)" >&2; exit 2; }
cmake -S . -B build-tidy -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DGPUPROV_BUILD_TESTS=OFF -DGPUPROV_UNITY_BUILD=OFF >/dev/null
# The embedded-file sources are generated at build time; tidy only reads src/.
log=build-tidy/tidy.log
extra=()
if [[ "${1:-}" == "--analyzer" ]]; then
    extra=(-checks='clang-analyzer-*,-clang-analyzer-optin.*')
    shift
fi
# run-clang-tidy (LLVM 14) always asks for colour; the log is plain text.
run-clang-tidy -p build-tidy -j "$(nproc)" -quiet "${extra[@]}" "$PWD/${1:-src/}.*\.cpp\$" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' >"$log" || true
if grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | sort -u | grep .; then
    echo "tidy.sh: findings above (full output: $log)" >&2
    exit 1
fi
echo "tidy.sh: clean ($(grep -c '^clang-tidy' "$log" || true) files)"
