#!/usr/bin/env bash
# (r) Fleets on Ansible: the gpuprov collection, built with ansible-galaxy and installed offline,
# its sample playbook run by FQCN (gpuprov.gpuprov.gpu_fleet) by the real ansible-playbook on two
# hosts (two test roots). --check --diff shows the plan, the nouveau blacklist as the plan's
# unified diff, and changes nothing; the first run (with --diff) reports changed on both hosts and
# shows the same diff, the second changed on none and no diff; each host's JSON report reaches
# the controller. A step id typo fails the task naming the allowed ids, never "changed".
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

# The collection as a user gets it: built into a tarball, installed from it offline into a
# private collections path.
work=$OUT/ansible
mkdir -p "$work/dist" "$work/collections"
ansible_env=(env ANSIBLE_COLLECTIONS_PATH="$work/collections" ANSIBLE_NOCOLOR=1
    ANSIBLE_HOST_KEY_CHECKING=0 ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_REMOTE_TEMP="$work/tmp")
check "ansible-galaxy collection build" \
    "${ansible_env[@]}" ansible-galaxy collection build "$REPO_ROOT/contrib/ansible/gpuprov" --output-path "$work/dist"
check "ansible-galaxy collection install --offline" "${ansible_env[@]}" ansible-galaxy collection install --offline \
    -p "$work/collections" "$work/dist"/gpuprov-gpuprov-*.tar.gz
assert_file "the installed collection has meta/runtime.yml" \
    "$work/collections/ansible_collections/gpuprov/gpuprov/meta/runtime.yml"
exe() { printf '["/usr/sbin/chroot", "%s", "/usr/bin/env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8", "gpuprov"]' "$1"; }
# gpu_nodes is the playbook's default group. The play's become is off here (the suite runs as
# root already): ansible_become, a variable, overrides the play keyword.
cat >"$work/inventory.yml" <<INV
gpu_nodes:
  hosts:
    gpu-a: {gpuprov_executable: $(exe "$ROOT_A")}
    gpu-b: {gpuprov_executable: $(exe "$ROOT_B")}
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    ansible_become: false
    gpuprov_profile: $PROFILE_IN_ROOT
    gpu_report_dir: $work/reports
INV
run_playbook() { # PLAYBOOK NAME ARGS...: a collection playbook by its FQCN, output kept as $work/NAME.log
    local book=$1 name=$2; shift 2
    "${ansible_env[@]}" timeout -k 5 300 ansible-playbook -i "$work/inventory.yml" \
        "gpuprov.gpuprov.$book" "$@" >"$work/$name.log" 2>&1
}
playbook() { # NAME ARGS...: the sample playbook gpu_fleet
    # Both hosts in one batch (the default 25% makes two batches of one, twice the time).
    local name=$1; shift
    run_playbook gpu_fleet "$name" -e gpu_batch=2 "$@"
}
recap() { # NAME HOST -> "changed=N failed=N"
    grep -E "^$2 +:" "$work/$1.log" | grep -oE '(changed|failed)=[0-9]+' | paste -sd' '
}

before=$(tree_digest "$ROOT_A" var/lib/dpkg etc)
check "ansible-playbook gpuprov.gpuprov.gpu_fleet --check --diff" playbook check --check --diff
assert_eq "check mode: gpu-a would change" "changed=1 failed=0" "$(recap check gpu-a)"
assert_eq "check mode: gpu-b would change" "changed=1 failed=0" "$(recap check gpu-b)"
assert_grep "check mode shows the plan's packages as the diff" '^\+install cuda-drivers-550 ' "$work/check.log"
# The plan's own unified diff of the file, not only its name: header, hunk and content.
assert_grep "check mode shows the nouveau blacklist's unified diff" \
    '^\+\+\+ b/etc/modprobe.d/blacklist-nouveau.conf$' "$work/check.log"
assert_grep "the diff has the blacklist's hunk" '^@@ -0,0 \+1,3 @@$' "$work/check.log"
assert_grep "the diff has the blacklist's content" '^\+blacklist nouveau$' "$work/check.log"
assert_eq "check mode changed nothing" "$before" "$(tree_digest "$ROOT_A" var/lib/dpkg etc)"

check "ansible-playbook gpuprov.gpuprov.gpu_fleet --diff, first run" playbook first --diff
assert_eq "first run: gpu-a changed" "changed=1 failed=0" "$(recap first gpu-a)"
assert_eq "first run: gpu-b changed" "changed=1 failed=0" "$(recap first gpu-b)"
assert_grep "the first run shows the blacklist's diff too" \
    '^\+options nouveau modeset=0$' "$work/first.log"
