#!/usr/bin/env bash
# Drives the real binary the way a sysadmin and a change review do: facts on fixture hosts and
# on this machine, plan JSON shape and exit codes, malformed profiles refused with a position.
# Usage: cli_smoke.sh BUILD_DIR/gpuprov REPO_ROOT
set -uo pipefail
bin=$1
repo=$2
fixtures=$repo/tests/fixtures
. "$(dirname "$0")/lib.sh"
expect_exit() { # expect_exit CODE DESCRIPTION CMD...
    local want=$1 what=$2
    shift 2
    "$@" >$scratch/out 2>$scratch/err
    local got=$?
    if [[ $got == "$want" ]]; then ok; else bad "$what: exit $got, wanted $want: $(head -c 400 $scratch/err)"; fi
}
json_get() { python3 -c "import json,sys; d=json.load(sys.stdin); v=eval(sys.argv[1]); print('' if v is None else v)" "$1"; }

# facts --json gives the right NVIDIA repo slug on each fixture host.
declare -A slugs=([ubuntu-20.04]=ubuntu2004 [ubuntu-22.04]=ubuntu2204 [ubuntu-24.04]=ubuntu2404
                  [debian-12]=debian12 [rhel-9]=rhel9 [rocky-9]=rhel9 [debian-11]="")
for host in "${!slugs[@]}"; do
    got=$("$bin" --root "$fixtures/hosts/$host" facts --json | json_get 'd["os"]["repo_slug"]')
    [[ "$got" == "${slugs[$host]}" ]] && ok || bad "facts slug on $host: '$got', wanted '${slugs[$host]}'"
done
# GPUs in a fixture PCI tree are named.
got=$("$bin" --root "$fixtures/hosts/ubuntu-22.04" facts --json | json_get '",".join(sorted({g["model"] for g in d["gpus"]}))')
[[ "$got" == "A100" ]] && ok || bad "ubuntu-22.04 GPUs named '$got', wanted A100"

# This machine: the slug follows its own os-release.
. /etc/os-release
want=""
case "$ID" in
ubuntu) want="ubuntu${VERSION_ID//./}" ;;
debian) [[ "$VERSION_ID" == 12 ]] && want=debian12 ;;
esac
got=$("$bin" facts --json | json_get 'd["os"]["repo_slug"]')
[[ "$got" == "$want" ]] && ok || bad "facts slug on this machine: '$got', wanted '$want'"

