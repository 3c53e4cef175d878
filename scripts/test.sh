#!/usr/bin/env bash
# Installs what the tests need, builds with warnings as errors (build/gpuprov is the release
# binary, checked by scripts/check-portable.sh), runs every unit test (ctest), again under
# ASan+UBSan with a short fuzz pass (scripts/sanitize.sh, scripts/fuzz.sh),
# and the end-to-end suite (a debootstrapped Debian 12 root, an NVIDIA-shaped HTTPS mirror,
# gpuprov under chroot). The e2e suite needs root; GPUPROV_E2E=0 skips it explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
scripts/build.sh --release
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The unit tests again under ASan+UBSan (clang, build-san), then a short pass of every fuzz
# target from the same build. GPUPROV_SANITIZE=0 skips both; GPUPROV_FUZZ_TIME sets the seconds
# per target.
if [[ "${GPUPROV_SANITIZE:-1}" != "0" ]]; then
    scripts/sanitize.sh
    scripts/fuzz.sh --no-build --time "${GPUPROV_FUZZ_TIME:-5}"
fi
# clang-tidy on src/ is opt-in (about 7 CPU-seconds a file, ~6 min on 2 cores): GPUPROV_TIDY=1.
if [[ "${GPUPROV_TIDY:-0}" == "1" ]]; then
    scripts/tidy.sh
fi
if [[ "${GPUPROV_E2E:-1}" != "0" ]]; then
    GPUPROV_BIN="$PWD/build/gpuprov" tests/e2e/run.sh
fi
