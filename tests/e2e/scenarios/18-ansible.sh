#!/usr/bin/env bash
# (r) Fleets on Ansible: the gpuprov collection's module on two hosts (two test roots), run by
# the real ansible-playbook. --check --diff shows the plan and changes nothing; the first run
# reports changed on both hosts, the second changed on none; each host's JSON report reaches
# the controller. A step id typo fails the task as a usage error (exit 64), never "changed".
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
command -v ansible-playbook >/dev/null || die "ansible-playbook missing (apt-get install ansible-core; tests/e2e/DEPS)"
scenario_begin clean
ROOT_A=$ROOT
# The second host: the same preparation as scenario_begin's.
ROOT_B=$(rootfs_new "$SCENARIO-b")
rootfs_prepare_host "$ROOT_B" clean
rootfs_install_gpuprov "$ROOT_B" || scenario_end
mkdir -p "$ROOT_B/etc/gpuprov"
cp "$ROOT_A$PROFILE_IN_ROOT" "$ROOT_B$PROFILE_IN_ROOT"

# The collection where ansible looks for collections, without installing it anywhere.
work=$OUT/ansible
mkdir -p "$work/collections/ansible_collections/gpuprov" "$work/reports"
ln -sfn "$REPO_ROOT/contrib/ansible/gpuprov" "$work/collections/ansible_collections/gpuprov/gpuprov"
exe() { printf '["/usr/sbin/chroot", "%s", "/usr/bin/env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8", "gpuprov"]' "$1"; }
cat >"$work/inventory.yml" <<INV
roots:
  hosts:
    gpu-a: {gpuprov_executable: $(exe "$ROOT_A")}
    gpu-b: {gpuprov_executable: $(exe "$ROOT_B")}
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    report_dir: $work/reports
INV
playbook() { # NAME ARGS...: runs the playbook, output kept as $work/NAME.log
    local name=$1; shift
    ANSIBLE_COLLECTIONS_PATH=$work/collections ANSIBLE_NOCOLOR=1 ANSIBLE_HOST_KEY_CHECKING=0 \
        ANSIBLE_LOCAL_TEMP=$work/tmp ANSIBLE_REMOTE_TEMP=$work/tmp \
        timeout -k 5 300 ansible-playbook -i "$work/inventory.yml" "$E2E_DIR/ansible/site.yml" "$@" \
        >"$work/$name.log" 2>&1
}
recap() { # NAME HOST -> "changed=N failed=N"
    grep -E "^$2 +:" "$work/$1.log" | grep -oE '(changed|failed)=[0-9]+' | paste -sd' '
}

before=$(tree_digest "$ROOT_A" var/lib/dpkg etc)
check "ansible-playbook --check --diff" playbook check --check --diff
assert_eq "check mode: gpu-a would change" "changed=1 failed=0" "$(recap check gpu-a)"
assert_eq "check mode: gpu-b would change" "changed=1 failed=0" "$(recap check gpu-b)"
assert_grep "check mode shows the plan's packages as the diff" '^\+install cuda-drivers-550 ' "$work/check.log"
assert_eq "check mode changed nothing" "$before" "$(tree_digest "$ROOT_A" var/lib/dpkg etc)"

check "ansible-playbook, first run" playbook first
assert_eq "first run: gpu-a changed" "changed=1 failed=0" "$(recap first gpu-a)"
assert_eq "first run: gpu-b changed" "changed=1 failed=0" "$(recap first gpu-b)"
ROOT=$ROOT_B assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
ROOT=$ROOT_A assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
check "gpu-a's report reached the controller" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1])); sys.exit(0 if d["result"] == "done" else 1)' "$work/reports/gpu-a.json"

check "ansible-playbook, second run" playbook second
assert_eq "second run: gpu-a unchanged" "changed=0 failed=0" "$(recap second gpu-a)"
assert_eq "second run: gpu-b unchanged" "changed=0 failed=0" "$(recap second gpu-b)"
# A typo in a step id is a usage error (exit 64), which the module fails as such in check mode:
# never "changed", as exit 2 (changes pending) once made it look.
ANSIBLE_COLLECTIONS_PATH=$work/collections ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP=$work/tmp \
    ANSIBLE_REMOTE_TEMP=$work/tmp timeout -k 5 300 ansible -i "$work/inventory.yml" gpu-a --check \
    -m gpuprov.gpuprov.gpuprov \
    -a '{"profile": "/etc/gpuprov/e2e.yaml", "only": ["nvidia"], "executable": "{{ gpuprov_executable }}"}' \
    >"$work/typo.log" 2>&1 && fail "a step id typo did not fail the task" || pass "a step id typo fails the task"
assert_grep "the module names it a usage error, not pending changes" \
    "refused the command line \(exit 64, a usage error\).*unknown step id 'nvidia'" "$work/typo.log"
for n in check first second typo; do cp "$work/$n.log" "$OUT/ansible-$n.log" 2>/dev/null || true; done
ROOT=$ROOT_B kill_procs_in_root || true
rootfs_remove "$ROOT_B"
scenario_end
