#!/usr/bin/env bash
# e2e-timeout: 1800
# (45) Ubuntu 24.04, the recorded 2026 graph (nvidia-2026/, ubuntu2404 slug; 620 published): the
# driver branch changes across NVIDIA's two apt schemes, 580 -> 595 (suffixed names and holds ->
# unsuffixed names under nvidia-driver-pinning-595) and 595 -> 580 (a downgrade back: the pin
# removed, suffixed names installed and held), on cv-train (open flavour, hold: true).
# Per direction, on a root that gpuprov brought to the source branch (prepared once):
# - the plan shows the change exactly: the pin swap, every installed driver package of the old
#   branch removed at its version (owned) or moved to the new branch, the new branch's installs,
#   the holds released or added;
# - apply (then the reboot and the resume unit, as 14) converges: verify 0, the next plan empty,
#   every driver package at the target branch's newest build, the right lock (580: the closure
#   held, no pin; 595: nvidia-driver-pinning-595 and its pin file, no hold), `apt-get -s
#   dist-upgrade` moves no driver package;
# - for every command N the change starts (lib/killshim counts them on a copy of the source root):
#   a fresh copy, SIGKILL before command N, a plain re-run (plus reboot and resume when it asks)
#   converges to the same end state (every package, version, hold, pinning package, pin file).
# Then a profile whose closure crosses branches is blocked at plan, naming the package, its
# version and the dependency that pulled it, with nothing on the host changed: 580 against a
# mirror that keeps only the newest build of each package (reprepro's one version per name;
# the mirror's nvidia-2026-newest/ tree), where nvidia-compute-utils-580's floor-only
# `nvidia-persistenced (>= 580.159.04)` can only be met by 620's.
# Cost (the log ends with a "time:" line), measured on the 2-core machine while a unit-test
# build shared it: the default kill set (E2E_45_KILLS=transactions, then 3 + 2 kills) 579 s in
# all, 580 -> 595 407 s (its fresh 580 apply 73 s), 595 -> 580 156 s, the blocked plan 15 s; with
# the pinning package's purge (3 + 3 kills) 136 s on a quieter machine (580 -> 595 78 s, 595 ->
# 580 53 s); `changing`, the default since, 9 + 9 kills, 185 s on a quiet machine. Every N (E2E_45_KILLS=every, then 22 + 18 kills, now 22 + 19) cost 2036 s for
# 580 -> 595 alone with two e2e runs and four compilers beside it; `changing` (then 9 + 8, now
# 9 + 9) 893 s for 595 -> 580 alone under the same load. Each
# kill costs about one change (the killed part, the re-run, the reboot and resume): ~65-80 s.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
# shellcheck source=lib/killshim.sh
source "$E2E_DIR/lib/killshim.sh"
scenario_begin clean
T_START=$SECONDS

rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/hosts/ubuntu-24.04/etc/os-release" "$ROOT/etc/os-release"
TEMPLATE=$ROOT
OUT_ALL=$OUT
for b in 580 595; do
    printf 'name: e2e-%s\nextends: %s\ndriver: {branch: "%s"}\n' "$b" "$PROFILE_IN_ROOT" "$b" \
        >"$TEMPLATE/etc/gpuprov/e2e-$b.yaml"
done
killshim_install "$TEMPLATE"

# Copies on a tmpfs of their own, the binary hard-linked into each (lib/killshim.sh, as 11).
killshim_copies_begin "$TEMPLATE" 45
copy_of() { killshim_copy "$@"; } # copy_of SRC NAME
remove_copy() {
    kill_procs_in_root || true
    if [[ "${E2E_KEEP:-0}" != 1 ]]; then rm -rf "$1"; fi
}

declare -A SPENT=()

# shellcheck source=lib/driver_graph.sh
source "$E2E_DIR/lib/driver_graph.sh" # DRIVER_RE, NOT_DRIVER_RE
# driver_state: "name version [held]" of every installed NVIDIA driver package, pinning packages included.
driver_state() {
    local held
    held=$(holds | sort)
    # shellcheck disable=SC2016 # dpkg-query format
    in_root "$ROOT" 30 dpkg-query -W -f='${Status}\t${Package} ${Version}\n' 2>/dev/null |
        awk -F'\t' '$1 ~ /^(install|hold) ok installed$/ {print $2}' |
        grep -E "$DRIVER_RE" | grep -Ev "$NOT_DRIVER_RE" | sort |
        awk -v held="$held" 'BEGIN {n = split(held, h, "\n"); for (i = 1; i <= n; i++) H[h[i]] = 1}
            {print $1, $2, (($1 in H) ? "held" : "")}' || true
}
# end_state: what "converged" means here, compared across every run of a direction.
end_state() {
    driver_state
    printf 'pin-file %s\n' "$(sha256sum 2>/dev/null <"$ROOT/etc/apt/preferences.d/nvidia-driver-pin" | cut -c1-16 || echo none)"
    printf 'module %s\n' "$(head -n 1 "$ROOT/proc/driver/nvidia/version" 2>/dev/null | grep -o '[0-9]\{3\}\.[0-9.]*' | head -n 1 || echo none)"
}

