#!/usr/bin/env bash
# The docs' examples work as a newcomer would copy them (issue 20 item 6):
# - every shell example line in a fenced block of README.md and docs/*.md that starts with
#   `gpuprov` (or `sudo gpuprov`, `$ gpuprov`) runs against the built binary from the repository
#   root, reading a fixture host (--root): no usage error, no profile that cannot be found;
# - every ```yaml block there that is a profile (starts with `name:`) validates;
# - every profile in profiles/examples/ validates, and a doc that shows one shows it verbatim.
# Usage: doc_examples.sh BUILD_DIR/gpuprov REPO_ROOT
set -uo pipefail
bin=$1
repo=$2
. "$(dirname "$0")/lib.sh"
cd "$repo" || exit 1
# A copy: an example that writes a file (verify --junit) writes it under the root it reads.
cp -a "$repo/tests/fixtures/hosts/ubuntu-22.04" "$scratch/host"
host=$scratch/host

python3 - "$scratch" README.md docs/*.md <<'PY'
import os, re, sys
out = sys.argv[1]
n_cmd = n_yaml = 0
with open(os.path.join(out, "commands.txt"), "w") as cmds:
    for path in sys.argv[2:]:
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"^```([a-z]*)\n(.*?)^```", text, re.S | re.M):
            lang, body = m.group(1), m.group(2)
            line = text[: m.start()].count("\n") + 2
            if lang == "yaml" and re.match(r"name:", body):
                n_yaml += 1
                with open(os.path.join(out, f"profile-{n_yaml}.yaml"), "w") as f:
                    f.write(body)
                with open(os.path.join(out, f"profile-{n_yaml}.where"), "w") as f:
                    f.write(f"{path}:{line}")
            if lang in ("", "sh", "bash", "console", "shell"):
                for i, l in enumerate(body.split("\n")):
                    l = re.sub(r"^\$ ", "", l.strip())
                    if re.match(r"(sudo )?gpuprov ", l):
                        # The command alone: no redirection, pipe or comment after it.
                        l = re.split(r"\s[>|#]|\s2>", l)[0].strip()
                        cmds.write(f"{path}:{line + i}\t{l}\n")
                        n_cmd += 1
print(f"{n_cmd} commands, {n_yaml} profiles", file=sys.stderr)
PY

# Profiles in the docs validate (`extends:` a built-in resolves anywhere).
for p in "$scratch"/profile-*.yaml; do
    [[ -e "$p" ]] || continue
    where=$(cat "${p%.yaml}.where")
    if "$bin" profiles validate "$p" >$scratch/out 2>&1; then ok; else bad "$where: the profile does not validate: $(head -c 300 $scratch/out)"; fi
done
[[ -n "$(ls "$scratch"/profile-*.yaml 2>/dev/null)" ]] && ok || bad "no profile example found in the docs"

# Shell examples run. apply under --root is refused by design (it would change this host), so
# an apply example is run as the plan of the same profile and filters.
while IFS=$'\t' read -r where cmdline; do
    read -r -a words <<<"$cmdline"
    [[ "${words[0]}" == sudo ]] && words=("${words[@]:1}")
    words=("${words[@]:1}") # gpuprov itself
    # A saved plan cannot be made for a fixture image (plan --out refuses --root: no transaction
    # is resolved there); e2e 48 runs both for real. Here: plan without --out, and apply --plan
    # must at least be an option apply has.
    if [[ "${words[0]}" == apply && " ${words[*]} " == *" --plan "* ]]; then
        "$bin" apply --help | grep -q -- "--plan FILE" && ok || bad "$where: apply has no --plan"
        continue
    fi
    # bundle under --root is refused by design (apt would resolve the closure for this host);
    # e2e 56 runs it for real. Here: the options the example uses must be bundle's.
    if [[ "${words[0]}" == bundle ]]; then
        "$bin" bundle --help | grep -q -- "--for OS\[/ARCH\]" && ok || bad "$where: bundle has no --for"
        continue
    fi
    # upgrade under --root is refused by design (it drains the node and applies on this host);
    # e2e 60 runs it for real. Here: every option the example uses must be upgrade's.
    if [[ "${words[0]}" == upgrade ]]; then
        help=$("$bin" upgrade --help)
        unknown=
        for w in "${words[@]:1}"; do
            [[ "$w" == -* ]] && ! grep -q -- "${w%%=*}" <<<"$help" && unknown+=" $w"
        done
        [[ -z "$unknown" ]] && ok || bad "$where: upgrade has no$unknown"
        continue
    fi
    kept=()
    for ((i = 0; i < ${#words[@]}; i++)); do
        if [[ "${words[i]}" == --out ]]; then ((i++)); else kept+=("${words[i]}"); fi
    done
    words=("${kept[@]}")
    if [[ "${words[0]}" == apply ]]; then
        kept=(plan)
        for ((i = 1; i < ${#words[@]}; i++)); do
            case "${words[i]}" in
            -y | --yes | --allow-untrusted | --dry-run) ;;
            --reboot) ((i++)) ;;
            *) kept+=("${words[i]}") ;;
            esac
        done
        words=("${kept[@]}")
    fi
    "$bin" --root "$host" "${words[@]}" >$scratch/out 2>$scratch/err
    rc=$?
    if [[ $rc == 64 ]] || grep -q "cannot be read\|no built-in profile" $scratch/err; then
        bad "$where: '$cmdline' (exit $rc): $(head -c 300 $scratch/err)"
    else
        ok
    fi
done <"$scratch/commands.txt"
[[ -s "$scratch/commands.txt" ]] && ok || bad "no shell example found in the docs"

# profiles/examples/: each validates; a doc that shows one (same name) shows it verbatim.
for f in profiles/examples/*.yaml; do
    "$bin" profiles validate "$f" >$scratch/out 2>&1 && ok || bad "$f does not validate: $(head -c 300 $scratch/out)"
    name=$(sed -n 's/^name: *//p' "$f")
    for p in "$scratch"/profile-*.yaml; do
        [[ -e "$p" ]] || continue
        if [[ "$(sed -n 's/^name: *//p' "$p")" == "$name" ]]; then
            grep -v '^#' "$f" | cmp -s - "$p" && ok || bad "$(cat "${p%.yaml}.where") shows '$name' unlike $f: $(grep -v '^#' "$f" | diff - "$p" | head -5)"
        fi
    done
done
# The documented Kubernetes node prints its manifests.
"$bin" k8s-manifests profiles/examples/k8s-gpu-node.yaml >$scratch/out 2>$scratch/err &&
    grep -q "kind: RuntimeClass" $scratch/out && ok || bad "k8s-manifests of the example: $(head -c 300 $scratch/err)"

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
