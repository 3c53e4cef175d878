#!/usr/bin/env bash
# (q) The package: scripts/package.sh builds the .deb from `cmake --install`; apt installs it
# in the root with the dependencies its control file names; gpuprov then runs from /usr/bin,
# the units it writes run /usr/bin/gpuprov, and the man page, completion and logrotate
# configuration are where the tools look for them.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin nouveau --no-gpuprov

build_package
deb=$DEB
# Debian's own package checks: no error or warning (the overrides it ships give their reasons).
if lintian --fail-on error,warning "$deb" >"$OUT/lintian.log" 2>&1; then pass "lintian: no error or warning"; else
    fail "lintian: $(grep -E '^[EW]: ' "$OUT/lintian.log" | head -n 10 | tr '\n' ';')"
fi
cp "$deb" "$ROOT/root/"
# The roots are slimmed like Docker's images (no man pages); a sysadmin's host has them.
sed -i '\|/usr/share/man|d' "$ROOT/etc/dpkg/dpkg.cfg.d/01-e2e-slim"
check "apt installs the .deb" in_root "$ROOT" 120 apt-get -q -y install "/root/$(basename "$deb")"
check "dpkg --audit is clean after the install" test -z "$(dpkg_audit)"
assert_package_files
out=$(in_root "$ROOT" 10 gpuprov --version 2>&1 || true)
assert_grep "gpuprov --version from /usr/bin" '^gpuprov [0-9]+\.[0-9]+\.[0-9]+$' <(printf '%s\n' "$out")

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply from the packaged binary (nouveau loaded: reboot needed)" 3
assert_grep "the resume unit runs the packaged binary" '^ExecStart=/usr/bin/gpuprov apply ' \
    "$ROOT/etc/systemd/system/gpuprov-resume.service"
assert_no_file "apply copied no binary of its own" "$ROOT/usr/local/bin/gpuprov"
check "the units never name /usr/local/bin" bash -c "! grep -rl /usr/local/bin/gpuprov '$ROOT/etc/systemd/system'"

# Completion: bash-completion's own loader finds the file and completes commands and step ids.
if [[ -r /usr/share/bash-completion/bash_completion ]]; then
    comp=$(bash -c 'source /usr/share/bash-completion/bash_completion
        source "$1"
        COMP_WORDS=(gpuprov pl); COMP_CWORD=1; COMP_LINE="gpuprov pl"; COMP_POINT=${#COMP_LINE}
        _gpuprov; printf "%s\n" "${COMPREPLY[@]}"
        COMP_WORDS=(gpuprov apply cv-train --skip cudnn,mo); COMP_CWORD=4; COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
        _gpuprov; printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/usr/share/bash-completion/completions/gpuprov")
    assert_eq "bash completion: commands, then comma-separated step ids" "$(printf 'plan\ncudnn,monitoring')" "$comp"
else
    log "bash-completion is not installed on this host: completion not exercised"
fi
scenario_end
