#!/usr/bin/env bash
# e2e-timeout: 2700
# (k) SIGKILL at every command boundary. A counting run learns how many commands a fresh apply
# starts; then for N = 1..all, on a fresh copy of the same host, apply is SIGKILLed just before
# its Nth command (lib/killshim), and a plain `apply --yes` must converge: exit 0 with its own
# final verify run and passed, dpkg --audit is clean, no temp files (a planted half-written one
# is removed, a look-alike that is not gpuprov's stays), apt's lists hold both repositories, the
# journal says done and plan --detailed-exitcode is 0.
#
# Cost: each N is about one fresh apply (the killed part plus the re-run that finishes it), so
# the whole is about (commands + 1) applies. Measured on the 2-core CI machine while another e2e
# run shared it (27 commands): 848 s, of which the applies 439 s, removing each copy 187 s,
# a separate `verify` per N 79 s, copying the host 54 s. The copies now share the 130 MB
# binary by hard link and live on a tmpfs; the separate verify repeated what the re-run's own
# final verify had just done, and the journal now proves that one ran and passed. Then, with
# three compilers running beside it: 604 s, the applies 509 s, copies 36 s, removals 4 s. The
# deadline above is about three times the whole on such a busy machine; the log ends with
# where the time went. With 35 commands, 11 kill points left the disk the point before them had
# left (read-only probes in a row) and run once: 24 applies instead of 35 (1579 s on a machine
# with four compilers beside it, load 10-15).
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/killshim.sh
source "$E2E_DIR/lib/killshim.sh"
scenario_begin clean

TEMPLATE=$ROOT
killshim_install "$TEMPLATE"
killshim_copies_begin "$TEMPLATE" 11

# fresh_copy NAME: this host, before any apply.
fresh_copy() { killshim_copy "$TEMPLATE" "$1"; }

# Where the time goes, summed over every N and logged at the end (EPOCHREALTIME: sub-second).
declare -A SPENT=()

# The step's status in the journal of the root's last run.
journal_step() {
    "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print({s["id"]: s["status"] for s in d.get("steps", [])}.get(sys.argv[2], "<none>"))' "$ROOT/var/lib/gpuprov/state.json" "$1" 2>/dev/null || echo "<no journal>"
}

# The apt lists files of a repository whose URI contains PATTERN (apt's mangled names).
lists_has() { find "$ROOT/var/lib/apt/lists" -maxdepth 1 -name "*$1*_$2" | grep -q .; }

# --- counting run ---------------------------------------------------------------------------------
ROOT=$(fresh_copy count)
killshim_arm "$ROOT" states
t0=$SECONDS
gp apply "$PROFILE_IN_ROOT" --yes
killshim_disarm "$ROOT"
expect_rc "counting run: a fresh apply through the wrappers" 0
TOTAL=$(killshim_count "$ROOT")
log "a fresh apply starts $TOTAL commands (in $((SECONDS - t0)) s; the $TOTAL kills below cost about one such apply each):"
killshim_log "$ROOT" | sed 's/^/    /' >&2
killshim_log "$ROOT" >"$OUT/commands.txt"
if ((TOTAL > 5)); then pass "a fresh apply starts more than 5 commands ($TOTAL)"; else
    fail "a fresh apply starts only $TOTAL commands: the wrappers are not in gpuprov's PATH"
    scenario_end
fi
# What a kill before each command would leave on disk (lib/killshim mode "states"). A kill
# before N leaves the disk a kill before N-1 leaves when command N-1, and whatever gpuprov did
# between the two, changed no file: then N's re-run starts from the same disk as N-1's and is
# the same experiment, so it runs once. Read-only probes in a row (dkms status, nvidia-smi
# queries, dpkg-query) are most of these.
declare -A STATE=()
while read -r n fp; do STATE[$n]=$fp; done < <(killshim_states "$ROOT")
assert_eq "a disk fingerprint before every counted command" "$TOTAL" "${#STATE[@]}"
cp "$ROOT/var/log/gpuprov.log" "$OUT/count-run-gpuprov.log" 2>/dev/null || true
ppids=$(killshim_log "$ROOT" | awk '{print $2}' | sort -u | wc -l)
assert_eq "every counted command was started by the one gpuprov process" 1 "$ppids"
for want in 'apt-get update' 'update-initramfs' 'apt-get install' 'systemctl enable'; do
    if grep -q " $want" "$OUT/commands.txt"; then pass "counted: $want"; else fail "never counted: $want"; fi
done
rootfs_remove "$ROOT"

