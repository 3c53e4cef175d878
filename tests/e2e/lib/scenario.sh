# shellcheck shell=bash
# Per-scenario helpers. A scenario is `scenarios/NN-name.sh`, run by run.sh as its own bash
# process with E2E_WORK, MIRROR_DIR and MIRROR_PORT exported. It sources this file, calls
# scenario_begin, runs gpuprov inside its fresh root and asserts the root's real state.

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=lib/rootfs.sh
source "$E2E_DIR/lib/rootfs.sh"
# shellcheck source=lib/mirror.sh
source "$E2E_DIR/lib/mirror.sh"

PROFILE_IN_ROOT=/etc/gpuprov/e2e.yaml
SCENARIO=${SCENARIO:-$(basename "$0" .sh)}
OUT="$E2E_WORK/out/$SCENARIO"
ROOT=""
GP_N=0

# begin_args clean|nouveau [--no-gpuprov]: sets BEGIN_MODE and BEGIN_WANT_BIN for a *_begin.
begin_args() {
    BEGIN_MODE="" BEGIN_WANT_BIN=1
    local a
    for a in "$@"; do
        case "$a" in
            nouveau) BEGIN_MODE=nouveau ;;
            clean) ;;
            --no-gpuprov) BEGIN_WANT_BIN=0 ;;
        esac
    done
    [[ -n "${MIRROR_PORT:-}" && -n "${MIRROR_DIR:-}" ]] || die "run scenarios through tests/e2e/run.sh"
    mkdir -p "$OUT"
}

# scenario_begin clean|nouveau [--no-gpuprov]: fresh root, simulated host, CA trusted, profile, binary.
scenario_begin() {
    begin_args "$@"
    local mode=$BEGIN_MODE want_bin=$BEGIN_WANT_BIN
    ROOT=$(rootfs_new "$SCENARIO")
    rootfs_prepare_host "$ROOT" "$mode"
    render_profile 3bf863cc.pub
    if ((want_bin)); then
        rootfs_install_gpuprov "$ROOT" || scenario_end
    fi
    log "scenario $SCENARIO: root $ROOT"
}

# render_profile CUDA-KEY-FILE: profiles/$PROFILE_TEMPLATE (e2e-debian12.yaml.in) -> ROOT/etc/gpuprov/e2e.yaml
PROFILE_TEMPLATE=${PROFILE_TEMPLATE:-e2e-debian12.yaml.in}
render_profile() {
    local keyfile=$1
    mkdir -p "$ROOT/etc/gpuprov"
    sed -e "s/@PORT@/$MIRROR_PORT/g" -e "s/@FINGERPRINT@/$(mirror_fingerprint)/g" \
        -e "s/@CUDA_KEY_FILE@/$keyfile/g" \
        "$E2E_DIR/profiles/$PROFILE_TEMPLATE" >"$ROOT$PROFILE_IN_ROOT"
    chmod 0644 "$ROOT$PROFILE_IN_ROOT"
    cp "$ROOT$PROFILE_IN_ROOT" "$OUT/profile.yaml"
}

# gp [--as USERSPEC] [--timeout S] ARGS...: run gpuprov in the root. Sets GP_RC, GP_STDOUT and
# GP_STDERR (files, kept under $OUT) and never fails the script itself.
gp() {
    local userspec="" t=300
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --as) userspec=$2; shift 2 ;;
            --timeout) t=$2; shift 2 ;;
            *) break ;;
        esac
    done
    GP_N=$((GP_N + 1))
    GP_STDOUT="$OUT/gp$GP_N.stdout"
    GP_STDERR="$OUT/gp$GP_N.stderr"
    local t0=$SECONDS
    set +e
    if [[ -n "$userspec" ]]; then
        timeout -k 5 "$t" chroot --userspec="$userspec" "$ROOT" /usr/bin/env -i \
            PATH=/usr/local/bin:/usr/bin:/bin HOME="${GP_HOME:-/nonexistent}" LANG=C.UTF-8 TERM=dumb NO_COLOR=1 \
            gpuprov "$@" >"$GP_STDOUT" 2>"$GP_STDERR"
    else
        in_root "$ROOT" "$t" gpuprov "$@" >"$GP_STDOUT" 2>"$GP_STDERR"
    fi
    GP_RC=$?
    set -e
    GP_SECONDS=$((SECONDS - t0))
    log "gpuprov $* -> exit $GP_RC in ${GP_SECONDS}s (out: $GP_STDOUT)"
    if ((GP_RC == 124 || GP_RC == 137)); then log "gpuprov was killed by the ${t}s e2e deadline"; fi
    if [[ "$GP_RC" == 0 && -z "$userspec" ]]; then converged_after_apply "$t" "$@"; fi
}