# finish_change NAME PROFILE: after an apply that exited 3 (reboot-required), the reboot and the
# resume unit's own ExecStart; GP_RC is the resumed run's.
finish_change() {
    local name=$1 execstart argv
    rootfs_reboot "$ROOT"
    execstart=$(sed -n 's/^ExecStart=//p' "$ROOT/etc/systemd/system/gpuprov-resume.service" 2>/dev/null | head -n 1)
    if [[ -z "$execstart" ]]; then
        fail "$name: reboot-required but no resume unit"
        GP_RC=none
        return 0
    fi
    read -r -a argv <<<"$execstart"
    timed resume gp "${argv[@]:1}"
}

# check_target NAME B REV: the converged host at branch B (REV its newest build's revision).
check_target() {
    local name=$1 b=$2 rev=$3 state pins held
    state=$(driver_state)
    check "$name: more than 10 driver packages installed" test "$(grep -cv '^nvidia-driver-pinning' <<<"$state")" -gt 10
    assert_eq "$name: every driver package is at $rev" "" \
        "$(grep -v '^nvidia-driver-pinning' <<<"$state" | awk -v r="$rev" '$2 != r' || true)"
    pins=$(awk '/^nvidia-driver-pinning/ {print $1, $2}' <<<"$state")
    held=$(awk '$3 == "held" {print $1}' <<<"$state")
    if [[ $b == 580 ]]; then
        assert_eq "$name: no pinning package" "" "$pins"
        assert_no_file "$name: no pin file" "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
        assert_eq "$name: every driver package is held" "" "$(awk '$3 != "held"' <<<"$state")"
        assert_pkg nvidia-open-580 "$rev"
        assert_no_pkg nvidia-open
    else
        assert_eq "$name: the one pinning package is nvidia-driver-pinning-595" "nvidia-driver-pinning-595 595-1ubuntu1" "$pins"
        check "$name: the pin file is nvidia-driver-pinning-595's" \
            cmp -s "$REPO_ROOT/tests/fixtures/nvidia-repos/ubuntu2404/pin/nvidia-driver-pinning-595" \
            "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
        assert_eq "$name: no apt-mark holds" "" "$held"
        assert_pkg nvidia-open "$rev"
        assert_no_pkg nvidia-open-580
    fi
    check "$name: the loaded module is ${rev%%-*}" grep -q "  ${rev%%-*}  " "$ROOT/proc/driver/nvidia/version"
    assert_eq "$name: journal result" "done" "$(journal_result)"
    assert_eq "$name: dpkg --audit is empty" "" "$(dpkg_audit)"
}

# plan_lines PLAN-JSON: one line per package action, "T KIND NAME VERSION|FROM>TO [held|unowned]"
# (T: "first" for the pinning package's own transaction, else "main"), and "blocked ..." lines.
plan_lines() {
    "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
for t in d["transactions"]:
    w = "first" if t.get("first") else "main"
    for k in ("install", "upgrade", "downgrade", "reinstall"):
        for a in t[k]:
            v = a.get("version") or "%s>%s" % (a["from"], a["to"])
            print(w, k, a["name"], v, "held" if a.get("hold") else "")
    for a in t["remove"]:
        print(w, "remove", a["name"], a["version"], "" if a["owned"] else "unowned")
    if t["blocked"]:
        print("blocked", t["blocked"])' "$1"
}

