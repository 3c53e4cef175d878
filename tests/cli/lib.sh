# Sourced by the tests/cli scripts: pass/fail counting and private scratch files (parallel runs,
# other build trees and ctest -j, must not share outputs). Each script ends with
#   echo "$pass passed, $fail failed"; [[ $fail == 0 ]]
pass=0
fail=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