# --- kill before each command, then a plain re-run ------------------------------------------------
SAME=()
for ((N = 1; N <= TOTAL; N++)); do
    if ((N > 1)) && [[ "${STATE[$N]}" == "${STATE[$((N - 1))]}" ]]; then
        SAME+=("$N")
        log "N=$N/$TOTAL: a kill here leaves the disk a kill before $((N - 1)) left (same fingerprint): already run"
        continue
    fi
    t0=$EPOCHREALTIME
    ROOT=$(fresh_copy "n$N")
    SPENT[copy]=$(awk -v a="${SPENT[copy]:-0}" -v t0="$t0" -v t1="$EPOCHREALTIME" 'BEGIN {printf "%.1f", a + t1 - t0}')
    failures_before=$E2E_FAILURES
    killshim_arm "$ROOT" "kill:$N"
    timed apply gp apply "$PROFILE_IN_ROOT" --yes
    killshim_disarm "$ROOT"
    killed=$(killshim_killed "$ROOT")
    timed checks kill_procs_in_root || fail "N=$N: processes survived"
    if [[ -z "$killed" ]]; then
        fail "N=$N: apply exited $GP_RC before its ${N}th command (the count is not stable?)"
        continue
    fi
    log "N=$N/$TOTAL: killed before: ${killed#* }"
    assert_eq "N=$N: the killed apply died of SIGKILL" 137 "$GP_RC"

    # Half-written files as a kill inside write_file_atomic leaves them, and a look-alike.
    planted=(etc/apt/sources.list.d/gpuprov-cuda.sources.gpuprov-tmp-k1LLed
        etc/systemd/system/gpuprov-metrics.timer.gpuprov-tmp-Zz9Yy8)
    for p in "${planted[@]}"; do mkdir -p "$(dirname "$ROOT/$p")"; printf 'half' >"$ROOT/$p"; done
    decoy=$ROOT/etc/apt/sources.list.d/admin-notes.gpuprov-tmp-keep
    printf 'not gpuprov'"'"'s\n' >"$decoy"

    killshim_arm "$ROOT" count # logs what the re-run starts; kills nothing
    timed apply gp apply "$PROFILE_IN_ROOT" --yes
    killshim_disarm "$ROOT"
    expect_rc "N=$N: re-run converges" 0
    log "N=$N: the re-run started $(killshim_count "$ROOT") commands"
    t0=$EPOCHREALTIME
    # The last run was killed, so the re-run's final verify always runs (never "satisfied"
    # from the journal): done means every step's checks ran now and passed.
    assert_eq "N=$N: the re-run's own final verify ran and passed" done "$(journal_step verify)"
    assert_eq "N=$N: dpkg --audit is empty" "" "$(dpkg_audit)"
    for p in "${planted[@]}"; do assert_no_file "N=$N: leftover $p removed" "$ROOT/$p"; done
    assert_file "N=$N: a look-alike that is not gpuprov's stays" "$decoy"
    rm -f "$decoy"
    assert_no_tmp_files
    if lists_has compute_cuda_repos_debian12 InRelease && lists_has compute_cuda_repos_debian12 Packages; then
        pass "N=$N: apt's lists hold the cuda repository"
    else fail "N=$N: apt's lists lack the cuda repository: $(find "$ROOT/var/lib/apt/lists" -maxdepth 1 -type f -printf '%f ')"; fi
    if lists_has libnvidia-container InRelease; then pass "N=$N: apt's lists hold the container-toolkit repository"
    else fail "N=$N: apt's lists lack the container-toolkit repository"; fi
    assert_eq "N=$N: journal result" "done" "$(journal_result)"
    SPENT[checks]=$(awk -v a="${SPENT[checks]:-0}" -v t0="$t0" -v t1="$EPOCHREALTIME" 'BEGIN {printf "%.1f", a + t1 - t0}')
    timed plan gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
    expect_rc "N=$N: plan on the converged host has nothing to do" 0
    if ((E2E_FAILURES == failures_before)) || [[ "${E2E_KEEP:-0}" != 1 ]]; then timed remove rootfs_remove "$ROOT"; fi
done
ran=$((TOTAL - ${#SAME[@]}))
log "$ran distinct kill points of $TOTAL run; the same disk as the one before: ${SAME[*]:-none}"
# Each write gpuprov makes between commands, and every install, is a new disk: far more than
# half the points must differ, or the fingerprint is blind (a broken find would make them all
# equal and skip everything).
check "most kill points leave a disk of their own ($ran of $TOTAL)" test $((ran * 2)) -gt "$TOTAL"
log "where $ran kills went (s): $(for p in apply copy remove plan checks; do printf '%s %s, ' "$p" "${SPENT[$p]:-0}"; done)"
ROOT=$TEMPLATE
killshim_copies_end
scenario_end
