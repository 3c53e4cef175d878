# shellcheck shell=bash
# The bench's Debian 12 root: the e2e suite's cached base root plus python3 and python3-apt, which
# Ansible's apt and dpkg_selections modules need on the managed host. Built once from the Debian
# archive (network), cached next to the e2e root as $E2E_CACHE/bench-root-<key>; the e2e cache's
# own clean-up only removes root-* directories, so the two never evict each other.
# Needs lib/rootfs.sh and lib/common.sh sourced.

BENCH_ROOT_EXTRA="python3,python3-apt"
BENCH_ROOT_RECIPE=1

bench_root_base() { # prints the cached bench root, building it when absent
    local base key dir
    base=$(rootfs_base) || return 1
    key=$(printf '%s|%s|%s\n' "$(basename "$base")" "$BENCH_ROOT_EXTRA" "$BENCH_ROOT_RECIPE" | sha256sum | cut -c1-16)
    dir="$E2E_CACHE/bench-root-$key"
    (
        flock -w 900 9 || die "could not lock $E2E_CACHE/.bench-lock within 900 s"
        if [[ -f "$dir/.bench-complete" ]]; then exit 0; fi
        find "$E2E_CACHE" -mindepth 1 -maxdepth 1 -type d -name 'bench-root-*' ! -name "bench-root-$key" -exec rm -rf {} +
        local tmp="$dir.tmp.$$" t0=$SECONDS
        rm -rf "$tmp"
        cp -a --reflink=auto "$base" "$tmp"
        rm -f "$tmp/.e2e-complete"
        log "bench root: installing ${BENCH_ROOT_EXTRA//,/ } from $DEBIAN_MIRROR into a copy of the e2e root"
        printf 'deb %s %s main\n' "$DEBIAN_MIRROR" "$ROOTFS_SUITE" >"$tmp/etc/apt/sources.list"
        cp -L /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
        # shellcheck disable=SC2046 # the package list is split on purpose
        if ! { in_root "$tmp" 600 apt-get update -q &&
            in_root "$tmp" 600 apt-get install -y -q --no-install-recommends $(tr , ' ' <<<"$BENCH_ROOT_EXTRA"); } \
            >"$E2E_CACHE/bench-root.log" 2>&1; then
            tail -n 20 "$E2E_CACHE/bench-root.log" >&2
            rm -rf "$tmp"
            die "could not install ${BENCH_ROOT_EXTRA} into the bench root (log: $E2E_CACHE/bench-root.log)"
        fi
        # Offline again, like the e2e root.
        printf '# gpuprov bench: Debian archive removed on purpose (offline test host)\n' >"$tmp/etc/apt/sources.list"
        rm -rf "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/*.bin
        mkdir -p "$tmp/var/lib/apt/lists/partial"
        rootfs_slim "$tmp"
        touch "$tmp/.bench-complete"
        mv "$tmp" "$dir"
        log "bench root built in $((SECONDS - t0)) s"
    ) 9>"$E2E_CACHE/.bench-lock" || return 1
    printf '%s\n' "$dir"
}
