# shellcheck shell=bash
# Start/stop the HTTPS test mirror and drive its fault injection.

MIRROR_DIR=${MIRROR_DIR:-} # set by mirror_start
MIRROR_PORT=${MIRROR_PORT:-}
MIRROR_PID=${MIRROR_PID:-}
# The server must run on the system python (stdlib only); pyenv shims can be absent in CI.
E2E_PYTHON=${E2E_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
# Two driver graphs on the one mirror (docs/e2e.md). The legacy tree, compute/cuda/repos/<slug>/,
# carries the hand-written stand-ins (mirror/build.sh driver_build), which most scenarios use:
# branch 550's newest and older build, branch 535's newest (scenario 00 checks apt agrees).
E2E_DRIVER_VERSION=550.90.07
E2E_DRIVER_OLDER=550.54.15
E2E_DRIVER_535=535.183.01
# A newer build of branch 550's userspace packages alone (no nvidia-dkms-550 of it), in its own
# tree below www/ that only scenario 53 adds as a source (mirror/build.sh).
E2E_DRIVER_USERSPACE_ONLY=550.90.12
E2E_USERSPACE_ONLY_REPO=e2e-userspace-only/compute/cuda/repos/debian12/x86_64
# That build whole, its nvidia-dkms-550 included (also scenario 53 only).
E2E_DRIVER_NEXT_REPO=e2e-driver-next/compute/cuda/repos/debian12/x86_64
# Ubuntu 24.04's archive for Secure Boot hosts (scenario 54, mirror/ubuntu_archive.py): as gpuprov
# finds it (the running kernel's ABI) and after a kernel update is published.
E2E_UBUNTU_ARCHIVE=ubuntu-archive/noble
E2E_UBUNTU_ARCHIVE_NEXT=ubuntu-archive/noble-next
E2E_UBUNTU_KERNEL=6.8.0-50-generic E2E_UBUNTU_KERNEL_NEXT=6.8.0-51-generic
E2E_UBUNTU_580_SERVER=580.95.05
# The 2026 tree, $E2E_TREE_2026/<slug>/, carries NVIDIA's recorded graph (tests/fixtures/nvidia-repos;
# scenarios 29 and 43 and profiles/e2e-2026.yaml.in use it), the newest and the older build per
# branch. Ubuntu (ubuntu2404; ubuntu2204 has 580, 595 and 610): revisions <version>-1ubuntu1, fabric
# manager/NSCQ/IMEX at <version>-1 on 580 and -1ubuntu1 from 595; branch 620 is published only to
# prove nothing drifts to it.
E2E_TREE_2026=nvidia-2026/compute/cuda/repos
E2E_U580=580.159.04 E2E_U580_OLDER=580.126.16
E2E_U595=595.91.07 E2E_U595_OLDER=595.71.05
E2E_U610=610.57.04 E2E_U610_OLDER=610.43.02
E2E_U620=620.70.06
# debian12 (Debian's names, revisions <version>-1; nothing newer than 595 there).
E2E_D580=580.126.16 E2E_D580_OLDER=580.105.08
E2E_D595=595.91.07 E2E_D595_OLDER=595.71.05

mirror_build() { # OUTDIR: the apt half, then the rpm half signed with the same throwaway key
    bash "$E2E_DIR/mirror/build.sh" "$1" >&2 &&
        E2E_RPM_CACHE=${E2E_CACHE:-} bash "$E2E_DIR/mirror/build-rpm.sh" "$1" >&2
}

# mirror_cache_key: a hash of everything the mirror is built from: its scripts, the stand-ins it
# packages (all of lib/, which over-invalidates but cannot miss one), the recorded indexes it is
# built from, the host files it packages and the versions of the tools that build and sign it.
mirror_cache_key() {
    local root=$E2E_DIR/../..
    {
        (cd "$root" && find tests/e2e/mirror tests/e2e/lib tests/fixtures/nvidia-repos tests/fixtures/ubuntu-archive \
            -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
        cat /usr/lib/python3/dist-packages/dnf-plugins/versionlock.py
        local t
        for t in dpkg-deb apt-ftparchive gpg rpmbuild rpmsign createrepo_c openssl cc; do "$t" --version 2>&1 | head -n 1; done
        "$E2E_PYTHON" --version
    } | sha256sum | cut -c1-16
}

# mirror_build_cached OUTDIR: mirror_build, kept under $E2E_CACHE (as the roots are) keyed by
# mirror_cache_key, so a run whose inputs did not change copies the mirror instead of building it
# (about 2 to 3 minutes of CI's setup on 2 cores). Packages, indexes and signing keys come from
# the cache; the TLS certificates are new on every run (mirror/tls.sh), as they expire in 2 days.
# A copy, not links: scenarios change their mirror's files. The bench's scaled mirrors
# (MIRROR_SCALE, MIRROR_INDEX_PAD) are built every time.
mirror_build_cached() {
    local out=$1
    if [[ -z "${E2E_CACHE:-}" || -n "${MIRROR_SCALE:-}${MIRROR_INDEX_PAD:-}" ]]; then
        mirror_build "$out"
        return
    fi
    local key cached
    key=$(mirror_cache_key) || return 1
    cached="$E2E_CACHE/mirror-$key"
    mkdir -p "$E2E_CACHE"
    (
        flock -w 900 9 || { echo "mirror_build_cached: could not lock $E2E_CACHE/.mirror-lock" >&2; exit 1; }
        if [[ ! -f "$cached/.complete" ]]; then
            find "$E2E_CACHE" -mindepth 1 -maxdepth 1 -name 'mirror-*' -exec rm -rf {} +
            mirror_build "$out" || exit 1
            mkdir -p "$cached"
            (cd "$out" && tar --exclude=./tls -cf - .) | (cd "$cached" && tar -xf -) || exit 1
            touch "$cached/.complete"
            exit 0
        fi
        echo "mirror: from the cache ($cached)" >&2
        rm -rf "$out" && mkdir -p "$out" || exit 1
        (cd "$cached" && tar --exclude=./.complete -cf - .) | (cd "$out" && tar -xf -) || exit 1
        bash "$E2E_DIR/mirror/tls.sh" "$out/tls"
    ) 9>"$E2E_CACHE/.mirror-lock"
}

mirror_start() { # OUTDIR (already built)
    MIRROR_DIR=$1
    rm -f "$MIRROR_DIR/port" "$MIRROR_DIR/requests.log"
    printf '{}\n' >"$MIRROR_DIR/control.json"
    : >"$MIRROR_DIR/requests.log"
    "$E2E_PYTHON" "$E2E_DIR/mirror/server.py" --root "$MIRROR_DIR/www" \
        --cert "$MIRROR_DIR/tls/server.pem" --key "$MIRROR_DIR/tls/server.key" \
        --port-file "$MIRROR_DIR/port" --control "$MIRROR_DIR/control.json" \
        --log "$MIRROR_DIR/requests.log" 2>"$MIRROR_DIR/server.stderr" &
    MIRROR_PID=$!
    wait_for 15 "mirror port file" test -s "$MIRROR_DIR/port" || {
        cat "$MIRROR_DIR/server.stderr" >&2; die "mirror server did not start"; }
    MIRROR_PORT=$(cat "$MIRROR_DIR/port")
    export MIRROR_DIR MIRROR_PORT MIRROR_PID
    # Prove TLS + CA from the host before any scenario relies on it.
    local url="https://127.0.0.1:$MIRROR_PORT/compute/cuda/repos/debian12/x86_64/InRelease"
    if command -v curl >/dev/null; then
        curl -fsS --max-time 10 --cacert "$MIRROR_DIR/tls/ca.pem" -o /dev/null "$url" ||
            die "mirror not reachable over HTTPS with its CA: $url"
    else
        openssl s_client -connect "127.0.0.1:$MIRROR_PORT" -CAfile "$MIRROR_DIR/tls/ca.pem" \
            -verify_return_error -verify_ip 127.0.0.1 </dev/null >/dev/null 2>&1 ||
            die "mirror TLS verification failed on port $MIRROR_PORT"
    fi
    log "mirror on https://127.0.0.1:$MIRROR_PORT/ (pid $MIRROR_PID, key $(mirror_fingerprint))"
}

mirror_stop() {
    if [[ -n "$MIRROR_PID" ]] && kill -0 "$MIRROR_PID" 2>/dev/null; then
        kill "$MIRROR_PID" 2>/dev/null || true
        local i
        for ((i = 0; i < 25; i++)); do kill -0 "$MIRROR_PID" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$MIRROR_PID" 2>/dev/null || true
    fi
    MIRROR_PID=""
}

mirror_url() { printf 'https://127.0.0.1:%s/%s' "$MIRROR_PORT" "${1:-}"; }

# mirror_apt_source ROOT NAME TREE: a flat repository of the mirror (TREE/ under www/, e.g.
# debian/ or debian-kernel/, a distribution's archive as a connected host has it) as the root's
# deb822 source /etc/apt/sources.list.d/e2e-NAME.sources, signed by the mirror's key in
# /usr/share/keyrings/e2e-NAME.gpg. The scenario runs apt-get update.
mirror_apt_source() {
    local r=$1 name=$2 tree=$3
    gpg --dearmor <"$MIRROR_DIR/www/compute/cuda/repos/debian12/x86_64/3bf863cc.pub" >"$r/usr/share/keyrings/e2e-$name.gpg"
    printf 'Types: deb\nURIs: %s\nSuites: /\nSigned-By: /usr/share/keyrings/e2e-%s.gpg\n' \
        "$(mirror_url "$tree/")" "$name" >"$r/etc/apt/sources.list.d/e2e-$name.sources"
}
mirror_fingerprint() { cat "$MIRROR_DIR/fingerprint"; }
mirror_wrong_fingerprint() { cat "$MIRROR_DIR/wrong-fingerprint"; }

# mirror_fault REGEX ACTION [REGEX ACTION ...]: replace the fault table (atomically).
mirror_fault() {
    local tmp="$MIRROR_DIR/control.json.tmp"
    "$E2E_PYTHON" -c 'import json, sys
a = sys.argv[1:]
json.dump(dict(zip(a[0::2], a[1::2])), sys.stdout)' "$@" >"$tmp"
    mv "$tmp" "$MIRROR_DIR/control.json"
}
mirror_clear_faults() { printf '{}\n' >"$MIRROR_DIR/control.json.tmp" && mv "$MIRROR_DIR/control.json.tmp" "$MIRROR_DIR/control.json"; }

# Request log helpers. mirror_mark prints the current line count; mirror_count_since MARK REGEX
# counts logged requests after MARK whose path matches REGEX.
mirror_mark() { wc -l <"$MIRROR_DIR/requests.log"; }
mirror_count_since() {
    tail -n +"$(($1 + 1))" "$MIRROR_DIR/requests.log" | "$E2E_PYTHON" -c 'import json, re, sys
rx = re.compile(sys.argv[1])
print(sum(1 for line in sys.stdin if line.strip() and rx.search(json.loads(line)["path"])))' "$2"
}
