#!/usr/bin/env bash
# ctest prometheus_rules: the shipped alert rules pass the real `promtool check rules` and their
# unit tests (`promtool test rules`). promtool comes from Debian's `prometheus` package
# (scripts/deps.sh); without it the test is skipped (exit 77), never passed.
set -euo pipefail
dir=${1:?usage: check_rules.sh DIST_PROMETHEUS_DIR}
if ! command -v promtool >/dev/null; then
    echo "SKIP: promtool is not installed (apt-get install prometheus)" >&2
    exit 77
fi
promtool check rules "$dir/gpuprov-alerts.yml"
# promtool resolves rule_files relative to the test file.
promtool test rules "$dir/gpuprov-alerts.test.yml"
