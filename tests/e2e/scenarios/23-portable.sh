#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (t) One binary for every distro: the packaged gpuprov (scripts/package.sh's .deb, installed
# with apt) runs in Debian 11, 12 and 13 roots with only the libraries each one ships:
# --version, facts --json, status, and plan against the mirror, whose key and index downloads
# go through that distro's own libcurl and TLS library, opened only by the commands that fetch.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
mkdir -p "$OUT"

build_package
deb=$DEB
unpacked=$E2E_WORK/unpacked
dpkg-deb -x "$deb" "$unpacked"
check "the packaged binary passes scripts/check-portable.sh" \
    "$REPO_ROOT/scripts/check-portable.sh" "$unpacked/usr/bin/gpuprov"

# traced NAME ARGS...: runs gpuprov ARGS in the root with the dynamic loader's file trace;
# stdout goes to $OUT/NAME.out, RC is the exit code and LOADED the shared objects it opened.
traced() {
    local name=$1
    shift
    rm -f "$ROOT"/tmp/ld-trace.*
    set +e
    timeout -k 5 120 chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM=dumb NO_COLOR=1 LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/ld-trace \
        gpuprov "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    RC=$?
    set -e
    LOADED=$(cat "$ROOT"/tmp/ld-trace.* 2>/dev/null | sed -n 's/.*file=\([^ ]*\) \[0\];.*/\1/p' |
        sed 's|.*/||' | sort -u | tr '\n' ' ')
}

for suite in bullseye bookworm trixie; do
    case $suite in
    bullseye) release=11 ;; bookworm) release=12 ;; trixie) release=13 ;;
    esac
    ROOT=$(rootfs_new "$SCENARIO-$suite" "$([[ $suite == bookworm ]] || echo "$suite")")
    rootfs_simulate_host "$ROOT" nouveau
    rootfs_trust_ca "$ROOT" "$MIRROR_DIR/tls/ca.pem"
    rootfs_install_systemctl "$ROOT"
    # The profile runs containers through Docker (engine: none): without it plan blocks the step.
    rootfs_install_docker "$ROOT"
    render_profile 3bf863cc.pub
    check "Debian $release: the root is $suite" grep -q "^VERSION_ID=\"$release\"" "$ROOT/etc/os-release"
    cp "$deb" "$ROOT/root/"
    check "Debian $release: apt installs the .deb with the root's own libraries" \
        in_root "$ROOT" 120 apt-get -q -y install "/root/$(basename "$deb")"
    check "Debian $release: every library gpuprov needs resolves" \
        bash -c "! chroot '$ROOT' /usr/bin/ldd /usr/bin/gpuprov | grep -q 'not found'"

    gp --version
    expect_rc "Debian $release: gpuprov --version" 0
    assert_grep "Debian $release: --version prints the version" '^gpuprov [0-9]+\.[0-9]+\.[0-9]+$' "$GP_STDOUT"
    gp facts --json
    expect_rc "Debian $release: facts --json" 0
    check "Debian $release: facts --json is one JSON document naming debian $release and 4 GPUs" \
        "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
txt = json.dumps(d)
sys.exit(0 if ("\"debian\"" in txt and sys.argv[2] in txt and txt.count("0x20b2") + txt.count("20b2") >= 1) else 1)' \
        "$GP_STDOUT" "$release"
    gp status
    check "Debian $release: status runs (no run yet: exit 0 or 1, never a loader error)" \
        test "$GP_RC" -le 1
    check "Debian $release: status output has no loader error" \
        bash -c "! grep -q 'error while loading shared libraries' '$GP_STDOUT' '$GP_STDERR'"

    traced "facts-$suite" facts
    check "Debian $release: facts opens no libcurl or TLS library ($LOADED)" \
        bash -c "(($RC == 0)) && ! grep -qE 'libcurl|libssl|libgnutls' <<<'$LOADED'"

    # plan downloads the repository keys and signed indexes over HTTPS. Debian 12 is the target
    # this scenario's mirror and profile describe (Debian 13's own debian13 repository is
    # scenario 49's); on 11 and 13 the root says 12 too (os-release only),
    # so that plan resolves as on Debian 12 while every library stays the root's own.
    if [[ $suite != bookworm ]]; then
        sed -i 's/^VERSION_ID=.*/VERSION_ID="12"/; s/^VERSION_CODENAME=.*/VERSION_CODENAME=bookworm/' \
            "$ROOT/etc/os-release"
    fi
    mark=$(mirror_mark)
    traced "plan-$suite" plan "$PROFILE_IN_ROOT" --json
    check "Debian $release: plan against the HTTPS mirror (exit $RC)" test "$RC" -eq 0
    check "Debian $release: plan fetched the CUDA key and index over TLS" \
        test "$(mirror_count_since "$mark" '3bf863cc\.pub|Packages|Release')" -ge 2
    check "Debian $release: plan resolved the driver from the mirror's signed index" \
        grep -q '"cuda-drivers-550"' "$OUT/plan-$suite.out"
    check "Debian $release: plan opened the root's libcurl.so.4 ($LOADED)" \
        grep -q 'libcurl.so.4' <<<"$LOADED"
    rootfs_remove "$ROOT"
done
ROOT=""
scenario_end
