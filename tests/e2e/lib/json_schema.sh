# shellcheck shell=bash
# assert_schema NAME FILE: FILE (a --json document a real run printed, or a saved plan) validates
# against docs/schemas/NAME.schema.json (issue 20 item 2; docs/json.md). The ctest json_schemas
# covers fixture hosts; this checks what real apply, verify, doctor and status runs print.
# Sourced by scenarios after lib/scenario.sh (E2E_PYTHON, REPO_ROOT, OUT, pass/fail).
assert_schema() {
    local name=$1 file=$2 report
    report="$OUT/schema-$name-$(basename "$file").txt"
    if "$E2E_PYTHON" "$REPO_ROOT/tests/json_schema/validate.py" "$name" "$file" >"$report" 2>&1; then
        pass "the $name document validates against docs/schemas/$name.schema.json ($file)"
    else
        fail "the $name document does not validate against docs/schemas/$name.schema.json ($report)"
        head -n 20 "$report" >&2
    fi
}

# gp_schema NAME ARGS...: gp ARGS (a --json command), then assert_schema NAME on what it printed.
# GP_RC etc. stay as gp set them, for expect_rc.
gp_schema() {
    local name=$1
    shift
    gp "$@"
    assert_schema "$name" "$GP_STDOUT"
}

# json_value FILE PYTHON-EXPR: prints the expression over the document d (for assert_eq).
json_value() { "$E2E_PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# schemas_before_apply: a fresh host's status (nothing recorded), facts and plan (changes pending).
schemas_before_apply() {
    gp_schema status status --json
    expect_rc "status --json before any run" 0
    assert_eq "status --json before any run: nothing recorded" False "$(json_value "$GP_STDOUT" 'd["recorded"]')"
    gp_schema facts facts --json
    expect_rc "facts --json" 0
    gp_schema plan plan "$PROFILE_IN_ROOT" --json
    expect_rc "plan --json on a fresh host" 0
    assert_eq "plan --json on a fresh host: changes pending, resolved by the package manager" \
        "True True" "$(json_value "$GP_STDOUT" 'd["changes_pending"], d["transactions_resolved"] and bool(d["transactions"])' | tr -d '(),')"
}

# schemas_after_apply: on a converged host, verify, status, doctor, an empty plan and a no-op
# apply, each --json and valid.
schemas_after_apply() {
    gp_schema verify verify "$PROFILE_IN_ROOT" --json
    expect_rc "verify --json after apply" 0
    gp_schema status status --json
    expect_rc "status --json after apply" 0
    assert_eq "status --json after apply: done" "done" "$(json_value "$GP_STDOUT" 'd["result"]')"
    gp_schema doctor doctor --json --profile "$PROFILE_IN_ROOT"
    expect_rc "doctor --json on a converged host: healthy" 0
    gp_schema plan plan "$PROFILE_IN_ROOT" --json
    expect_rc "plan --json after apply" 0
    assert_eq "plan --json after apply: nothing pending" False "$(json_value "$GP_STDOUT" 'd["changes_pending"]')"
    gp_schema apply apply "$PROFILE_IN_ROOT" --yes --json
    expect_rc "apply --json on a converged host" 0
    assert_eq "apply --json on a converged host: done" "done" "$(json_value "$GP_STDOUT" 'd["result"]')"
}
