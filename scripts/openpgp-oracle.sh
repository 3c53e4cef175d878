#!/usr/bin/env bash
# The OpenPGP oracle over the fuzz corpus: every input fuzz_openpgp kept (build-san/fuzz/corpus/
# fuzz_openpgp, grown by scripts/fuzz.sh) through gpuprov's key parser and through
# `gpg --show-keys --with-colons`, compared (tests/openpgp/check_with_gpg.py; ctest
# openpgp_oracle does the same over the fixture keys). Prints the mismatches and a summary;
# the full per-file verdicts go to build/openpgp-oracle.tsv. Exit 1 on any mismatch.
#   scripts/openpgp-oracle.sh [CORPUS-DIR...]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d build ]] || { echo "openpgp-oracle.sh: build/ missing (scripts/build.sh first)" >&2; exit 2; }
cmake --build build --target openpgp_probe >/dev/null
dirs=("$@")
if ((${#dirs[@]} == 0)); then dirs=(build-san/fuzz/corpus/fuzz_openpgp); fi
for d in "${dirs[@]}"; do
    [[ -d "$d" ]] || { echo "openpgp-oracle.sh: no corpus at $d (scripts/fuzz.sh fuzz_openpgp grows it)" >&2; exit 2; }
done
exec tests/openpgp/check_with_gpg.py build/tests/openpgp_probe --report build/openpgp-oracle.tsv "${dirs[@]}"
