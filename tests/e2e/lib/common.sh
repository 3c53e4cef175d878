# shellcheck shell=bash
# Shared helpers for the gpuprov end-to-end suite: logging, bounded waits, assertions.
# Sourced by run.sh and by every scenario; never executed directly.

E2E_DIR=${E2E_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
REPO_ROOT=${REPO_ROOT:-$(cd "$E2E_DIR/../.." && pwd)}
export E2E_DIR REPO_ROOT

log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Assertion failures are counted, not fatal, so one run reports every broken expectation.
E2E_FAILURES=0
fail() { log "FAIL: $*"; E2E_FAILURES=$((E2E_FAILURES + 1)); }
pass() { log "ok: $*"; }

# check DESCRIPTION CMD...: runs CMD, records pass/fail.
check() {
    local desc=$1; shift
    if "$@"; then pass "$desc"; else fail "$desc"; fi
}

assert_eq() { # DESC EXPECTED ACTUAL
    if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1 (expected '$2', got '$3')"; fi
}

assert_file() { if [[ -f "$2" ]]; then pass "$1"; else fail "$1 (missing $2)"; fi; }
assert_no_file() { if [[ ! -e "$2" && ! -L "$2" ]]; then pass "$1"; else fail "$1 ($2 exists)"; fi; }

# assert_grep DESC REGEX FILE: extended regex, case-insensitive.
assert_grep() {
    if grep -Eqi -- "$2" "$3" 2>/dev/null; then pass "$1"; else
        fail "$1 (no /$2/ in $3)"
        sed -n '1,40p' "$3" >&2 2>/dev/null || true
    fi
}

# wait_for DEADLINE_SECONDS DESC CMD...: poll CMD every 0.2 s until it succeeds or the deadline.
wait_for() {
    local deadline=$1 desc=$2; shift 2
    local end=$((SECONDS + deadline))
    while ((SECONDS < end)); do
        if "$@"; then return 0; fi
        sleep 0.2
    done
    log "timed out after ${deadline}s waiting for: $desc"
    return 1
}

# Digest of a tree: sha256 of every regular file, plus mode/type/link target of every entry
# (a handful of processes, not one per file: var/lib/dpkg alone holds thousands of files).
tree_digest() { # ROOT DIR...
    local root=$1; shift
    local d present=()
    for d in "$@"; do
        if [[ -e "$root/$d" ]]; then present+=("$d"); else echo "absent $d"; fi
    done
    ((${#present[@]})) || return 0
    (
        cd "$root" || exit 1
        find "${present[@]}" -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
        find "${present[@]}" -xdev -printf '%M %U:%G %p -> %l\n' | LC_ALL=C sort
    )
}
