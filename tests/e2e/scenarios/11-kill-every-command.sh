#!/usr/bin/env bash
# e2e-timeout: 900
# (k) SIGKILL at every command boundary. A counting run learns how many commands a fresh apply
# starts; then for N = 1..all, on a fresh copy of the same host, apply is SIGKILLed just before
# its Nth command (lib/killshim), and a plain `apply --yes` must converge: exit 0, verify passes,
# dpkg --audit is clean, no temp files (a planted half-written one is removed, a look-alike
# that is not gpuprov's stays), apt's lists hold both repositories, the journal says done and
# plan --detailed-exitcode is 0.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/killshim.sh
source "$E2E_DIR/lib/killshim.sh"
scenario_begin clean

TEMPLATE=$ROOT
killshim_install "$TEMPLATE"
ROOTS=$E2E_WORK/roots

# fresh_copy NAME: this host, before any apply (0.2 s with reflinks, a few s without).
fresh_copy() {
    local dst="$ROOTS/$SCENARIO-$1"
    rm -rf "$dst"
    cp -a --reflink=auto "$TEMPLATE" "$dst"
    printf '%s\n' "$dst"
}

# The apt lists files of a repository whose URI contains PATTERN (apt's mangled names).
lists_has() { find "$ROOT/var/lib/apt/lists" -maxdepth 1 -name "*$1*_$2" | grep -q .; }

# --- counting run ---------------------------------------------------------------------------------
ROOT=$(fresh_copy count)
killshim_arm "$ROOT" count
t0=$SECONDS
gp apply "$PROFILE_IN_ROOT" --yes
killshim_disarm "$ROOT"
expect_rc "counting run: a fresh apply through the wrappers" 0
TOTAL=$(killshim_count "$ROOT")
log "a fresh apply starts $TOTAL commands (in $((SECONDS - t0)) s):"
killshim_log "$ROOT" | sed 's/^/    /' >&2
killshim_log "$ROOT" >"$OUT/commands.txt"
if ((TOTAL > 5)); then pass "a fresh apply starts more than 5 commands ($TOTAL)"; else
    fail "a fresh apply starts only $TOTAL commands: the wrappers are not in gpuprov's PATH"
    scenario_end
fi
ppids=$(killshim_log "$ROOT" | awk '{print $2}' | sort -u | wc -l)
assert_eq "every counted command was started by the one gpuprov process" 1 "$ppids"
for want in 'apt-get update' 'update-initramfs' 'apt-get install' 'systemctl enable'; do
    if grep -q " $want" "$OUT/commands.txt"; then pass "counted: $want"; else fail "never counted: $want"; fi
done
rootfs_remove "$ROOT"

# --- kill before each command, then a plain re-run ------------------------------------------------
for ((N = 1; N <= TOTAL; N++)); do
    ROOT=$(fresh_copy "n$N")
    failures_before=$E2E_FAILURES
    killshim_arm "$ROOT" "kill:$N"
    gp apply "$PROFILE_IN_ROOT" --yes
    killshim_disarm "$ROOT"
    killed=$(killshim_killed "$ROOT")
    kill_procs_in_root || fail "N=$N: processes survived"
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
    gp apply "$PROFILE_IN_ROOT" --yes
    killshim_disarm "$ROOT"
    expect_rc "N=$N: re-run converges" 0
    log "N=$N: the re-run started $(killshim_count "$ROOT") commands"
    gp verify "$PROFILE_IN_ROOT"
    expect_rc "N=$N: verify" 0
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
    gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
    expect_rc "N=$N: plan on the converged host has nothing to do" 0
    if ((E2E_FAILURES == failures_before)) || [[ "${E2E_KEEP:-0}" != 1 ]]; then rootfs_remove "$ROOT"; fi
done
ROOT=$TEMPLATE
scenario_end
