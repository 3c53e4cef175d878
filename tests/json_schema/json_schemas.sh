#!/usr/bin/env bash
# Every --json document the binary prints validates against its schema in docs/schemas (issue 20
# item 2): the real binary on fixture hosts (--root, nothing on this host read or changed), in
# passing, failing and degraded states; and the validator rejects documents that break the
# schema, so it cannot pass vacuously. apply --json and plan --out need a real host (apply and
# plan --out refuse --root); e2e 01, 31 and 48 validate those (tests/e2e/lib/json_schema.sh).
# Usage: json_schemas.sh BUILD_DIR/gpuprov REPO_ROOT
set -uo pipefail
bin=$1
repo=$2
fixtures=$repo/tests/fixtures
. "$repo/tests/cli/lib.sh"
# Debian 12's python3-jsonschema, the version scripts/deps.sh --test installs.
py=$(command -v /usr/bin/python3 || command -v python3)
if ! "$py" -c 'import jsonschema' 2>/dev/null; then
    echo "python3-jsonschema is not installed (scripts/deps.sh --test installs it)"
    exit 1
fi
validate() { "$py" "$repo/tests/json_schema/validate.py" "$@"; }
n=0
# run_doc SCHEMA WANT_RC DESCRIPTION ARGS...: runs gpuprov ARGS, expects exit WANT_RC and one
# document on stdout that validates against SCHEMA.
run_doc() {
    local schema=$1 want=$2 what=$3
    shift 3
    n=$((n + 1))
    local out=$scratch/doc$n.json
    "$bin" "$@" >"$out" 2>$scratch/err
    local rc=$?
    [[ $rc == "$want" ]] && ok || bad "$what: exit $rc, wanted $want: $(head -c 300 $scratch/err)"
    if validate "$schema" "$out" >$scratch/v 2>&1; then ok; else bad "$what ($*): $(head -c 1500 $scratch/v)"; fi
    last=$out
}
# jq-like check on the last document: jcheck DESCRIPTION PYTHON-EXPR (d is the document).
jcheck() {
    "$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$last" "$2" &&
        ok || bad "$1: $2 is false for $(head -c 300 "$last")"
}

