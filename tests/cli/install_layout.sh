#!/usr/bin/env bash
# `cmake --install` as a sysadmin runs it, with the default prefix (/usr/local) and with /usr,
# staged under DESTDIR: the binary lands under the prefix, and logrotate's rule for
# /var/log/gpuprov.log in /etc/logrotate.d, the only directory logrotate reads. A build that is
# not the portable release binary warns that it needs the build host's glibc; a release one not.
# Usage: install_layout.sh CMAKE BUILD_DIR PORTABLE(0|1)
set -euo pipefail
cmake=$1 build=$2 portable=$3
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$stage.err"' EXIT
fail=0
for prefix in /usr/local /usr; do
    rm -rf "${stage:?}"/*
    DESTDIR=$stage "$cmake" --install "$build" --prefix "$prefix" >/dev/null 2>"$stage.err"
    if grep -q "not the portable release build.*glibc" <(tr -d '\n' <"$stage.err"); then warned=1; else warned=0; fi
    if [[ "$warned" == 1 && "$portable" == 0 ]] || [[ "$warned" == 0 && "$portable" == 1 ]]; then
        echo "ok: --prefix $prefix: portable=$portable, glibc warning=$warned"
    else
        echo "FAIL: --prefix $prefix: portable=$portable but glibc warning=$warned: $(cat "$stage.err")"
        fail=1
    fi
    if [[ ! -x "$stage$prefix/bin/gpuprov" ]]; then
        echo "FAIL: --prefix $prefix: no $prefix/bin/gpuprov"
        fail=1
    fi
    rule=$stage/etc/logrotate.d/gpuprov
    if [[ -f "$rule" ]] && grep -q '^/var/log/gpuprov.log {' "$rule"; then
        echo "ok: --prefix $prefix: /etc/logrotate.d/gpuprov"
    else
        echo "FAIL: --prefix $prefix: no /etc/logrotate.d/gpuprov; the rule went to:" \
            "$(cd "$stage" && find . -path '*logrotate*' -type f | sed 's|^\.||' | tr '\n' ' ')"
        fail=1
    fi
done
exit "$fail"
