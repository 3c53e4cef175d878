#!/usr/bin/env bash
# Installs what the tests need, builds with warnings as errors (build/gpuprov is the release
# binary, checked by scripts/check-portable.sh), runs every unit test (ctest)
# and the end-to-end suite (a debootstrapped Debian 12 root, an NVIDIA-shaped HTTPS mirror,
# gpuprov under chroot). The e2e suite needs root; GPUPROV_E2E=0 skips it explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
scripts/build.sh --release
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [[ "${GPUPROV_E2E:-1}" != "0" ]]; then
    GPUPROV_BIN="$PWD/build/gpuprov" tests/e2e/run.sh
fi