# converged_after_apply TIMEOUT ARGS...: the property every scenario checks (issue 26): after
# `gpuprov apply` exits 0, `gpuprov plan --detailed-exitcode` with the same profile and filters
# exits 0 (nothing pending). Runs right after the apply, before the scenario changes the host
# again, and leaves GP_RC/GP_STDOUT/GP_STDERR as the apply set them.
converged_after_apply() {
    local t=$1; shift
    local -a global=() plan=()
    while [[ $# -gt 0 && "$1" != apply ]]; do global+=("$1"); shift; done
    [[ $# -gt 0 ]] || return 0 # not an apply
    shift
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --dry-run) return 0 ;; # a plan already
            --only|--skip|--from-bundle|--bundle-key) plan+=("$1" "$2"); shift 2 ;;
            --only=*|--skip=*|--allow-remove|--json) plan+=("$1"); shift ;;
            --reboot) shift 2 ;;
            --plan) # a saved plan: its profile, filters and --allow-remove (docs/saved-plans.md)
                mapfile -t plan < <("$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["profile"])
for flag in ("only", "skip"):
    if d[flag]:
        print("--" + flag); print(",".join(d[flag]))
if d["allow_remove"]:
    print("--allow-remove")' "$ROOT$2")
                shift 2 ;;
            -*) shift ;;
            *) plan+=("$1"); shift ;;
        esac
    done
    local out="$OUT/gp$GP_N.converged"
    # This plan is the harness's, not the run under test: a kill scenario's wrapper (lib/killshim,
    # armed by 11 and 45) must neither count nor kill its probes (plan asks `dkms status`).
    local shim="$ROOT/run/e2e-killshim/mode" armed=""
    if [[ -f "$shim" ]]; then armed=$(cat "$shim"); rm -f "$shim"; fi
    set +e
    in_root "$ROOT" "$t" gpuprov "${global[@]}" plan "${plan[@]}" --detailed-exitcode \
        >"$out.stdout" 2>"$out.stderr"
    local rc=$?
    set -e
    if [[ -n "$armed" ]]; then printf '%s\n' "$armed" >"$shim"; fi
    if [[ "$rc" == 0 ]]; then
        pass "apply exited 0, and the next plan is empty (gpuprov plan --detailed-exitcode exit 0)"
    else
        fail "apply exited 0 but the next plan is not empty: plan --detailed-exitcode exit $rc ($out.stdout)"
        tail -n 40 "$out.stdout" "$out.stderr" >&2 || true
    fi
}

# expect_rc DESC WANT: asserts the last gp exit code, dumping its output when wrong.
expect_rc() {
    if [[ "$GP_RC" == "$2" ]]; then pass "$1 (exit $GP_RC)"; else
        fail "$1: expected exit $2, got $GP_RC"
        log "--- stdout (last 40 lines) ---"; tail -n 40 "$GP_STDOUT" >&2 || true
        log "--- stderr (last 40 lines) ---"; tail -n 40 "$GP_STDERR" >&2 || true
    fi
}

# Combined output of the last gp run (for message checks that accept either stream).
gp_output() { cat "$GP_STDOUT" "$GP_STDERR"; }