# plan --json is one document whose steps come in the design's order.
order="preflight,nouveau,cuda-repo,secure-boot,driver,fabric-manager,cuda-toolkit,cudnn,nccl,tensorrt,infiniband,container-toolkit,tuning,mig,monitoring,dcgm,readiness,verify"
"$bin" --root "$fixtures/hosts/debian-12" plan cv-train --json >$scratch/json 2>/dev/null
got=$(json_get '",".join(s["id"] for s in d["steps"])' <$scratch/json)
[[ "$got" == "$order" ]] && ok || bad "plan --json step order: $got"
got=$(json_get 'all(set(s) >= {"id","status","reason","changes","installs"} for s in d["steps"])' <$scratch/json)
[[ "$got" == True ]] && ok || bad "plan --json steps lack fields"
# --root reads the image's files; apt/dpkg/rpm would answer for this host, so no transaction is
# shown as the image's, and the plan says how to get it (issue 26 item 13).
got=$(json_get 'd["transactions_resolved"] is False and d["transactions"] == [] and "chroot" in d["transactions_note"]' <$scratch/json)
[[ "$got" == True ]] && ok || bad "plan --root resolved a transaction with this host's apt: $got"
"$bin" --root "$fixtures/hosts/debian-12" plan cv-train --only nouveau >$scratch/text 2>/dev/null || true
grep -q "^Note: package transactions not resolved: with --root" $scratch/text && ok || bad "plan --root text lacks the unresolved note"
# debian-12 fixture has 2x T4, cv-train wants 4x A100: blocked, exit 1 with or without the flag.
expect_exit 1 "plan blocked on a host without the GPUs" "$bin" --root "$fixtures/hosts/debian-12" plan cv-train
expect_exit 1 "plan --detailed-exitcode blocked" "$bin" --root "$fixtures/hosts/debian-12" plan cv-train --detailed-exitcode
# Only steps that need no repository: nouveau pending → 2; skipped → 0.
expect_exit 2 "detailed exit code with changes" "$bin" --root "$fixtures/hosts/debian-12" plan cv-train --only nouveau --detailed-exitcode
expect_exit 0 "plain exit code with changes" "$bin" --root "$fixtures/hosts/debian-12" plan cv-train --only nouveau
expect_exit 0 "detailed exit code, nothing to do" "$bin" --root "$fixtures/hosts/debian-12" plan cv-train --only fabric-manager --detailed-exitcode
# Usage errors exit 64 (EX_USAGE), never 2: a cron job reading `plan --detailed-exitcode` must
# not take a typo for pending changes (docs/exit-codes.md).
expect_exit 64 "unknown step id" "$bin" plan cv-train --only nvidia
grep -q "step ids are" $scratch/err && ok || bad "unknown step id message lists the ids"
expect_exit 64 "unknown step id with --detailed-exitcode" "$bin" --root "$fixtures/hosts/debian-12" plan cv-train --only nvidia --detailed-exitcode
expect_exit 64 "unknown flag" "$bin" plan cv-train --no-such-flag
expect_exit 64 "bad flag value" "$bin" apply cv-train --dry-run --reboot sometimes
expect_exit 64 "bad global flag value" "$bin" --log-level loud facts
expect_exit 64 "missing subcommand" "$bin"
# A bare gpuprov shows what it can do (issue 20 item 4), still a usage error for scripts.
grep -q "^Subcommands:" $scratch/out && grep -q "^  plan" $scratch/out && ok || bad "bare gpuprov shows no help: $(head -c 300 $scratch/out)"
expect_exit 64 "only global options" "$bin" --no-color
grep -q "^Subcommands:" $scratch/out && ok || bad "gpuprov --no-color shows no help"
expect_exit 64 "missing argument" "$bin" plan
expect_exit 0 "--help" "$bin" plan --help
expect_exit 0 "--version" "$bin" --version
expect_exit 64 "--root that does not exist" "$bin" --root /nonexistent/gpuprov-root plan cv-train
grep -q "no such directory" $scratch/err && ok || bad "--root message: $(head -c 200 $scratch/err)"
expect_exit 64 "--root that is a file" "$bin" --root "$fixtures/hosts/debian-12/etc/os-release" facts
grep -q "not a directory" $scratch/err && ok || bad "--root file message: $(head -c 200 $scratch/err)"
expect_exit 64 "apply --root is refused" "$bin" --root "$fixtures/hosts/debian-12" apply cv-train --yes
grep -q "is refused" $scratch/err && ok || bad "apply --root message: $(head -c 200 $scratch/err)"
# verify takes the same filters as apply, and refuses unknown ids the same way.
expect_exit 64 "verify --skip unknown" "$bin" verify cv-train --skip nvidia
expect_exit 64 "apply --only unknown" "$bin" apply cv-train --dry-run --only nvidia
# An unknown command is named, with the nearest one, and exits 64 (global options skipped).
expect_exit 64 "unknown command" "$bin" --log-level info plna cv-train
grep -q "unknown command 'plna'; did you mean 'plan'?" $scratch/err && ok || bad "no suggestion: $(cat $scratch/err)"
expect_exit 64 "unknown command, nothing near" "$bin" frobnicate
grep -q "unknown command 'frobnicate' (commands: profiles, facts, plan" $scratch/err && ok || bad "no command list: $(cat $scratch/err)"
# Every JSON document carries format_version 1 (issue 20 item 2).
for args in "facts --json" "plan cv-train --json" "verify cv-train --json" "doctor --json" "status --json"; do
    # shellcheck disable=SC2086 # the words of args
    "$bin" --root "$fixtures/hosts/ubuntu-22.04" $args >$scratch/json 2>/dev/null
    got=$(json_get 'd.get("format_version")' <$scratch/json)
    [[ "$got" == 1 ]] && ok || bad "$args: format_version '$got'"
