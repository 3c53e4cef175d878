#!/usr/bin/env bash
# Regenerates what the packages ship about the command line from the binary's own definition:
# bash and zsh completion (`gpuprov completion bash|zsh`), the man page's step id list and the
# Ansible module's `choices` for only/skip (`gpuprov completion steps`). With --check, changes nothing and exits 1 naming each stale file
# (tests/cli/cli_reference.sh runs it in ctest, so a new flag, step or built-in cannot ship
# without its completion).
# Usage: scripts/gen-cli-reference.sh [--check] BUILD_DIR/gpuprov
set -euo pipefail
check=false
if [[ "${1:-}" == --check ]]; then
    check=true
    shift
fi
bin=${1:?usage: gen-cli-reference.sh [--check] PATH/TO/gpuprov}
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

"$bin" completion bash >"$scratch/gpuprov.bash"
"$bin" completion zsh >"$scratch/_gpuprov"
# The man page between its BEGIN/END step ids markers: the ids in order, roff-escaped.
steps=$("$bin" completion steps | sed 's/-/\\-/g' | paste -sd, | sed 's/,/, /g')
awk -v steps="$steps." '
    /^\.\\" END step ids/ { skipping = 0 }
    !skipping { print }
    /^\.\\" BEGIN step ids/ { print steps; skipping = 1 }
' "$repo/dist/gpuprov.1" >"$scratch/gpuprov.1"

# The Ansible module between its BEGIN/END step ids markers (two YAML `choices:` lists in its
# DOCUMENTATION, one Python list for its argument_spec), indented as the marker is.
module=contrib/ansible/gpuprov/plugins/modules/gpuprov.py
awk -v steps="$("$bin" completion steps | paste -sd' ')" '
    /# END step ids/ { skipping = 0 }
    !skipping { print }
    /# BEGIN step ids: (yaml|python)/ {
        indent = $0; sub(/#.*/, "", indent)
        n = split(steps, ids, " ")
        if ($0 ~ /: yaml/) {
            print indent "choices:"
            for (i = 1; i <= n; i++) print indent "  - " ids[i]
        } else {
            print indent "STEP_IDS = ["
            for (i = 1; i <= n; i++) print indent "    \"" ids[i] "\","
            print indent "]"
        }
        skipping = 1
    }
' "$repo/$module" >"$scratch/gpuprov.py"

stale=0
for pair in "gpuprov.bash:dist/completion/gpuprov.bash" "_gpuprov:dist/completion/_gpuprov" \
    "gpuprov.1:dist/gpuprov.1" "gpuprov.py:$module"; do
    new=$scratch/${pair%%:*} target=$repo/${pair#*:}
    if cmp -s "$new" "$target"; then
        continue
    fi
    if $check; then
        echo "stale: ${pair#*:} differs from what $bin generates (run scripts/gen-cli-reference.sh $bin):" >&2
        diff -u "$target" "$new" | head -n 40 >&2 || true
        stale=1
    else
        cp "$new" "$target"
        echo "updated ${pair#*:}"
    fi
done
exit "$stale"