# kill_points COMMANDS: the N that get a SIGKILL before them, by E2E_45_KILLS:
# - every: each command the change starts (580 -> 595: 22, 595 -> 580: 19).
# - changing (the default): N=1 and each command that changes the host (apt-get update/install,
#   apt-mark, modprobe, systemctl enable/daemon-reload, update-initramfs, dkms install, ...). A
#   kill before a read-only probe (gpgv, apt-get --simulate, dpkg-query, nvidia-smi, dkms status)
#   leaves the host as the kill before the next command does, but for gpuprov's own file writes
#   in between: every host state a kill at a command boundary can leave, 9 + 9 kills.
# - transactions: each command that changes packages or their
#   state, the boundaries where a kill leaves dpkg's database, the holds or the pin in a state
#   no other kill point does: apt-get install (not --simulate), apt-mark, dpkg (not --audit).
kill_points() {
    local mode=${E2E_45_KILLS:-changing}
    if [[ $mode == every ]]; then
        awk '{print $1}' "$1"
        return 0
    fi
    awk -v mode="$mode" '{n = $1; name = $3; a = " " substr($0, index($0, $3) + length($3) + 1) " "
        ro = name ~ /^(gpgv|apt-cache|dpkg-query|modinfo|lsmod|uname|mokutil)$/ ||
            (name == "apt-get" && a ~ / --simulate /) || (name == "dpkg" && a ~ / --audit /) ||
            (name == "dkms" && a ~ /^ status /) || (name == "nvidia-ctk" && a ~ /^ --version /) ||
            (name == "systemctl" && a ~ /^ (is-active|is-enabled|is-failed|show|status|list-[a-z-]*) /) ||
            (name == "nvidia-smi" && a !~ / (-pm|--persistence-mode|-mig|-c|-r|-e) /)
        pkg = !ro && (name == "apt-mark" || name == "dpkg" || (name == "apt-get" && a !~ /^ update /))
        if (mode == "changing" ? (n == 1 || !ro) : pkg) print n}' "$1"
}