hosts=()
for h in "$fixtures"/hosts/*/; do hosts+=("$(basename "$h")"); done
[[ ${#hosts[@]} -ge 5 ]] && ok || bad "fixture hosts missing: ${hosts[*]}"

# facts, plan, verify, doctor and status on every fixture host (Debian, Ubuntu, EL 9/10, an
# unsupported Debian 11): all blocked or failing there (the fixtures lack the GPUs cv-train wants
# or the driver).
for h in "${hosts[@]}"; do
    root=$fixtures/hosts/$h
    run_doc facts 0 "facts on $h" --root "$root" facts --json
    run_doc plan 1 "blocked plan on $h" --root "$root" plan cv-train --json
    jcheck "plan on $h is blocked" 'd["blocked"] and d["summary"].get("blocked", 0) >= 1'
    run_doc verify 1 "failing verify on $h" --root "$root" verify cv-train --json
    jcheck "verify on $h fails" 'not d["passed"] and d["summary"]["failed"] >= 1'
    run_doc doctor 1 "doctor with findings on $h" --root "$root" doctor --json
    jcheck "doctor on $h has findings" 'not d["healthy"] and d["findings"]'
    run_doc status 0 "status before any run on $h" --root "$root" status --json
    jcheck "status on $h: nothing recorded" 'd["recorded"] is False and d["journal"] is None'
done
for p in nlp-infer sci-sim; do
    run_doc plan 1 "plan $p" --root "$fixtures/hosts/rocky-9" plan "$p" --json
done

# A plan with changes, an empty plan, filters, apply --dry-run (the plan document).
d12=$fixtures/hosts/debian-12
run_doc plan 0 "plan with changes" --root "$d12" plan cv-train --only nouveau --json
jcheck "the plan has a change" 'd["changes_pending"] and not d["blocked"] and d["steps"][1]["changes"]'
run_doc plan 0 "plan with nothing to do" --root "$d12" plan cv-train --only fabric-manager --json
jcheck "the plan is empty" 'not d["changes_pending"] and not d["blocked"]'
run_doc plan 1 "plan with --skip" --root "$d12" plan cv-train --skip nouveau,driver --json
run_doc plan 0 "apply --dry-run --json" --root "$d12" apply cv-train --dry-run --only nouveau --json

# verify: a passing check set and one that fails (a copy of the fixture, blacklist written).
cp -a "$d12" "$scratch/host"
run_doc verify 1 "verify --only nouveau before the blacklist" --root "$scratch/host" verify cv-train --only nouveau --json
mkdir -p "$scratch/host/etc/modprobe.d"
printf 'blacklist nouveau\noptions nouveau modeset=0\n' >"$scratch/host/etc/modprobe.d/blacklist-nouveau.conf"
run_doc verify 0 "verify --only nouveau passing" --root "$scratch/host" verify cv-train --only nouveau --json
jcheck "verify passes" 'd["passed"] and d["summary"]["passed"] == d["summary"]["total"] >= 1'

# doctor on a host without a GPU.
mkdir -p "$scratch/nogpu/etc"
cp "$d12/etc/os-release" "$scratch/nogpu/etc/"
run_doc doctor 1 "doctor without a GPU" --root "$scratch/nogpu" doctor --json
jcheck "no-nvidia-gpu finding" 'd["findings"][0]["id"] == "no-nvidia-gpu"'

# forecast: a fixture host without a driver (not ready), then a copy with the driver's packages
# and two kernels, the newer one without its module (not ready, naming it), then with its module
# (ready). No upgrade look-ahead under --root (the package manager would answer for this host).
run_doc forecast 1 "forecast on a host without a driver" --root "$d12" forecast --json
jcheck "no driver: not ready" 'not d["ready"] and d["findings"][0]["id"] == "driver-not-installed"'
jcheck "no upgrade look-ahead under --root" 'not d["upgrade"]["asked"] and d["upgrade"]["skipped"]'
fc=$scratch/forecast
cp -a "$d12" "$fc"
old=$(cat "$fc/proc/sys/kernel/osrelease")
new=6.1.0-31-cloud-amd64
printf '\nPackage: libnvidia-compute-580\nStatus: install ok installed\nVersion: 580.95.05-1\nArchitecture: amd64\n' >>"$fc/var/lib/dpkg/status"
mkdir -p "$fc/var/lib/initramfs-tools" "$fc/lib/modules/$old/updates/dkms" "$fc/lib/modules/$new"
: >"$fc/var/lib/initramfs-tools/$old"
: >"$fc/var/lib/initramfs-tools/$new"
printf 'x\0srcversion=AB12\0version=580.95.05\0license=NVIDIA\0' >"$fc/lib/modules/$old/updates/dkms/nvidia.ko"
run_doc forecast 1 "forecast with a newer kernel without its module" --root "$fc" forecast --json
jcheck "the newer kernel is named" 'not d["ready"] and d["next_boot"]["kernel"] == "'$new'" and d["next_boot"]["fallback"] and [f["kernel"] for f in d["findings"]] == ["'$new'"]'
jcheck "the running kernel's module is read from its modinfo" 'd["kernels"][0]["module"]["version"] == "580.95.05" and d["kernels"][0]["ready"]'
mkdir -p "$fc/lib/modules/$new/updates/dkms"
cp "$fc/lib/modules/$old/updates/dkms/nvidia.ko" "$fc/lib/modules/$new/updates/dkms/"
run_doc forecast 0 "forecast with every kernel's module" --root "$fc" forecast --json
jcheck "ready" 'd["ready"] and not d["findings"] and d["summary"]["errors"] == 0'
"$bin" --root "$fc" forecast --json >$scratch/forecast.json 2>/dev/null

# status after runs: each result, with steps and history, as apply writes them (status reads the
# journal and writes it back in full).
st=$scratch/st
mkdir -p "$st/var/lib/gpuprov" "$st/run"
journal() { # RESULT
    cat >"$st/var/lib/gpuprov/state.json" <<JSON
{"schema": 1, "profile": "cv-train", "profile_source": "built-in", "result": "$1",
 "run_started_at": "2026-12-04T10:00:00Z", "run_finished_at": "2026-12-04T10:09:30Z",
 "message": "", "reboot_pending": false, "runs": 2, "boot_id": "0c6e0f4b-5c49-4d4e-9a1b-2b3c4d5e6f70",
 "steps": [{"id": "driver", "status": "done", "started_at": "2026-12-04T10:01:00Z",
            "finished_at": "2026-12-04T10:05:00Z", "message": "",
            "versions": {"cuda-drivers-550": "550.127.08-1"}, "reboot_boot_id": "",
            "reboot_requested_at": ""}],
 "history": [{"started_at": "2026-12-03T09:00:00Z", "finished_at": "", "result": "running",
              "message": "", "profile": "cv-train", "boot_id": "",
              "steps": [{"id": "nouveau", "status": "done", "seconds": 3.5, "versions": {}}]}]}
JSON
}
for r in done:0 failed:1 reboot-required:3 running:1; do
    journal "${r%%:*}"
    run_doc status "${r##*:}" "status after a ${r%%:*} run" --root "$st" status --json
done
jcheck "a killed run reads interrupted" 'd["result"] == "interrupted" and d["journal"]["result"] == "running"'
if command -v flock >/dev/null; then
    n=$((n + 1))
    flock "$st/run/gpuprov.lock" "$bin" --root "$st" status --json >$scratch/doc$n.json 2>/dev/null
    last=$scratch/doc$n.json
    validate status "$last" >$scratch/v 2>&1 && ok || bad "status while running: $(cat $scratch/v)"
    jcheck "a run holding the lock reads running" 'd["result"] == "running"'
fi
printf '{"schema":1,"result":"failed","steps":[]}\n' >"$st/var/lib/gpuprov/state.json"
run_doc status 1 "status of a sparse journal (older gpuprov)" --root "$st" status --json
# An upgrade that failed after the last apply (done) started: the node stays drained, status
# exits 1 and carries the record; one that failed before it no longer speaks for the host.
upgrade_record() { # AT
    cat >"$st/var/lib/gpuprov/upgrade.json" <<JSON
{"profile": "/etc/gpuprov/resume/x.yaml", "phase": "failed", "smoke": true,
 "schedulers": {"slurm_node": "gpu07", "k8s_node": "", "kubeconfig": ""},
 "events": [{"at": "$1", "boot_id": "b1", "event": "drain", "message": "scontrol update NodeName=gpu07 State=DRAIN"},
            {"at": "$1", "boot_id": "b1", "event": "failed", "message": "verify --smoke failed: smoke.cuda"}]}
JSON
}
journal done
upgrade_record 2026-12-04T10:20:00Z
run_doc status 1 "status after an upgrade that failed after the last apply" --root "$st" status --json
jcheck "the record is carried" 'd["result"] == "done" and d["upgrade"]["phase"] == "failed" and d["upgrade"]["schedulers"]["slurm_node"] == "gpu07"'
upgrade_record 2026-12-03T08:00:00Z
run_doc status 0 "status after an apply newer than a failed upgrade" --root "$st" status --json
printf '{"phase": [' >"$st/var/lib/gpuprov/upgrade.json"
run_doc status 0 "status with an unreadable upgrade record" --root "$st" status --json
jcheck "unreadable record: upgrade null, the error named" 'd["upgrade"] is None and "upgrade.json" in d["upgrade_error"]'
rm -f "$st/var/lib/gpuprov/upgrade.json"

# Negative: the validator rejects a broken document, so the passes above mean something. Each
# mutation of a valid document must fail, naming the field.
"$bin" --root "$d12" facts --json >$scratch/facts.json 2>/dev/null
"$bin" --root "$d12" plan cv-train --only nouveau --json >$scratch/plan.json 2>/dev/null
"$bin" --root "$d12" verify cv-train --json >$scratch/verify.json 2>/dev/null
"$bin" --root "$d12" doctor --json >$scratch/doctor.json 2>/dev/null
journal done
"$bin" --root "$st" status --json >$scratch/status.json 2>/dev/null
mutate() { # SCHEMA SOURCE DESCRIPTION PYTHON-STATEMENT (on d) EXPECTED-TEXT
    n=$((n + 1))
    "$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[3], "w"))' \
        "$scratch/$2.json" "$4" "$scratch/bad$n.json" || { bad "mutation $3 did not apply"; return; }
    if validate "$1" "$scratch/bad$n.json" >$scratch/v 2>&1; then
        bad "$1 accepts a document with $3"
    elif grep -q -- "$5" $scratch/v; then ok; else bad "$1 rejects $3 without naming it: $(head -c 400 $scratch/v)"; fi
}
mutate facts facts "format_version 2" 'd["format_version"] = 2' "format_version"
mutate facts facts "no format_version" 'del d["format_version"]' "'format_version' is a required property"
mutate facts facts "no kernel" 'del d["kernel"]' "'kernel' is a required property"
mutate facts facts "an unknown field" 'd["surprise"] = 1' "surprise"
mutate facts facts "a GPU without its model" 'del d["gpus"][0]["model"]' "'model' is a required property"
mutate facts facts "EL facts on a Debian host" 'd["el"] = {}' "is not of type 'null'"
mutate plan plan "format_version 2" 'd["format_version"] = 2' "format_version"
mutate plan plan "a host without os (facts.schema.json through plan's reference)" 'del d["host"]["os"]' "'os' is a required property"
mutate plan plan "a host with format_version" 'd["host"]["format_version"] = 1' "host"
mutate plan plan "an unknown step status" 'd["steps"][0]["status"] = "ok"' "'ok' is not one of"
mutate plan plan "an unknown change kind" 'd["steps"][1]["changes"][0]["kind"] = "thing"' "'thing' is not one of"
mutate plan plan "transactions_resolved false without the note" 'del d["transactions_note"]' "transactions_note"
mutate verify verify "no summary" 'del d["summary"]' "'summary' is a required property"
mutate verify verify "passed as a string" 'd["passed"] = "no"' "is not of type 'boolean'"
mutate doctor doctor "an unknown severity" 'd["findings"][0]["severity"] = "fatal"' "'fatal' is not one of"
mutate doctor doctor "healthy with findings" 'd["healthy"] = True' "findings"
mutate forecast forecast "an unknown finding id" 'd["findings"] = [{"id": "nope", "severity": "error", "kernel": "", "summary": "s", "fix": "f"}]' "'nope' is not one of"
mutate forecast forecast "ready with an error" 'd["summary"]["errors"] = 1' "errors"
mutate forecast forecast "a module of an unknown origin" 'd["kernels"][0]["module"]["origin"] = "magic"' "'magic' is not one of"
mutate status status "an unknown result" 'd["result"] = "ok"' "'ok' is not one of"
mutate status status "a journal step without versions" 'del d["journal"]["steps"][0]["versions"]' "'versions' is a required property"
mutate status status "recorded without a journal" 'd["journal"] = None' "journal"
# apply's and the saved plan's schemas are used by the e2e suite; here they refuse the obvious.
printf '{"format_version": 1, "result": "done"}\n' >$scratch/apply-bad.json
validate apply $scratch/apply-bad.json >$scratch/v 2>&1 && bad "apply schema accepts a document without steps" || ok
printf '{"format_version": 1, "result": "done", "message": "", "apt_transactions": 1, "index_refreshes": 1, "interrupted": false, "steps": [{"id": "driver", "status": "done"}]}\n' >$scratch/apply-good.json
validate apply $scratch/apply-good.json >$scratch/v 2>&1 && ok || bad "apply schema refuses a good document: $(cat $scratch/v)"
printf '{"format_version": 1, "kind": "gpuprov-saved-plan"}\n' >$scratch/saved-bad.json
validate saved-plan $scratch/saved-bad.json >$scratch/v 2>&1 && bad "saved-plan schema accepts a bare document" || ok
# A schema that is not valid draft 7 is an error, never a pass.
printf '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "no-such-type"}\n' >$scratch/broken.schema.json
validate $scratch/broken.schema.json $scratch/facts.json >$scratch/v 2>&1 && bad "a broken schema validated a document" || ok
# Every schema in docs/schemas is valid draft 7 and has format_version as const 1.
for s in "$repo"/docs/schemas/*.schema.json; do
    "$py" - "$s" <<'PY' && ok || bad "$s: not a draft-7 schema requiring format_version 1"
import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(s)
assert s["$schema"] == "http://json-schema.org/draft-07/schema#"
assert "format_version" in s["required"]
fv = s.get("properties", {}).get("format_version") or s["definitions"]["host"]["properties"]["format_version"]
assert fv == {"const": 1}, fv
PY
done

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