# dpkg view of the root.
pkg_version() { # NAME -> version when installed ("install|hold ok installed"), else empty
    # shellcheck disable=SC2016 # dpkg-query format, not shell
    in_root "$ROOT" 30 dpkg-query -W -f='${Status}\t${Version}\n' "$1" 2>/dev/null |
        awk -F'\t' '$1 ~ /^(install|hold) ok installed$/ {print $2}' || true
}
assert_pkg() { # NAME VERSION
    local v
    v=$(pkg_version "$1")
    assert_eq "package $1 installed at $2" "$2" "$v"
}
assert_no_pkg() {
    local v
    v=$(pkg_version "$1")
    if [[ -z "$v" ]]; then pass "package $1 not installed"; else fail "package $1 must not be installed (found $v)"; fi
}
holds() { in_root "$ROOT" 30 apt-mark showhold 2>/dev/null; }
dpkg_audit() { in_root "$ROOT" 30 dpkg --audit 2>&1; }

# Fingerprint(s) of a keyring file in the root, read by the HOST's gpg (independent of gpuprov).
keyring_fprs() {
    local f="$ROOT$1"
    [[ -f "$f" ]] || return 0
    GNUPGHOME=$(mktemp -d) gpg --batch --quiet --no-tty --with-colons --show-keys "$f" 2>/dev/null |
        awk -F: '$1 == "fpr" {print $10}'
}

# Journal result: top-level "result" (contract); prints "<missing>" when absent.
journal_result() {
    local f="$ROOT/var/lib/gpuprov/state.json"
    [[ -f "$f" ]] || { echo "<no state.json>"; return 0; }
    "$E2E_PYTHON" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    print("<invalid json: %s>" % e); sys.exit(0)
print(d.get("result", "<missing>") if isinstance(d, dict) else "<not an object>")' "$f"
}

leftover_tmp_files() { # prints any *.gpuprov-tmp-* file in the root
    find "$ROOT/etc" "$ROOT/usr/share/keyrings" "$ROOT/var/lib" "$ROOT/usr/local" -name '*.gpuprov-tmp-*' 2>/dev/null || true
}
assert_no_tmp_files() {
    local left
    left=$(leftover_tmp_files)
    if [[ -z "$left" ]]; then pass "no half-written *.gpuprov-tmp-* files"; else fail "half-written files left: $left"; fi
}

# The key and the source appear together or not at all (a source never exists without its key).
assert_source_has_key() { # SOURCES KEYRING
    if [[ -e "$ROOT$1" && ! -s "$ROOT$2" ]]; then fail "$1 exists without its key $2"
    else pass "$1 never without its key"; fi
}

# Every process whose root directory is this scenario's root (gpuprov, apt, dpkg, postinst...).
procs_in_root() {
    # one find instead of a readlink per process (-lname matches the link target literally)
    find /proc -mindepth 2 -maxdepth 2 -name root -lname "$ROOT" -printf '%h\n' 2>/dev/null |
        sed 's|^/proc/||' | grep -E '^[0-9]+$' || true
}
kill_procs_in_root() {
    # Killed again until none is left: a process forked between the listing and the kill (rpm
    # starting a scriptlet) is in no snapshot and outlives its killed parent.
    local pids i
    for ((i = 0; i < 20; i++)); do
        pids=$(procs_in_root)
        [[ -n "$pids" ]] || return 0
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null || true
        sleep 0.5
    done
    [[ -z "$(procs_in_root)" ]]
}

# build_package: scripts/package.sh's .deb and .rpm, built into $E2E_WORK/package once per run
# (17, 23 and 39 share it: the same tree gives the same package); sets DEB and RPM (empty when
# rpmbuild made none; a failed build fails and ends the scenario).
build_package() {
    local pkgdir=$E2E_WORK/package
    # 17 and 39 may run side by side (run.sh, E2E_JOBS): one builds, the other waits and reuses.
    mkdir -p "$pkgdir"
    exec 8>"$E2E_WORK/package.lock"
    flock -w 900 8 || { fail "could not lock $E2E_WORK/package.lock"; scenario_end; }
    if [[ -f "$pkgdir/.built" ]]; then
        log "reusing the package this run built ($(cat "$pkgdir/.built"))"
    elif "$REPO_ROOT/scripts/package.sh" "$pkgdir" >"$OUT/package.log" 2>&1; then
        printf '%s\n' "$SCENARIO" >"$pkgdir/.built"
    else
        fail "scripts/package.sh failed: $(tail -n 5 "$OUT/package.log")"
        scenario_end
    fi
    exec 8>&-
    DEB=$(ls "$pkgdir"/gpuprov_*.deb | head -n 1)
    RPM=$(find "$pkgdir" -name 'gpuprov-*.rpm' | head -n 1)
    pass "built $(basename "$DEB")${RPM:+ and $(basename "$RPM")}"
}