# direction SRC DST SRC_REV DST_REV [SRC-ROOT]: the change and its kills, from SRC-ROOT (a host
# at SRC, kept) or else from a fresh host gpuprov brings to SRC first. Leaves the host the
# uninterrupted change converged in NEXT_SRC.
direction() {
    local src=$1 dst=$2 src_rev=$3 dst_rev=$4 srcroot=${5:-} t0=$SECONDS
    local tag="$src-$dst" want total n killed lines before p
    local profile=/etc/gpuprov/e2e-$dst.yaml
    OUT=$OUT_ALL/$tag
    mkdir -p "$OUT"
    log "=== $src -> $dst ==="

    # The source host, once.
    if [[ -n "$srcroot" ]]; then
        ROOT=$srcroot
    else
        ROOT=$(copy_of "$TEMPLATE" "src-$src")
        srcroot=$ROOT
        timed prepare gp apply "/etc/gpuprov/e2e-$src.yaml" --yes
        expect_rc "$tag: apply branch $src on a fresh Ubuntu 24.04 host" 0
        kill_procs_in_root || true
    fi
    before=$(driver_state)
    printf '%s\n' "$before" >"$OUT/source-state.txt"
    check_target "$tag: source" "$src" "$src_rev"

    # The plan of the change, on a copy (the counting run applies it there).
    ROOT=$(copy_of "$srcroot" "count-$tag")
    timed plan gp plan "$profile" --json
    expect_rc "$tag: plan of the change (pending, not blocked)" 0
    cp "$GP_STDOUT" "$OUT/plan.json"
    lines=$(plan_lines "$OUT/plan.json")
    printf '%s\n' "$lines" >"$OUT/plan-lines.txt"
    log "$tag: the plan's package actions:"
    awk '{print "    " $0}' <<<"$lines" >&2
    assert_eq "$tag: nothing blocked" "" "$(grep '^blocked' <<<"$lines" || true)"
    assert_eq "$tag: no removal of a package gpuprov does not own" "" "$(grep ' unowned$' <<<"$lines" || true)"
    # Every driver package at the source branch is removed at its version or moved to dst's build.
    while read -r p v _; do
        [[ -n "$p" ]] || continue
        if grep -qE "^main remove $p $v( |\$)" <<<"$lines"; then
            pass "$tag: plan removes $p $v"
        elif grep -qE "^(main|first) (up|down)grade $p $v>$dst_rev( |\$)" <<<"$lines"; then
            pass "$tag: plan moves $p $v to $dst_rev"
        elif [[ $p == nvidia-driver-pinning-$src ]] && grep -qE "^first remove $p $v" <<<"$lines"; then
            pass "$tag: plan replaces $p in the pin's own transaction"
        else
            fail "$tag: plan neither removes nor moves $p $v"
        fi
    done <<<"$before"
    # Nothing of another branch than dst is installed or moved to.
    assert_eq "$tag: every install and move is at $dst's build" "" \
        "$(grep -E '^(main|first) (install|upgrade|downgrade) ' <<<"$lines" | grep -E " $DRIVER_RE" |
            grep -v ' nvidia-driver-pinning-' | awk -v r="$dst_rev" '{v = $4; sub(/.*>/, "", v); if (v != r) print}' || true)"
    if [[ $dst == 595 ]]; then
        assert_grep "$tag: the pinning package first, alone" '^first install nvidia-driver-pinning-595 595-1ubuntu1 *$' <(printf '%s\n' "$lines")
        assert_eq "$tag: the first transaction installs only the pin" 1 "$(grep -c '^first ' <<<"$lines")"
        assert_grep "$tag: plan installs nvidia-open $dst_rev, not held" "^main install nvidia-open $dst_rev *$" <(printf '%s\n' "$lines")
        assert_eq "$tag: no install is held" "" "$(grep -E '^main (install|upgrade|downgrade) .* held$' <<<"$lines" || true)"
        # The 580 holds are released (text plan: the apt-mark unhold command, before anything).
        gp plan "$profile"
        cp "$GP_STDOUT" "$OUT/plan.txt"
        assert_grep "$tag: plan releases the 580 holds" 'apt-mark unhold .*nvidia-open-580' "$GP_STDOUT"
    else
        assert_eq "$tag: no transaction of its own (no pinning package to install)" "" "$(grep '^first ' <<<"$lines" || true)"
        assert_grep "$tag: plan removes the pinning package" "^main remove nvidia-driver-pinning-595 595-1ubuntu1 *$" <(printf '%s\n' "$lines")
        assert_grep "$tag: plan installs nvidia-open-580 $dst_rev, held" "^main install nvidia-open-580 $dst_rev held$" <(printf '%s\n' "$lines")
        assert_grep "$tag: plan downgrades nvidia-persistenced to $dst_rev, held" \
            "^main downgrade nvidia-persistenced $src_rev>$dst_rev held$" <(printf '%s\n' "$lines")
        assert_eq "$tag: every install is held" "" "$(grep -E '^main (install|upgrade|downgrade) ' <<<"$lines" | grep -v ' held$' || true)"
        # The removal leaves the pin file (a conffile); the purge after the transaction is planned.
        gp plan "$profile"
        cp "$GP_STDOUT" "$OUT/plan.txt"
        assert_grep "$tag: plan purges the pinning package" 'dpkg --purge nvidia-driver-pinning-595' "$GP_STDOUT"
    fi

    # The counting run: the change through the wrappers, then the reboot and the resume.
    killshim_arm "$ROOT" count
    timed apply gp apply "$profile" --yes
    killshim_disarm "$ROOT"
    total=$(killshim_count "$ROOT")
    killshim_log "$ROOT" >"$OUT/commands.txt"
    log "$tag: the change starts $total commands:"
    sed 's/^/    /' "$OUT/commands.txt" >&2
    if [[ $GP_RC == 3 ]]; then
        pass "$tag: apply of the change stops for the reboot ($src still loaded)"
        check "$tag: the $src module still loaded until the reboot" grep -q "  ${src_rev%%-*}  " "$ROOT/proc/driver/nvidia/version"
        finish_change "$tag" "$profile"
    fi
    expect_rc "$tag: the change converges" 0
    gp verify "$profile"
    expect_rc "$tag: verify after the change" 0
    check_target "$tag" "$dst" "$dst_rev"
    assert_dist_upgrade_keeps "$tag: apt-get -s dist-upgrade changes no NVIDIA driver package"
    want=$(end_state)
    printf '%s\n' "$want" >"$OUT/end-state.txt"
    kill_procs_in_root || true
    NEXT_SRC=$ROOT
    if ((total < 3)); then
        fail "$tag: the change starts only $total commands: the wrappers are not in gpuprov's PATH"
        return 0
    fi

    # A SIGKILL before each command of the change (kill_points), then a plain re-run.
    local failures_before points t1
    points=$(kill_points "$OUT/commands.txt" | paste -sd' ')
    log "$tag: kills before commands $points of $total"
    for n in $points; do
        failures_before=$E2E_FAILURES
        t1=$EPOCHREALTIME
        ROOT=$(copy_of "$srcroot" "n$n-$tag")
        SPENT[copy]=$(awk -v a="${SPENT[copy]:-0}" -v t0="$t1" -v t1="$EPOCHREALTIME" 'BEGIN {printf "%.1f", a + t1 - t0}')
        killshim_arm "$ROOT" "kill:$n"
        timed apply gp apply "$profile" --yes
        killshim_disarm "$ROOT"
        killed=$(killshim_killed "$ROOT")
        kill_procs_in_root || fail "$tag N=$n: processes survived"
        if [[ -z "$killed" ]]; then
            fail "$tag N=$n: apply exited $GP_RC before its ${n}th command (the count is not stable?)"
            remove_copy "$ROOT"
            continue
        fi
        log "$tag N=$n/$total: killed before: ${killed#* }"
        assert_eq "$tag N=$n: the killed apply died of SIGKILL" 137 "$GP_RC"
        timed apply gp apply "$profile" --yes
        if [[ $GP_RC == 3 ]]; then finish_change "$tag N=$n" "$profile"; fi
        expect_rc "$tag N=$n: the re-run converges" 0
        assert_eq "$tag N=$n: journal result" "done" "$(journal_result)"
        assert_eq "$tag N=$n: dpkg --audit is empty" "" "$(dpkg_audit)"
        assert_eq "$tag N=$n: the same end state as the uninterrupted change" "$want" "$(end_state)"
        if ((E2E_FAILURES == failures_before)) || [[ "${E2E_KEEP:-0}" != 1 ]]; then remove_copy "$ROOT"; fi
    done
    ROOT=$srcroot
    remove_copy "$ROOT"
    SPENT[$tag]=$((SECONDS - t0))
    log "=== $src -> $dst: $total commands, kills before $(wc -w <<<"$points") of them, ${SPENT[$tag]} s ==="
}

