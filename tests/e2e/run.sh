#!/usr/bin/env bash
# gpuprov end-to-end suite: real apt/dpkg in a Debian 12 chroot against an NVIDIA-shaped HTTPS
# mirror on 127.0.0.1. Usage: tests/e2e/run.sh [--list] [SCENARIO...]
# SCENARIO matches by number or name (`01`, `fresh-apply`, `01-fresh-apply`). Needs root.
# Env: GPUPROV_BIN (default build/gpuprov), E2E_KEEP=1 keeps the work dir, E2E_CACHE,
# E2E_SCENARIO_TIMEOUT (seconds per scenario, default 300), E2E_JOBS (scenarios at a time, default 2), E2E_LOG_DIR (default tests/e2e/.work/logs:
# each scenario's log and gpuprov's stdout/stderr per call).
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export E2E_DIR
# shellcheck source=lib/common.sh
source "$E2E_DIR/lib/common.sh"
# shellcheck source=lib/rootfs.sh
source "$E2E_DIR/lib/rootfs.sh"
# shellcheck source=lib/mirror.sh
source "$E2E_DIR/lib/mirror.sh"

if [[ -z "${GPUPROV_BIN:-}" ]]; then
    GPUPROV_BIN=$REPO_ROOT/build/gpuprov
fi
export GPUPROV_BIN
SCENARIO_TIMEOUT=${E2E_SCENARIO_TIMEOUT:-300}

all_scenarios() { find "$E2E_DIR/scenarios" -maxdepth 1 -name '[0-9][0-9]-*.sh' -printf '%f\n' | LC_ALL=C sort; }

selected=()
for arg in "$@"; do
    case "$arg" in
        --list) all_scenarios | sed 's/\.sh$//'; exit 0 ;;
        -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
        *)
            found=0
            while read -r s; do
                n=${s%.sh}
                if [[ "$n" == "$arg" || "${n%%-*}" == "$arg" || "${n#*-}" == "$arg" ]]; then selected+=("$s"); found=1; fi
            done < <(all_scenarios)
            ((found)) || { echo "unknown scenario: $arg (see --list)" >&2; exit 2; }
            ;;
    esac
