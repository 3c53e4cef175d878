#!/usr/bin/env bash
# `cmake --install` as a sysadmin runs it, with the default prefix (/usr/local) and with /usr,
# staged under DESTDIR: the binary lands under the prefix, and logrotate's rule for
# /var/log/gpuprov.log in /etc/logrotate.d, the only directory logrotate reads.
# Usage: install_layout.sh CMAKE BUILD_DIR
set -euo pipefail
cmake=$1 build=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail=0
for prefix in /usr/local /usr; do
    rm -rf "${stage:?}"/*
    DESTDIR=$stage "$cmake" --install "$build" --prefix "$prefix" >/dev/null
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