done
# Issue 20 item 4: the CLI conventions sysadmins know.
# An unknown flag: "error:", the flag, the command, the nearest flag, where usage is.
expect_exit 64 "mistyped flag" "$bin" plan cv-train --jsn
grep -qx "error: unknown option '--jsn' for 'gpuprov plan'; did you mean '--json'? Run 'gpuprov plan --help' for usage." $scratch/err && ok || bad "mistyped flag message: $(cat $scratch/err)"
expect_exit 64 "mistyped flag after a valued one" "$bin" apply cv-train --reboot never --dry-rn
grep -q "unknown option '--dry-rn' for 'gpuprov apply'; did you mean '--dry-run'?" $scratch/err && ok || bad "apply flag message: $(cat $scratch/err)"
expect_exit 64 "mistyped global flag" "$bin" --log-levl info facts
grep -q "^error: unknown option '--log-levl'.*did you mean '--log-level'?" $scratch/err && ok || bad "global flag message: $(cat $scratch/err)"
# Every other parse error is one "error:" line naming the command's help.
expect_exit 64 "missing profile" "$bin" verify
grep -q "^error: .*PROFILE.*Run 'gpuprov verify --help' for usage" $scratch/err && ok || bad "missing argument message: $(cat $scratch/err)"
expect_exit 64 "bad choice" "$bin" apply cv-train --dry-run --reboot sometimes
grep -q "^error: .*sometimes.*Run 'gpuprov apply --help'" $scratch/err && ok || bad "bad choice message: $(cat $scratch/err)"
# Repeated --only/--skip add up; each value may hold several ids; the profile after --only stays
# the profile.
"$bin" --root "$fixtures/hosts/debian-12" plan cv-train --json --skip nouveau --skip driver,cudnn --skip cuda-repo >$scratch/json 2>$scratch/err
got=$(json_get '",".join(s["id"] for s in d["steps"] if s["status"] == "skipped" and "--skip" in s["reason"])' <$scratch/json)
[[ "$got" == "nouveau,cuda-repo,driver,cudnn" ]] && ok || bad "repeated --skip: skipped '$got' ($(head -c 200 $scratch/err))"
expect_exit 0 "repeated --only, profile after it" "$bin" --root "$fixtures/hosts/debian-12" plan --only nouveau --only fabric-manager cv-train --json
got=$(json_get '",".join(s["id"] for s in d["steps"] if s["reason"] != "not in --only")' <$scratch/out)
[[ "$got" == "nouveau,fabric-manager" ]] && ok || bad "repeated --only: ran '$got'"
expect_exit 64 "an unknown id in a repeated --skip" "$bin" plan cv-train --skip nouveau --skip nvidia
grep -q "nvidia" $scratch/err && ok || bad "unknown id in a repeat not named: $(cat $scratch/err)"
# gpuprov help [CMD]
expect_exit 0 "help" "$bin" help
grep -q "^Subcommands:" $scratch/out && ok || bad "gpuprov help shows no commands"
expect_exit 0 "help plan" "$bin" help plan
grep -q -- "--detailed-exitcode" $scratch/out && cmp -s $scratch/out <("$bin" plan --help) && ok || bad "help plan is not plan --help"
expect_exit 64 "help for an unknown command" "$bin" help plna
grep -q "unknown command 'plna'; did you mean 'plan'?" $scratch/err && ok || bad "help plna: $(cat $scratch/err)"
# A mistyped built-in profile name: the nearest built-in, no invented file position.
expect_exit 1 "mistyped built-in" "$bin" --root "$fixtures/hosts/debian-12" plan cv-trian
grep -qx "error: cv-trian: no built-in profile 'cv-trian'; did you mean 'cv-train'? (built-ins: cv-train, nlp-infer, sci-sim; or the path of a YAML file: .*)" $scratch/err && ok || bad "mistyped built-in: $(cat $scratch/err)"
expect_exit 1 "missing profile file" "$bin" --root "$fixtures/hosts/debian-12" plan ./nope.yaml
grep -q "^error: ./nope.yaml: the profile file cannot be read: " $scratch/err && ok || bad "missing file: $(cat $scratch/err)"
# doctor and metrics spell the temperature threshold alike; doctor's older name still works.
expect_exit 0 "doctor --temperature-alert-c in help" "$bin" doctor --help
grep -q -- "--temperature-alert-c" $scratch/out && ok || bad "doctor lacks --temperature-alert-c"
# status: its exit code says how the last run ended.
st=$(mktemp -d)
mkdir -p "$st/var/lib/gpuprov"
printf '{"schema":1,"result":"failed","steps":[]}\n' >"$st/var/lib/gpuprov/state.json"
expect_exit 1 "status after a failed run" "$bin" --root "$st" status
printf '{"schema":1,"result":"reboot-required","steps":[]}\n' >"$st/var/lib/gpuprov/state.json"
expect_exit 3 "status with a reboot pending" "$bin" --root "$st" status
printf '{"schema":1,"result":"done","steps":[]}\n' >"$st/var/lib/gpuprov/state.json"
expect_exit 0 "status after a good run" "$bin" --root "$st" status
# A journal left "running": killed (no gpuprov holds /run/gpuprov.lock) is not success, and a
# run that holds the lock is still going (flock(1) holds it as apply does).
printf '{"schema":1,"result":"running","steps":[]}\n' >"$st/var/lib/gpuprov/state.json"
expect_exit 1 "status after a killed run" "$bin" --root "$st" status
grep -q "result interrupted" $scratch/out && ok || bad "status does not say interrupted: $(cat $scratch/out)"
expect_exit 1 "status --json after a killed run" "$bin" --root "$st" status --json
[[ "$(json_get 'd["result"]' <$scratch/out)" == interrupted ]] && ok || bad "status --json result: $(cat $scratch/out)"
mkdir -p "$st/run"
expect_exit 4 "status while a run holds the lock" flock "$st/run/gpuprov.lock" "$bin" --root "$st" status
grep -q "result running" $scratch/out && ok || bad "status does not say running: $(cat $scratch/out)"
rm -rf "$st"