# assert_package_files: what the installed package (.deb or .rpm) puts in the root: the binary in
# /usr/bin (none under /usr/local), a man page that renders, bash and zsh completion, logrotate's
# configuration, the Prometheus rules and the Grafana dashboard.
assert_package_files() {
    assert_file "the binary" "$ROOT/usr/bin/gpuprov"
    assert_no_file "nothing under /usr/local" "$ROOT/usr/local/bin/gpuprov"
    assert_file "the man page" "$ROOT/usr/share/man/man1/gpuprov.1.gz"
    check "the man page renders (gpuprov(1), EXIT STATUS)" bash -c \
        "zcat '$ROOT/usr/share/man/man1/gpuprov.1.gz' | groff -man -Tascii -P-cbou 2>/dev/null | grep -q 'EXIT STATUS'"
    assert_file "bash completion" "$ROOT/usr/share/bash-completion/completions/gpuprov"
    assert_file "zsh completion" "$ROOT/usr/share/zsh/vendor-completions/_gpuprov"
    assert_grep "logrotate configuration for the log" '^/var/log/gpuprov.log \{' "$ROOT/etc/logrotate.d/gpuprov"
    assert_file "Prometheus alert rules" "$ROOT/usr/share/gpuprov/prometheus/gpuprov-alerts.yml"
    assert_file "Grafana dashboard" "$ROOT/usr/share/gpuprov/grafana/gpuprov-dashboard.json"
}

# apply_killed_in_slow_script: runs apply with /tmp/e2e-slow set, so cuda-toolkit-12-4's install
# script announces itself and sleeps 8 s, and SIGKILLs every process in the root (gpuprov, the
# package manager, the script) while it sleeps.
apply_killed_in_slow_script() {
    touch "$ROOT/tmp/e2e-slow"
    GP_STDOUT=$OUT/killed.stdout
    GP_STDERR=$OUT/killed.stderr
    in_root "$ROOT" 300 gpuprov apply "$PROFILE_IN_ROOT" --yes >"$GP_STDOUT" 2>"$GP_STDERR" &
    local bg=$!
    if wait_for 240 "cuda-toolkit-12-4's install script to start" test -s "$ROOT/tmp/e2e-slow-started"; then
        sleep 1
        log "killing every process in the root: $(procs_in_root | paste -sd' ')"
        kill_procs_in_root || fail "processes survived kill -9"
        wait "$bg" 2>/dev/null || true
        pass "gpuprov killed during the slow install script"
    else
        fail "the slow install script never started (apply exited early?)"
        tail -n 30 "$GP_STDERR" >&2 || true
        kill_procs_in_root || true
        wait "$bg" 2>/dev/null || true
    fi
    rm -f "$ROOT/tmp/e2e-slow"
}

# run_resume_unit UNIT: after a simulated reboot, runs the resume unit's own ExecStart (word
# split only, never evaluated by a shell) and asserts it ran the installed gpuprov; ends the
# scenario when the unit has no ExecStart.
run_resume_unit() {
    local execstart
    execstart=$(sed -n 's/^ExecStart=//p' "$ROOT$1" 2>/dev/null | head -n 1)
    if [[ -z "$execstart" ]]; then
        fail "no ExecStart to run after the reboot"
        scenario_end
    fi
    local argv
    read -r -a argv <<<"$execstart"
    check "ExecStart runs the installed gpuprov" test "${argv[0]}" = /usr/local/bin/gpuprov
    gp "${argv[@]:1}"
    expect_rc "resume unit's ExecStart after the reboot" 0
}

