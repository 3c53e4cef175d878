#!/usr/bin/env bash
# (v) Local trust (issue 12): as root, apply refuses a profile, a parent profile or a binary that
# someone other than root could have changed (owned by another user, group/other-writable, or in
# a directory others can write without the sticky bit), names file, owner, mode and the fix, and
# changes nothing; --allow-untrusted lets the same run through; a root-owned profile in the
# sticky /tmp is fine. Before the units' binary exists, its directory is checked; a FIFO
# planted as /var/log/gpuprov.log is refused at once instead of blocking the run (issue 26).
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

DIRS=(etc var/lib/dpkg var/lib/apt var/lib/gpuprov usr/share/keyrings usr/local/bin)
before=$(tree_digest "$ROOT" "${DIRS[@]}")

# The issue's case: mode 0666, owned by nobody, in the 1777 /tmp.
install -m 0666 -o 65534 -g 65534 "$ROOT$PROFILE_IN_ROOT" "$ROOT/tmp/p.yaml"
gp apply /tmp/p.yaml --yes
expect_rc "world-writable profile owned by nobody" 1
check "names the profile" grep -q 'refusing the profile /tmp/p.yaml' <(gp_output)
check "names owner and mode" grep -q 'owner uid 65534, group gid 65534, mode 0666' <(gp_output)
check "says the fix and the override" grep -q 'chown root:root /tmp/p.yaml.*--allow-untrusted' <(gp_output)

# Root's file, but in a directory anyone may write (no sticky bit): someone can swap it.
install -d -m 0777 "$ROOT/srv/shared"
install -m 0644 "$ROOT$PROFILE_IN_ROOT" "$ROOT/srv/shared/p.yaml"
gp apply /srv/shared/p.yaml --yes
expect_rc "profile in a world-writable directory" 1
check "names the directory" grep -q 'directory /srv/shared (owner uid 0, group gid 0, mode 0777)' <(gp_output)

# The file it extends: is writable by others.
install -d -m 0755 "$ROOT/srv/profiles"
install -m 0646 "$ROOT$PROFILE_IN_ROOT" "$ROOT/srv/profiles/base.yaml"
printf 'name: child\nextends: base.yaml\n' >"$ROOT/srv/profiles/child.yaml"
gp apply /srv/profiles/child.yaml --yes
expect_rc "parent profile writable by others" 1
check "names the parent" grep -q 'refusing the parent profile (extends:) /srv/profiles/base.yaml' <(gp_output)

# The binary itself (copied for the units, run at boot) is group-writable.
chmod 0775 "$ROOT/usr/local/bin/gpuprov"
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "group-writable gpuprov binary" 1
check "names the binary" grep -Eq 'refusing the .*gpuprov binary.* /usr/local/bin/gpuprov' <(gp_output)
chmod 0755 "$ROOT/usr/local/bin/gpuprov"
assert_eq "nothing changed by the refused runs" "$before" "$(tree_digest "$ROOT" "${DIRS[@]}")"
assert_no_file "no journal" "$ROOT/var/lib/gpuprov/state.json"

# The operator vouches for it: the same world-writable profile gets past the check.
gp apply /tmp/p.yaml --yes --allow-untrusted --only preflight
expect_rc "--allow-untrusted" 0
check "no refusal" bash -c '! grep -q refusing "$1"' _ "$GP_STDERR"
# Root's own file in the sticky /tmp is trusted without the flag.
install -m 0644 -o 0 -g 0 "$ROOT$PROFILE_IN_ROOT" "$ROOT/tmp/root.yaml"
gp apply /tmp/root.yaml --yes --only preflight
expect_rc "root's profile in /tmp" 0

# The binary the units will run is not there yet (apply copies itself there): the directory it
# goes to is checked instead. An old Debian's root:staff 2775 /usr/local/bin (issue 26 item 8).
install -d -m 0755 "$ROOT/opt/gp"
mv "$ROOT/usr/local/bin/gpuprov" "$ROOT/opt/gp/gpuprov"
chgrp 50 "$ROOT/usr/local/bin"
chmod 2775 "$ROOT/usr/local/bin"
set +e
in_root "$ROOT" 300 /opt/gp/gpuprov apply "$PROFILE_IN_ROOT" --yes >"$OUT/units-dir.out" 2>&1
rc=$?
set -e
assert_eq "apply from /opt with a group-writable /usr/local/bin is refused" 1 "$rc"
assert_grep "names the directory and the binary it would hold" \
    'refusing the directory of the gpuprov binary the systemd units will run \(apply installs /usr/local/bin/gpuprov there\) /usr/local/bin: .*mode 2775' \
    "$OUT/units-dir.out"
assert_no_file "no binary was copied there" "$ROOT/usr/local/bin/gpuprov"
chmod 0755 "$ROOT/usr/local/bin"
chgrp 0 "$ROOT/usr/local/bin"
mv "$ROOT/opt/gp/gpuprov" "$ROOT/usr/local/bin/gpuprov"

# A FIFO planted as the log (/var/log is group-writable on Ubuntu): every root run went on
# waiting for a reader. Now it is refused at once, with a warning, and the run goes on.
rm -f "$ROOT/var/log/gpuprov.log"
mkfifo -m 0666 "$ROOT/var/log/gpuprov.log"
gp --timeout 120 facts
expect_rc "facts as root with a FIFO as its log" 0
assert_grep "warns that the FIFO is not its log" \
    'not logging to /var/log/gpuprov.log: /var/log/gpuprov.log: is a FIFO' "$GP_STDERR"
check "the FIFO is left as it was" test -p "$ROOT/var/log/gpuprov.log"
rm -f "$ROOT/var/log/gpuprov.log"
scenario_end
