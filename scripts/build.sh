#!/usr/bin/env bash
# Configures and builds build/gpuprov (and the tests unless GPUPROV_BUILD_TESTS=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPUPROV_WARNINGS_AS_ERRORS="${GPUPROV_WARNINGS_AS_ERRORS:-ON}" \
    -DGPUPROV_BUILD_TESTS="${GPUPROV_BUILD_TESTS:-ON}" >/dev/null
cmake --build build -j "$(nproc)" "$@"