# upgrade_phase [ROOT]: the phase in gpuprov upgrade's record, /var/lib/gpuprov/upgrade.json
# ("none" without one); ROOT defaults to the scenario's.
upgrade_phase() {
    "$E2E_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["phase"])' \
        "${1:-$ROOT}/var/lib/gpuprov/upgrade.json" 2>/dev/null || echo none
}

# bundle_refusals ALTERED-FILE-RE MISSING-PACKAGE WHAT: the offline bundle's three refusals (e2e
# 56, 58) on the air-gapped root, each before any change: /root/bundle-altered.tar (one package
# file altered, named by the ERE), /root/bundle-other.tar (signed by $OTHER, not $FPR), and
# /root/bundle.tar (built for kernel $KA) on a host running $KB, refused at plan naming
# MISSING-PACKAGE. The scenario's host_state must print the same before and after them (WHAT
# says what it covers).
bundle_refusals() {
    local altered=$1 missing=$2 what=$3 before after
    before=$(host_state)
    gp apply "$PROFILE_IN_ROOT" --yes --from-bundle /root/bundle-altered.tar --bundle-key "$FPR"
    expect_rc "apply of a bundle with one package file altered" 1
    assert_grep "refusal names the altered file" "bundle file $altered.*(SHA-256|bytes).*nothing was changed" "$GP_STDERR"
    gp apply "$PROFILE_IN_ROOT" --yes --from-bundle /root/bundle-other.tar --bundle-key "$FPR"
    expect_rc "apply of a bundle signed by another key" 1
    assert_grep "refusal names both keys" "signed by key $OTHER, not by the pinned $FPR" "$GP_STDERR"
    echo "$KB" >"$ROOT/proc/sys/kernel/osrelease"
    gp plan "$PROFILE_IN_ROOT" --from-bundle /root/bundle.tar --bundle-key "$FPR"
    expect_rc "plan on a host running $KB with a bundle for $KA" 1
    assert_grep "refusal names the missing $missing" "$missing" "$GP_STDERR"
    echo "$KA" >"$ROOT/proc/sys/kernel/osrelease"
    after=$(host_state)
    if [[ "$after" == "$before" ]]; then pass "the refused runs changed nothing ($what)"; else
        fail "a refused run changed the host: $(diff <(echo "$before") <(echo "$after") | head -n 20)"
    fi
}

# assert_no_http_requests: gpuprov's log in the root has no GET of an http(s) URL.
assert_no_http_requests() {
    if grep -Eq 'GET (https?)://' "$ROOT/var/log/gpuprov.log"; then
        fail "the offline host made HTTP requests: $(grep -E 'GET https?://' "$ROOT/var/log/gpuprov.log" | head -n 3)"
    else pass "no HTTP request from the offline host"; fi
}

# planned_holds PLAN-JSON: "name version" of every install the plan marks held, sorted.
planned_holds() {
    "$E2E_PYTHON" -c 'import json, sys
t = json.load(open(sys.argv[1]))["transaction"]
for i in t["install"]:
    if i["hold"]: print(i["name"], i["version"])' "$1" | sort
}

# The toolkit on a login shell's PATH through gpuprov's profile.d snippet.
assert_nvcc_on_path() { # X.Y NVCC-VERSION
    assert_file "profile.d snippet" "$ROOT/etc/profile.d/gpuprov-cuda.sh"
    local out
    out=$(in_root "$ROOT" 10 sh -c '. /etc/profile.d/gpuprov-cuda.sh && nvcc --version' 2>&1 || true)
    check "nvcc $1 on PATH after sourcing /etc/profile.d/gpuprov-cuda.sh" grep -qF "release $1, V$2" <<<"$out"
}

scenario_end() {
    if [[ -n "$ROOT" ]]; then kill_procs_in_root || true; fi
    if ((E2E_FAILURES > 0)); then
        log "scenario $SCENARIO: $E2E_FAILURES assertion(s) failed"
        exit 1
    fi
    log "scenario $SCENARIO: all assertions passed"
    exit 0
}
