#!/usr/bin/env bash
# Benchmarks, side by side in one run on the same Debian 12 root, written to docs/benchmarks.md:
#   (a) no-op apply vs the same desired state as an Ansible playbook (bench/ansible/noop.yml)
#   (b) fresh apply vs the floor (one apt-get update + one apt-get install of the same packages)
#       and vs the common bash recipe (an update per repository added, an install per package)
#   (c) plan with the parsed-index cache warm and cold
#   (d) plan and apply cost when the install's package set grows x10 (a bench-only mirror variant)
#   (e) start-up: --version, facts, status and a converged plan against /bin/true
# Reuses the e2e harness (tests/e2e/lib: roots, HTTPS mirror). Needs root, like tests/e2e/run.sh.
#
# usage: scripts/bench.sh [--quick] [--runs N] [--slow-runs N] [--out FILE]
#   --runs N       runs of each fast command (default 10)
#   --slow-runs N  runs of each slow one: fresh installs, ansible-playbook (default 3)
#   --quick        N=1, small index and x2 scale, prints the page unless --out: a smoke test
#   --out FILE     default docs/benchmarks.md
# Env: GPUPROV_BIN (default build/gpuprov, built when absent), E2E_CACHE, E2E_KEEP=1.
# Not run by ctest or CI: timing goals are not pass/fail material on a shared machine, and even
# --quick needs two mirrors, five fresh installs and an ansible-playbook run (291-474 s measured on
# the 2-core build machine), far over the 2 minutes a CI smoke test may cost.
# shellcheck source-path=SCRIPTDIR/..
# shellcheck disable=SC2016 # single-quoted $ and backticks are for sh -c, dpkg-query and grep
set -euo pipefail
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO_ROOT"
RUNS=10
SLOW=3
QUICK=0
OUT_FILE=""
while (($#)); do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --slow-runs) SLOW=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --out) OUT_FILE=$(realpath -m "$2"); shift 2 ;;
        -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "scripts/bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ && $SLOW =~ ^[1-9][0-9]*$ ]] || { echo "--runs and --slow-runs take a positive number" >&2; exit 2; }
if ((QUICK)); then RUNS=1 SLOW=1 PAD=200 SCALE=2; else PAD=6000 SCALE=10; fi
[[ $(id -u) == 0 ]] || { echo "scripts/bench.sh: needs root (chroot roots, like tests/e2e/run.sh)" >&2; exit 1; }
command -v ansible-playbook >/dev/null || { echo "scripts/bench.sh: ansible-playbook missing (apt-get install ansible-core)" >&2; exit 1; }
command -v cc >/dev/null || { echo "scripts/bench.sh: cc missing (bench/lib/measure.c)" >&2; exit 1; }

GPUPROV_BIN=${GPUPROV_BIN:-$REPO_ROOT/build/gpuprov}
if [[ ! -x $GPUPROV_BIN ]]; then
    scripts/build.sh --target gpuprov >/dev/null
fi
GPUPROV_BIN=$(realpath "$GPUPROV_BIN")
export GPUPROV_BIN

E2E_WORK=$(mktemp -d /tmp/gpuprov-bench.XXXXXX)
export E2E_WORK E2E_DIR=$REPO_ROOT/tests/e2e REPO_ROOT
export SCENARIO=bench
# shellcheck source=tests/e2e/lib/scenario.sh
source "$E2E_DIR/lib/scenario.sh"
# shellcheck source=bench/lib/benchroot.sh
source "$REPO_ROOT/bench/lib/benchroot.sh"
[[ -n $OUT_FILE ]] || { if ((QUICK)); then OUT_FILE=$E2E_WORK/benchmarks.md; else OUT_FILE=$REPO_ROOT/docs/benchmarks.md; fi; }

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    mirror_stop
    local pid
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done < <(
        find /proc -mindepth 2 -maxdepth 2 -name root -lname "$E2E_WORK/roots/*" -printf '%h\n' 2>/dev/null | sed 's|^/proc/||')
    if [[ ${E2E_KEEP:-0} == 1 ]]; then log "kept $E2E_WORK"; else rm -rf "$E2E_WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

T0=$SECONDS
cut -d' ' -f1 /proc/loadavg >"$E2E_WORK/loadavg-start"
RESULTS=$E2E_WORK/results.jsonl
MEASURE=$E2E_WORK/measure
cc -O2 -o "$MEASURE" "$REPO_ROOT/bench/lib/measure.c"
mkdir -p "$OUT" "$E2E_WORK/roots"

# Both mirrors build while the root is prepared: x1 (the e2e mirror, index padded to NVIDIA's
# size) and xSCALE (the same, every package pulling SCALE-1 fillers).
(MIRROR_INDEX_PAD=$PAD mirror_build "$E2E_WORK/mirror-x1" >"$E2E_WORK/mirror-x1.log" 2>&1) &
m1=$!
(MIRROR_INDEX_PAD=$PAD MIRROR_SCALE=$SCALE mirror_build "$E2E_WORK/mirror-x$SCALE" >"$E2E_WORK/mirror-xN.log" 2>&1) &
mN=$!
BASE=$(bench_root_base) || die "no bench root"
wait "$m1" || { cat "$E2E_WORK/mirror-x1.log" >&2; die "mirror build failed"; }
wait "$mN" || { cat "$E2E_WORK/mirror-xN.log" >&2; die "mirror build (x$SCALE) failed"; }
log "setup: roots and mirrors ready in $((SECONDS - T0)) s"

# m GROUP LABEL EXPECT_RC TIMEOUT CMD...: one measured run (bench/lib/measure.c).
m() { "$MEASURE" "$RESULTS" "$@" || die "$1 / $2 failed (log: $RESULTS.log)"; }
# The environment in_root gives, without its timeout process in the measurement.
root_run() { # ROOT: prints nothing; sets RR to the argv prefix
    RR=(chroot "$1" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        HOME=/root LANG=C.UTF-8 TERM=dumb NO_COLOR=1 DEBIAN_FRONTEND=noninteractive)
}
copy_root() { # SRC NAME -> path
    local dst=$E2E_WORK/roots/$2
    rm -rf "$dst"
    cp -a --reflink=auto "$1" "$dst"
    printf '%s\n' "$dst"
}
drop_root() { rootfs_remove "$1"; }

# A fresh host for this mirror: what scenario_begin prepares, on the bench root.
make_template() { # NAME
    ROOT=$(copy_root "$BASE" "$1")
    rm -f "$ROOT/.bench-complete"
    rootfs_prepare_host "$ROOT" clean
    render_profile 3bf863cc.pub
    rootfs_install_gpuprov "$ROOT" || die "gpuprov does not run in the bench root"
    printf '%s\n' "$ROOT"
}

# What gpuprov's apply installed and configured, read from the converged root C (its log and
# apt/dpkg), so the floor, the bash recipe and the playbook do exactly the same.
REPO_FILES=(cuda:/usr/share/keyrings/gpuprov-cuda.gpg:/etc/apt/sources.list.d/gpuprov-cuda.sources
    container-toolkit:/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg:/etc/apt/sources.list.d/gpuprov-container-toolkit.sources)
installed_set() { # C -> name=version per line, in gpuprov's order
    grep -o 'run `apt-get install [^`]*`' "$1/var/log/gpuprov.log" | tr ' `' '\n' |
        grep -E '^[a-z0-9][a-z0-9+.-]*=[0-9]' || true
}
stage_repos() { # C R [DIR]: C's keyrings and sources into R, or under R/DIR/<repo>/ when DIR is given
    local e name key src to
    for e in "${REPO_FILES[@]}"; do
        IFS=: read -r name key src <<<"$e"
        to=$2${3:+$3/$name}
        install -D -m 0644 "$1$key" "$to$key"
        install -D -m 0644 "$1$src" "$to$src"
    done
}
pkg_count() { chroot "$1" dpkg-query -W -f='${Status}\n' | grep -c ' installed$'; }

# --- (b) fresh apply vs the floor vs the bash recipe; also leaves the converged root C ----------
fresh_section() { # VARIANT TEMPLATE -> sets CONVERGED
    local v=$1 t=$2 i r pkgs=()
    CONVERGED=""
    for ((i = 1; i <= SLOW; i++)); do
        r=$(copy_root "$t" "fresh-$v-$i")
        root_run "$r"
        m "fresh-$v" gpuprov 0 900 "${RR[@]}" gpuprov apply "$PROFILE_IN_ROOT" --yes
        if [[ -z $CONVERGED ]]; then CONVERGED=$r; else drop_root "$r"; fi
    done
    mapfile -t pkgs < <(installed_set "$CONVERGED")
    ((${#pkgs[@]})) || die "no apt-get install in $CONVERGED/var/log/gpuprov.log"
    printf '%s\n' "${pkgs[@]}" >"$E2E_WORK/packages-$v.txt"
    for ((i = 1; i <= SLOW; i++)); do
        r=$(copy_root "$t" "floor-$v-$i")
        stage_repos "$CONVERGED" "$r"
        root_run "$r"
        m "fresh-$v" floor 0 900 "${RR[@]}" sh -c 'apt-get update -q && exec apt-get install -y -q "$@"' sh "${pkgs[@]}"
        drop_root "$r"
    done
    # The bash recipe only at x1: section (d) compares gpuprov with the floor, and at xSCALE an
    # install per package would take most of the run.
    local bash_runs=$SLOW
    [[ $v == x1 ]] || bash_runs=0
    for ((i = 1; i <= bash_runs; i++)); do
        r=$(copy_root "$t" "bash-$v-$i")
        stage_repos "$CONVERGED" "$r" /root/bench-stage
        root_run "$r"
        m "fresh-$v" bash 0 900 "${RR[@]}" sh -c 'set -e
for repo in cuda container-toolkit; do cp -a "/root/bench-stage/$repo/." /; apt-get update -q; done
for p in "$@"; do apt-get install -y -q "$p"; done' sh "${pkgs[@]}"
        drop_root "$r"
    done
    pkg_count "$t" >"$E2E_WORK/pkgs-before-$v"
    pkg_count "$CONVERGED" >"$E2E_WORK/pkgs-after-$v"
    cp "$CONVERGED/var/log/gpuprov.log" "$E2E_WORK/apply-log-$v"
}

# --- (a) no-op apply vs ansible-playbook on the converged root ----------------------------------
noop_section() { # VARIANT CONVERGED [ansible]
    local v=$1 c=$2 i
    root_run "$c"
    for ((i = 1; i <= RUNS; i++)); do
        m "noop-$v" gpuprov 0 120 "${RR[@]}" gpuprov apply "$PROFILE_IN_ROOT" --yes
    done
    [[ ${3:-} == ansible ]] || return 0
    local a=$E2E_WORK/ansible e name key src holds=()
    mkdir -p "$a/files" "$a/tmp"
    cp "$c/etc/modprobe.d/blacklist-nouveau.conf" "$c/etc/profile.d/gpuprov-cuda.sh" "$a/files/"
    local repos=()
    for e in "${REPO_FILES[@]}"; do
        IFS=: read -r name key src <<<"$e"
        cp "$c$key" "$c$src" "$a/files/"
        repos+=("$name" "$key" "$src")
    done
    mapfile -t holds < <(chroot "$c" apt-mark showhold)
    "$E2E_PYTHON" - "$a" "$E2E_WORK/packages-$v.txt" "${#holds[@]}" "${holds[@]}" "${repos[@]}" >"$a/vars.json" <<'PY'
import json, os, sys
a, pkgs, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
holds, rest = sys.argv[4:4 + n], sys.argv[4 + n:]
f = lambda p: os.path.join(a, "files", os.path.basename(p))
json.dump({
    "bench_modprobe": {"src": f("blacklist-nouveau.conf"), "dest": "/etc/modprobe.d/blacklist-nouveau.conf"},
    "bench_profile_d": {"src": f("gpuprov-cuda.sh"), "dest": "/etc/profile.d/gpuprov-cuda.sh"},
    "bench_repos": [{"keyring_src": f(k), "keyring": k, "source_src": f(s), "source": s}
                    for k, s in zip(rest[1::3], rest[2::3])],
    "bench_packages": open(pkgs).read().split(),
    "bench_holds": holds}, sys.stdout, indent=1)
PY
    printf 'gpu:\n  hosts:\n    %s:\n      ansible_connection: chroot\n      ansible_python_interpreter: /usr/bin/python3\n' \
        "$c" >"$a/inventory.yml"
    local play=(env ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP="$a/tmp" ANSIBLE_PIPELINING=1
        ANSIBLE_RETRY_FILES_ENABLED=0 ansible-playbook -i "$a/inventory.yml" -e "@$a/vars.json"
        "$REPO_ROOT/bench/ansible/noop.yml")
    # The playbook must describe the state gpuprov reached: on the converged root nothing changes.
    "${play[@]}" >"$a/check.log" 2>&1 || { cat "$a/check.log" >&2; die "the playbook failed on the converged root"; }
    grep -Eq 'changed=0 +unreachable=0 +failed=0' "$a/check.log" ||
        { cat "$a/check.log" >&2; die "the playbook is not a no-op on the converged root (see above)"; }
    cp "$a/check.log" "$E2E_WORK/ansible-check.log"
    for ((i = 1; i <= SLOW; i++)); do
        m "noop-$v" ansible 0 600 "${play[@]}"
    done
}

# --- (c) plan with the parsed-index cache warm and cold, on a host with changes pending ---------
plan_section() { # VARIANT TEMPLATE
    local v=$1 p i
    p=$(copy_root "$2" "plan-$v")
    root_run "$p"
    # The first plan downloads and verifies the indexes into gpuprov's cache (not measured).
    "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT" >"$OUT/plan-$v.txt" 2>&1 || die "plan failed in $p (see $OUT/plan-$v.txt)"
    ls "$p"/var/cache/gpuprov/repos/*/Packages.parsed >/dev/null || die "plan left no parsed index in $p"
    for ((i = 1; i <= RUNS; i++)); do
        m "plan-$v" warm 0 120 "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT"
    done
    for ((i = 1; i <= RUNS; i++)); do
        rm -f "$p"/var/cache/gpuprov/repos/*/Packages.parsed
        m "plan-$v" cold 0 120 "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT"
    done
    # The same with the repository step alone: it loads the CUDA index but needs no apt
    # simulation, so the index load is most of what is left.
    for ((i = 1; i <= RUNS; i++)); do
        m "plan-$v" "repo warm" 0 120 "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT" --only cuda-repo
    done
    for ((i = 1; i <= RUNS; i++)); do
        rm -f "$p"/var/cache/gpuprov/repos/*/Packages.parsed
        m "plan-$v" "repo cold" 0 120 "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT" --only cuda-repo
    done
    wc -c <"$p/var/cache/gpuprov/repos/cuda/Packages" >"$E2E_WORK/index-bytes-$v"
    grep -c '^Package:' "$p/var/cache/gpuprov/repos/cuda/Packages" >"$E2E_WORK/index-records-$v"
    drop_root "$p"
}

# --- (e) start-up, in the converged root -----------------------------------------------------------
startup_section() { # CONVERGED
    local c=$1 i
    root_run "$c"
    # Does a converged plan load an index at all? It would leave a new parsed copy behind.
    rm -f "$c"/var/cache/gpuprov/repos/*/Packages.parsed
    "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT" --detailed-exitcode >/dev/null 2>&1 ||
        die "the converged root does not plan as a no-op"
    find "$c/var/cache/gpuprov/repos" -name Packages.parsed | wc -l >"$E2E_WORK/converged-plan-parses"
    for ((i = 1; i <= RUNS; i++)); do
        m startup "/bin/true" 0 30 "${RR[@]}" /bin/true
        m startup "gpuprov --version" 0 30 "${RR[@]}" gpuprov --version
        m startup "gpuprov facts" 0 30 "${RR[@]}" gpuprov facts
        m startup "gpuprov status" 0 30 "${RR[@]}" gpuprov status
        m startup "gpuprov plan (converged)" 0 60 "${RR[@]}" gpuprov plan "$PROFILE_IN_ROOT"
    done
}

for v in x1 "x$SCALE"; do
    mirror_start "$E2E_WORK/mirror-$v"
    T=$(make_template "template-$v")
    log "$v: fresh apply, floor, bash recipe ($SLOW runs each)"
    fresh_section "$v" "$T"
    log "$v: no-op apply ($RUNS runs)$([[ $v == x1 ]] && echo ", ansible-playbook ($SLOW runs)")"
    noop_section "$v" "$CONVERGED" "$([[ $v == x1 ]] && echo ansible)"
    log "$v: plan, parsed-index cache warm and cold ($RUNS runs each)"
    plan_section "$v" "$T"
    if [[ $v == x1 ]]; then
        log "start-up ($RUNS runs each)"
        startup_section "$CONVERGED"
    fi
    drop_root "$CONVERGED"
    drop_root "$T"
    mirror_stop
done

# --- the report ----------------------------------------------------------------------------------
cmdline="sudo scripts/bench.sh"
((QUICK)) && cmdline+=" --quick"
[[ $RUNS == 10 || $QUICK == 1 ]] || cmdline+=" --runs $RUNS"
[[ $SLOW == 3 || $QUICK == 1 ]] || cmdline+=" --slow-runs $SLOW"
"$E2E_PYTHON" "$REPO_ROOT/bench/lib/report.py" --results "$RESULTS" --work "$E2E_WORK" \
    --scale "$SCALE" --pad "$PAD" --runs "$RUNS" --slow-runs "$SLOW" --command "$cmdline" \
    --gpuprov "$GPUPROV_BIN" --seconds "$((SECONDS - T0))" >"$OUT_FILE.tmp"
mv "$OUT_FILE.tmp" "$OUT_FILE"
log "wrote $OUT_FILE in $((SECONDS - T0)) s"
# A --quick page lives in the work dir, which goes away: show it.
if [[ $OUT_FILE == "$E2E_WORK"/* ]]; then cat "$OUT_FILE"; fi