R580=$E2E_U580-1ubuntu1 R595=$E2E_U595-1ubuntu1
direction 580 595 "$R580" "$R595"
# The host the change brought to 595 is 595 -> 580's source: gpuprov put it there.
direction 595 580 "$R595" "$R580" "$NEXT_SRC"
ROOT=$NEXT_SRC
remove_copy "$ROOT"

# --- a profile whose closure crosses branches: blocked at plan, nothing changed -------------------
OUT=$OUT_ALL/cross
mkdir -p "$OUT"
ROOT=$(copy_of "$TEMPLATE" cross)
sed -e "s|/nvidia-2026/compute/|/nvidia-2026-newest/compute/|" -e 's/^name: e2e-2026$/name: e2e-2026-newest/' \
    "$ROOT$PROFILE_IN_ROOT" >"$ROOT/etc/gpuprov/e2e-newest.yaml"
printf 'name: e2e-newest-580\nextends: /etc/gpuprov/e2e-newest.yaml\ndriver: {branch: "580"}\n' \
    >"$ROOT/etc/gpuprov/e2e-newest-580.yaml"
digest_before=$(tree_digest "$ROOT" etc var/lib/dpkg var/lib/apt/extended_states usr/share/keyrings)
gp plan /etc/gpuprov/e2e-newest-580.yaml
expect_rc "cross: plan of 580 on a newest-only mirror is blocked (docs/exit-codes.md)" 1
assert_grep "cross: the plan names the package of another branch and its version" \
    "nvidia-persistenced $E2E_U620-1ubuntu1, a driver package of branch 620, not the profile's 580" "$GP_STDOUT"
assert_grep "cross: the plan names the dependency that pulled it" \
    "pulled by nvidia-compute-utils-580 $R580 \(Depends: nvidia-persistenced \(>= $E2E_U580\)\)" "$GP_STDOUT"
gp apply /etc/gpuprov/e2e-newest-580.yaml --yes
expect_rc "cross: apply refuses the same plan" 1
assert_eq "cross: no driver package installed" "" "$(driver_state)"
assert_eq "cross: nothing under /etc, dpkg's and apt's state or the keyrings changed" "$digest_before" \
    "$(tree_digest "$ROOT" etc var/lib/dpkg var/lib/apt/extended_states usr/share/keyrings)"
remove_copy "$ROOT"

OUT=$OUT_ALL
log "time: $((SECONDS - T_START)) s in all; 580->595 ${SPENT[580-595]:-?} s, 595->580 ${SPENT[595-580]:-?} s; phases (s): $(for p in prepare plan apply resume copy; do printf '%s %s, ' "$p" "${SPENT[$p]:-0}"; done)"
ROOT=$TEMPLATE
killshim_copies_end
scenario_end