done
if ((${#selected[@]} == 0)); then mapfile -t selected < <(all_scenarios); fi

# --- prerequisites -------------------------------------------------------------------------------
if [[ $(id -u) != 0 ]]; then
    echo "tests/e2e/run.sh: needs root (debootstrap, chroot, device nodes); CI runs it as root" >&2
    exit 1
fi
missing=()
for tool in debootstrap chroot gpg gpgv openssl apt-ftparchive dpkg-deb rpmbuild rpmsign createrepo_c modifyrepo_c cc timeout flock; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
[[ -x "$E2E_PYTHON" ]] || missing+=(python3)
# The mirror's python3-dnf-plugin-versionlock stand-in carries the host's own Debian plugin files.
[[ -f /usr/lib/python3/dist-packages/dnf-plugins/versionlock.py ]] || missing+=(dnf-plugins-core)
if ((${#missing[@]})); then
    echo "tests/e2e/run.sh: missing host tools: ${missing[*]} (apt-get install \$(cat tests/e2e/DEPS))" >&2
    exit 1
fi

E2E_WORK=$(mktemp -d /tmp/gpuprov-e2e.XXXXXX)
export E2E_WORK
declare -A RUNNING_NAME=()

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    local p
    for p in "${!RUNNING_NAME[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    # Anything still running inside one of our roots (a scenario killed by its deadline).
    local pid
    while read -r pid; do
        kill -9 "$pid" 2>/dev/null || true
    done < <(find /proc -mindepth 2 -maxdepth 2 -name root -lname "$E2E_WORK/roots/*" -printf '%h\n' 2>/dev/null |
        sed 's|^/proc/||')
    mirror_stop
    umount_below "$E2E_WORK"
    if [[ "${E2E_KEEP:-0}" == 1 ]]; then
        log "kept work dir $E2E_WORK"
    else
        rm -rf "$E2E_WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- setup (once) ---------------------------------------------------------------------------------
t_setup=$SECONDS
# A scenario that needs neither says "# e2e-no-mirror" in its first lines (52 runs after the
# arm64 build in scripts/test.sh, on its own): a run of only such scenarios skips both.
needs_mirror=0
for s in "${selected[@]}"; do
    sed -n '1,3p' "$E2E_DIR/scenarios/$s" | grep -q '^# e2e-no-mirror' || needs_mirror=1
done
if ((needs_mirror)); then
    t=$SECONDS
    rootfs_base >/dev/null || die "could not build the Debian 12 root"
    log "setup: root cache ready in $((SECONDS - t)) s ($E2E_CACHE)"
    t=$SECONDS
    mirror_build_cached "$E2E_WORK/mirror" || die "mirror build failed"
    log "setup: mirror ready in $((SECONDS - t)) s"
    mirror_start "$E2E_WORK/mirror"
fi
if [[ ! -x "$GPUPROV_BIN" ]]; then
    log "WARNING: $GPUPROV_BIN not found: every scenario but 00-infra will fail (build it first)"
fi
log "setup done in $((SECONDS - t_setup)) s; running ${#selected[@]} scenario(s), ${SCENARIO_TIMEOUT}s deadline each"

# --- scenarios ------------------------------------------------------------------------------------
passed=0
failed=0
results=()
mkdir -p "$E2E_WORK/logs"
# Logs and gpuprov outputs outlive the work dir (tests/e2e/.work is git-ignored).
E2E_LOG_DIR=${E2E_LOG_DIR:-$E2E_DIR/.work/logs}
rm -rf "$E2E_LOG_DIR"
mkdir -p "$E2E_LOG_DIR"
# Two scenarios at a time (E2E_JOBS): most of a scenario is waiting on apt, dpkg and sleeps in
# its own root. A scenario that changes or counts what the shared mirror serves (faults, request
# counts, files under the mirror) says "# e2e-exclusive" in its first lines and runs alone.
JOBS=${E2E_JOBS:-2}
declare -A RUNNING_T0=() RUNNING_DEADLINE=()

# A scenario may ask for a longer deadline in its first lines: "# e2e-timeout: 900".
own_deadline() { # FILE -> its "# e2e-timeout:" seconds, or nothing
    sed -n '1,5s/^# e2e-timeout: *\([0-9][0-9]*\)$/\1/p' "$E2E_DIR/scenarios/$1" | head -n 1
}

start_scenario() { # FILE
    local s=$1 name=${1%.sh} deadline
    deadline=$(own_deadline "$s")
    if [[ -z "$deadline" ]] || ((deadline < SCENARIO_TIMEOUT)); then deadline=$SCENARIO_TIMEOUT; fi
    SCENARIO=$name timeout -k 10 "$deadline" bash "$E2E_DIR/scenarios/$s" >"$E2E_WORK/logs/$name.log" 2>&1 &
    RUNNING_NAME[$!]=$name
    RUNNING_T0[$!]=$SECONDS
    RUNNING_DEADLINE[$!]=$deadline
}

finish_scenario() { # PID RC
    local pid=$1 rc=$2 name=${RUNNING_NAME[$1]} deadline=${RUNNING_DEADLINE[$1]}
    local dt=$((SECONDS - RUNNING_T0[$1])) logf="$E2E_WORK/logs/${RUNNING_NAME[$1]}.log"
    unset "RUNNING_NAME[$pid]" "RUNNING_T0[$pid]" "RUNNING_DEADLINE[$pid]"
    if ((rc == 0)); then
        passed=$((passed + 1))
        results+=("PASS  $name  ${dt}s")
        printf 'PASS  %-28s %4ss\n' "$name" "$dt"
    else
        failed=$((failed + 1))
        local why=""
        ((rc == 124 || rc == 137)) && why=" (killed by the ${deadline}s deadline)"
        results+=("FAIL  $name  ${dt}s$why")
        printf 'FAIL  %-28s %4ss%s\n' "$name" "$dt" "$why"
        grep -E 'FAIL:|ERROR:' "$logf" | sed 's/^/      /' | head -n 30 || true
        echo "      --- last lines of $name.log ---"
        tail -n 15 "$logf" | sed 's/^/      /'
    fi
    # Keep the copy of a failed root only when asked; each is ~200 MB.
    if [[ "${E2E_KEEP:-0}" != 1 ]]; then rootfs_remove "$E2E_WORK/roots/$name"; fi
    cp "$logf" "$E2E_LOG_DIR/"
    if [[ -d "$E2E_WORK/out/$name" ]]; then cp -r "$E2E_WORK/out/$name" "$E2E_LOG_DIR/"; fi
}

wait_one() { # waits for any running scenario and records it
    local pid rc
    set +e
    wait -n -p pid "${!RUNNING_NAME[@]}"
    rc=$?
    set -e
    finish_scenario "$pid" "$rc"
}

# The shared scenarios first, two at a time, those with their own longer deadline (the long
# ones) at the head so the other slot works through the rest beside them; then the exclusive
# ones, each alone. Scenarios are independent, so the order is free.
long=() shared=() exclusive=()
for s in "${selected[@]}"; do
    head5=$(head -n 5 "$E2E_DIR/scenarios/$s")
    if [[ "$head5" == *"# e2e-exclusive"* ]]; then exclusive+=("$s")
    elif [[ "$head5" == *"# e2e-timeout:"* ]]; then long+=("$s")
    else shared+=("$s"); fi
done
# The long ones by deadline, longest first (a scenario's deadline is its own estimate): 11 (kill
# at every command) alone takes a quarter of the suite, so started last it would leave the other
# slot idle at the end.
if ((${#long[@]})); then
    mapfile -t long < <(for s in "${long[@]}"; do
        printf '%s %s\n' "$(own_deadline "$s")" "$s"
    done | sort -k1,1nr -k2,2 | cut -d' ' -f2)
fi
for s in "${long[@]}" "${shared[@]}"; do
    while ((${#RUNNING_NAME[@]} >= JOBS)); do wait_one; done
    start_scenario "$s"
done
while ((${#RUNNING_NAME[@]} > 0)); do wait_one; done
for s in "${exclusive[@]}"; do
    mirror_clear_faults
    start_scenario "$s"
    wait_one
done

log "total $((SECONDS - t_setup)) s"
echo "$passed passed, $failed failed"
((failed == 0))
