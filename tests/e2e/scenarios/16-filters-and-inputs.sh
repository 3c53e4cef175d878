#!/usr/bin/env bash
# (p) Filters and hostile inputs. `apply --skip cudnn` converges and its verify leaves cuDNN out;
# a non-UTF-8 os-release and a non-UTF-8 profile path give valid JSON and clean exits (never an
# abort, the journal always final); `--root` is refused for apply and must name a directory.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

valid_json() { "$E2E_PYTHON" -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1"; }

# --- non-UTF-8 bytes in os-release (a vendor's PRETTY_NAME) ------------------------------------------
osr=$ROOT/usr/lib/os-release
printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm) \xff\xfeVendor\xc3"\n' >"$osr.new"
grep -v '^PRETTY_NAME=' "$osr" >>"$osr.new"
mv "$osr.new" "$osr"
gp facts --json
expect_rc "facts --json with a non-UTF-8 os-release" 0
check "facts --json is valid UTF-8 JSON" valid_json "$GP_STDOUT"
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json with a non-UTF-8 os-release (changes pending)" 0
check "plan --json is valid UTF-8 JSON" valid_json "$GP_STDOUT"

# --- a profile under a non-UTF-8 path, applied with a filter ---------------------------------------------
odd=$'/etc/gpuprov/e2e-\xff\xfe.yaml'
cp "$ROOT$PROFILE_IN_ROOT" "$ROOT$odd"
gp apply "$odd" --yes --skip cudnn
expect_rc "apply --skip cudnn from a non-UTF-8 path" 0
check "no abort (exit 134) anywhere" test "$GP_RC" -ne 134
assert_eq "journal result" done "$(journal_result)"
check "the journal is valid UTF-8 JSON" valid_json "$ROOT/var/lib/gpuprov/state.json"
assert_no_pkg libcudnn9-cuda-12
assert_pkg libnccl2 2.21.5-1+cuda12.4
gp verify "$odd" --skip cudnn
expect_rc "verify --skip cudnn" 0
gp verify "$PROFILE_IN_ROOT" --json
expect_rc "the full verify flags only cuDNN" 1
check "only cudnn's checks fail" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
bad = {c["step"] for c in d["checks"] if not c["passed"] and not c["skipped"]}
sys.exit(0 if bad == {"cudnn"} else 1)' "$GP_STDOUT"
gp status --json
expect_rc "status --json" 0
check "status --json is valid UTF-8 JSON" valid_json "$GP_STDOUT"

# --- --root ------------------------------------------------------------------------------------------
mkdir -p "$ROOT/srv/image"
before=$(tree_digest "$ROOT" var/lib/dpkg etc)
gp --root /srv/image apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply --root is refused as a usage error" 64
assert_grep "it says why" "root" <(gp_output)
assert_eq "nothing changed" "$before" "$(tree_digest "$ROOT" var/lib/dpkg etc)"
gp --root /nonexistent plan "$PROFILE_IN_ROOT"
expect_rc "--root must exist (a usage error)" 64
assert_grep "it names the directory" "/nonexistent" <(gp_output)
scenario_end
