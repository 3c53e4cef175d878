#!/usr/bin/env bash
# The clang ASan+UBSan build (build-san): every library, the unit tests and the libFuzzer
# targets (fuzz/) instrumented with -fsanitize=address,undefined -fno-sanitize-recover=all, so
# any out-of-bounds access, use-after-free, leak or undefined behaviour fails the test that hit
# it. Runs the whole ctest suite on it.
#   scripts/sanitize.sh              configure, build everything, run ctest
#   scripts/sanitize.sh --build-only [cmake --build args...]   configure and build (fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-san
build_only=0
if [[ "${1:-}" == "--build-only" ]]; then
    build_only=1
    shift
fi
for tool in clang clang++; do
    command -v "$tool" >/dev/null || { echo "sanitize.sh: $tool missing (scripts/deps.sh --test)" >&2; exit 2; }
done
launcher=()
if command -v ccache >/dev/null && [[ "${CCACHE_DISABLE:-0}" != "1" ]]; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# -O1 rather than RelWithDebInfo's -O2: the sanitizers' own advice (readable reports, no
# optimisation that hides a bug) at half the compile time. Line tables are all a report's
# file:line needs; full debug info (types, variables) is for a debugger, and costs compile time.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
    -DGPUPROV_SANITIZE=address,undefined -DGPUPROV_FUZZ=ON \
    -DGPUPROV_WARNINGS_AS_ERRORS="${GPUPROV_WARNINGS_AS_ERRORS:-ON}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "$@"
((build_only)) && exit 0

# halt_on_error is implied by -fno-sanitize-recover; detect_leaks makes a leak a failure;
# print_stacktrace gives UBSan reports a location worth reading.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
