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
# Warnings are errors and the tests are built in a new tree (a developer's), unless the
# environment says otherwise. An existing tree keeps what it was configured with: flipping
# either recompiles everything, so scripts/package.sh reuses a tree as it is.
options=()
for opt in GPUPROV_WARNINGS_AS_ERRORS GPUPROV_BUILD_TESTS; do
    if [[ -n "${!opt:-}" ]]; then
        options+=("-D$opt=${!opt}")
    elif [[ ! -f build/CMakeCache.txt ]]; then
        options+=("-D$opt=ON")
    fi
done
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "${options[@]}" \
    -DGPUPROV_GLIBC_SYSROOT="$sysroot" >/dev/null
cmake --build build -j "$(nproc)" "$@"
if [[ -n "$sysroot" ]]; then scripts/check-portable.sh build/gpuprov; fi