ROOT=$ROOT_B assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
ROOT=$ROOT_A assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
# What check mode's diff showed (gpu-a's, the first) is what the run wrote.
shown() { awk '/^\+\+\+ b\/etc\/modprobe.d\/blacklist-nouveau.conf$/ { f = 1; next }
    f && /^@@/ { next }  f && /^\+/ { print substr($0, 2); next }  f { exit }' "$work/check.log"; }
check "the blacklist the diff showed is the file written" \
    cmp -s "$ROOT_A/etc/modprobe.d/blacklist-nouveau.conf" <(shown)
check "gpu-a's report reached the controller" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1])); sys.exit(0 if d["result"] == "done" else 1)' "$work/reports/gpu-a.json"

check "ansible-playbook gpuprov.gpuprov.gpu_fleet --diff, second run" playbook second --diff
assert_eq "second run: gpu-a unchanged" "changed=0 failed=0" "$(recap second gpu-a)"
assert_eq "second run: gpu-b unchanged" "changed=0 failed=0" "$(recap second gpu-b)"
check "a converged host shows no diff" bash -c '! grep -q blacklist-nouveau.conf "$1"' _ "$work/second.log"
# A typo in a step id fails the task before gpuprov runs (the module's choices are the binary's
# step ids), naming the allowed ids: never "changed", as exit 2 (changes pending) once made it look.
"${ansible_env[@]}" timeout -k 5 300 ansible -i "$work/inventory.yml" gpu-a --check \
    -m gpuprov.gpuprov.gpuprov \
    -a '{"profile": "/etc/gpuprov/e2e.yaml", "only": ["nvidia"], "executable": "{{ gpuprov_executable }}"}' \
    >"$work/typo.log" 2>&1 && fail "a step id typo did not fail the task" || pass "a step id typo fails the task"
assert_grep "the module names the allowed step ids" \
    "value of only must be one or more of: preflight, nouveau, cuda-repo, .*Got no match for: nvidia" "$work/typo.log"

# gpu_upgrade (docs/fleet.md), run for real in waves of one host. Neither host is known to a
# scheduler and both are converged, so each `gpuprov upgrade` applies nothing; no reboot (the
# play's reboot and wait need a real machine). Without the smoke tests both pass and their
# records say done. With them (the roots run no GPU code, so smoke.cuda fails) the first wave's
# host fails, and max_fail_percentage: 0 keeps the play from reaching the second.
upgrade_play() { # NAME ARGS...
    local name=$1; shift
    run_playbook gpu_upgrade "$name" -e gpu_wave=1 -e gpu_job_wait=10 "$@"
}
check "ansible-playbook gpuprov.gpuprov.gpu_upgrade -e gpu_smoke=false" upgrade_play upgrade -e gpu_smoke=false
assert_eq "upgrade wave 1: gpu-a upgraded" "changed=1 failed=0" "$(recap upgrade gpu-a)"
assert_eq "upgrade wave 2: gpu-b upgraded" "changed=1 failed=0" "$(recap upgrade gpu-b)"
assert_eq "gpu-a's record: done" "done" "$(upgrade_phase "$ROOT_A")"
assert_eq "gpu-b's record: done" "done" "$(upgrade_phase "$ROOT_B")"
assert_grep "the playbook passed --no-smoke (the record keeps it)" '"smoke": false' "$ROOT_A/var/lib/gpuprov/upgrade.json"
b_record=$(sha256sum <"$ROOT_B/var/lib/gpuprov/upgrade.json")
if upgrade_play upgrade-fails; then fail "the upgrade play passed with a failing smoke test"; else
    pass "the upgrade play fails when a host's smoke test fails"; fi
assert_eq "wave 1: gpu-a failed" "failed=1" "$(recap upgrade-fails gpu-a | grep -o 'failed=[0-9]*')"
check "wave 2 never ran: gpu-b is not in the recap's work" bash -c \
    "! grep -Eq '^gpu-b +:.*changed=[1-9]' '$work/upgrade-fails.log'"
assert_eq "gpu-a's record: failed, left drained" "failed" "$(upgrade_phase "$ROOT_A")"
assert_eq "gpu-b was not upgraded again (its record unchanged)" "$b_record" "$(sha256sum <"$ROOT_B/var/lib/gpuprov/upgrade.json")"
for n in check first second typo upgrade upgrade-fails; do cp "$work/$n.log" "$OUT/ansible-$n.log" 2>/dev/null || true; done
ROOT=$ROOT_B kill_procs_in_root || true
rootfs_remove "$ROOT_B"
scenario_end