# Malformed profiles: exit 1 with file:line:col, nothing written.
for f in "$fixtures"/profiles/bad/*.yaml; do
    expect_exit 1 "validate $(basename "$f")" "$bin" profiles validate "$f"
    grep -qE "^[^:]+\.yaml:[0-9]+:[0-9]+: " $scratch/err && ok || bad "$(basename "$f"): no file:line:col in: $(head -c 200 $scratch/err)"
    expect_exit 1 "plan refuses $(basename "$f")" "$bin" plan "$f"
done
for f in "$fixtures"/profiles/good/*.yaml; do
    expect_exit 0 "validate $(basename "$f")" "$bin" profiles validate "$f"
done
for p in cv-train nlp-infer sci-sim; do
    expect_exit 0 "profiles show $p" "$bin" profiles show "$p"
    expect_exit 0 "cloud-init $p" "$bin" cloud-init "$p"
    grep -q "^#cloud-config" $scratch/out && ok || bad "cloud-init $p output"
done
# cloud-init: the README's example (a file extending a built-in) embedded with its chain
# resolved, a pinned download, and the real `cloud-init schema` accepts the document.
ci=$(mktemp -d)
cat >"$ci/my.yaml" <<'PROFILE'
name: my-train
extends: cv-train
host:
  gpus: {count: 8, model: A100, memory_gib: 80, interconnect: nvlink}
  disk: {path: /, free_gib: 500}
steps: {skip: [monitoring]}
PROFILE
expect_exit 64 "cloud-init --install-from without --sha256" "$bin" cloud-init "$ci/my.yaml" --install-from https://example.com/gpuprov
expect_exit 0 "cloud-init of a file extending cv-train" "$bin" cloud-init "$ci/my.yaml" \
    --install-from https://example.com/gpuprov --sha256 "$(printf gpuprov | sha256sum | cut -c1-64)"
cp $scratch/out "$ci/user-data"
if command -v cloud-init >/dev/null; then
    cloud-init schema --config-file "$ci/user-data" >$scratch/schema 2>&1 && ok ||
        bad "cloud-init schema refuses the user-data: $(cat $scratch/schema)"
else
    bad "cloud-init is not installed (scripts/deps.sh --test installs it)"
fi
python3 - "$ci/user-data" "$ci/embedded.yaml" <<'PY' && ok || bad "user-data does not embed the profile and run it"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
files = {f["path"]: f for f in doc["write_files"]}
open(sys.argv[2], "w").write(files["/etc/gpuprov/my-train.yaml"]["content"])
assert files["/etc/gpuprov/gpuprov.sha256"]["content"].split()[1] == "/usr/local/bin/gpuprov.download"
assert len(doc["runcmd"]) == 1, doc["runcmd"]  # one command: its status is the boot's result
run = doc["runcmd"][-1]
assert run[0:2] == ["sh", "-c"] and "/usr/local/bin/gpuprov apply \"$1\" --yes --reboot never" in run[2], run
assert run[3:] == ["gpuprov-apply", "/etc/gpuprov/my-train.yaml", "https://example.com/gpuprov"], run
assert doc["power_state"]["mode"] == "reboot"
assert "/usr/local/bin/gpuprov status" in doc["power_state"]["condition"][2]
assert "/usr/local/bin/gpuprov status" in files["/var/lib/cloud/scripts/per-boot/gpuprov-status"]["content"]
PY
expect_exit 0 "the embedded profile validates on its own" "$bin" profiles validate "$ci/embedded.yaml"
grep -q "my-train" "$ci/embedded.yaml" && ! grep -q "^extends:" "$ci/embedded.yaml" && ok || bad "embedded profile not resolved"
# The generated shell does what it says, run with a stand-in gpuprov that exits with $FAKE_RC:
# runcmd maps exit 3 (reboot required) to success and passes anything else through,
# power_state's condition holds only for 3, the per-boot script reports `status` once a journal
# exists, and a hostile profile path reaches gpuprov as one argument, never as script text.
expect_exit 0 "cloud-init cv-train" "$bin" cloud-init cv-train
mkdir -p "$ci/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/args"\nexit "${FAKE_RC:-0}"\n' "$ci" >"$ci/bin/gpuprov"
chmod +x "$ci/bin/gpuprov"
python3 - $scratch/out "$ci" <<'PY' && ok || bad "cloud-init's generated commands misbehave"
import os, subprocess, sys, yaml
doc, d = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
env = dict(os.environ, PATH=d + "/bin:" + os.environ["PATH"])
def run(argv, rc):
    return subprocess.run(argv, env=dict(env, FAKE_RC=str(rc))).returncode
apply_cmd = doc["runcmd"][-1]
assert [run(apply_cmd, rc) for rc in (0, 1, 2, 3)] == [0, 1, 2, 0]
assert open(d + "/args").read().split("\n")[:2] == ["apply", "cv-train"]
hostile = apply_cmd[:-1] + ["x; touch " + d + "/pwned $(touch " + d + "/pwned2)"]
assert run(hostile, 0) == 0 and not os.path.exists(d + "/pwned") and not os.path.exists(d + "/pwned2")
assert open(d + "/args").read().split("\n")[1] == hostile[-1]
cond = doc["power_state"]["condition"]
assert [run(cond, rc) for rc in (0, 1, 3)] == [1, 1, 0]
script = {f["path"]: f for f in doc["write_files"]}["/var/lib/cloud/scripts/per-boot/gpuprov-status"]
assert script["permissions"] == "0755"
body = script["content"].replace("/var/lib/gpuprov/state.json", d + "/state.json")
open(d + "/per-boot", "w").write(body)
assert run(["sh", d + "/per-boot"], 1) == 0  # no journal yet: the first boot's runcmd reports
open(d + "/state.json", "w").write("{}")
assert [run(["sh", d + "/per-boot"], rc) for rc in (0, 1, 3)] == [0, 1, 3]
assert open(d + "/args").read().split("\n")[0] == "status"
PY
# --install-from: download, checksum, install and apply are one chain, so any failure is the
# boot's failure and never lets an older gpuprov already in the image run apply. Run with
# stand-ins for curl (records its URL, fails with $CURL_RC or writes $CURL_SRC) and for the old
# and new gpuprov, the paths moved under $ci.
printf '#!/bin/sh\necho new >"%s/ran"\nexit "${FAKE_RC:-0}"\n' "$ci" >"$ci/new-gpuprov"
expect_exit 0 "cloud-init --install-from" "$bin" cloud-init cv-train \
    --install-from 'https://example.com/gpuprov?a=$(touch pwned)' --sha256 "$(sha256sum "$ci/new-gpuprov" | cut -c1-64)"
sed -e "s|/usr/local/bin/|$ci/local/|g" -e "s|/etc/gpuprov/|$ci/etc/|g" $scratch/out >"$ci/user-data-dl"
cat >"$ci/bin/curl" <<'CURL'
#!/bin/sh
for a; do [ "$prev" = --output ] && out=$a; prev=$a; done
printf '%s\n' "$a" >"$(dirname "$0")/../url"
[ "${CURL_RC:-0}" -eq 0 ] || exit "$CURL_RC"
cat "$CURL_SRC" >"$out"
CURL
chmod +x "$ci/bin/curl"
python3 - "$ci/user-data-dl" "$ci" <<'PY' && ok || bad "cloud-init --install-from chain misbehaves"
import os, shutil, subprocess, sys, yaml
doc, d = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
os.makedirs(d + "/etc", exist_ok=True)
for f in doc["write_files"]:
    if f["path"].startswith(d + "/etc/"):
        open(f["path"], "w").write(f["content"])
assert len(doc["runcmd"]) == 1, doc["runcmd"]
run_cmd = doc["runcmd"][0]
def attempt(curl_rc=0, src=d + "/new-gpuprov", fake_rc=0):
    os.makedirs(d + "/local", exist_ok=True)
    open(d + "/local/gpuprov", "w").write("#!/bin/sh\necho old >\"%s/ran\"\nexit 0\n" % d)
    os.chmod(d + "/local/gpuprov", 0o755)
    if os.path.exists(d + "/ran"):
        os.remove(d + "/ran")
    env = dict(os.environ, PATH=d + "/bin:" + os.environ["PATH"], CURL_RC=str(curl_rc),
               CURL_SRC=src, FAKE_RC=str(fake_rc))
    rc = subprocess.run(run_cmd, env=env, cwd=d).returncode
    ran = open(d + "/ran").read().strip() if os.path.exists(d + "/ran") else None
    return rc, ran
# A failed download: the boot fails and the old binary in the image never runs.
rc, ran = attempt(curl_rc=22)
assert rc != 0 and ran is None, (rc, ran)
# A download with the wrong checksum: the same, and it is not installed.
open(d + "/tampered", "w").write("#!/bin/sh\necho tampered >\"%s/ran\"\n" % d)
rc, ran = attempt(src=d + "/tampered")
assert rc != 0 and ran is None, (rc, ran)
assert "old" in open(d + "/local/gpuprov").read()
# The pinned binary is installed and runs apply; its exit 3 is this boot's success, 1 its failure.
assert attempt() == (0, "new") and attempt(fake_rc=3) == (0, "new") and attempt(fake_rc=1) == (1, "new")
assert not os.path.exists(d + "/local/gpuprov.download")
# The URL reached curl as one argument, never as script text.
assert open(d + "/url").read().strip() == "https://example.com/gpuprov?a=$(touch pwned)"
assert not os.path.exists(d + "/pwned")
PY
rm -rf "$ci"
# apply without root is refused before anything happens (only meaningful when not root).
if [[ $(id -u) -ne 0 ]]; then
    expect_exit 1 "apply as non-root" "$bin" apply cv-train --yes
fi

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
