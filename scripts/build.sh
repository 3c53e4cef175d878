#!/usr/bin/env bash
# Configures and builds build/gpuprov (and the tests unless GPUPROV_BUILD_TESTS=OFF).
# --release: build/gpuprov is the release binary that runs on every supported distro: linked
# against an older glibc (scripts/sysroot.sh fetches it once) and checked with
# scripts/check-portable.sh. Only the executable's link differs, so switching costs one link.
# Other arguments go to `cmake --build` (e.g. --target gpuprov).
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=
if [[ "${1:-}" == "--release" ]]; then
    shift
    sysroot=$(scripts/sysroot.sh)
fi
# ccache when present (as scripts/sanitize.sh): a rebuild after a small change, or of another
# checkout of the same tree, recompiles only what changed.
launcher=()
if command -v ccache >/dev/null && [[ "${CCACHE_DISABLE:-0}" != "1" ]]; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DGPUPROV_WARNINGS_AS_ERRORS="${GPUPROV_WARNINGS_AS_ERRORS:-ON}" \
    -DGPUPROV_BUILD_TESTS="${GPUPROV_BUILD_TESTS:-ON}" \
    -DGPUPROV_GLIBC_SYSROOT="$sysroot" >/dev/null
cmake --build build -j "$(nproc)" "$@"
if [[ -n "$sysroot" ]]; then scripts/check-portable.sh build/gpuprov; fi
