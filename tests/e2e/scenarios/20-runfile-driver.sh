#!/usr/bin/env bash
# (t) A driver installed with NVIDIA's .run installer: its installer in /usr/bin, its libraries
# in the library directory with no package owning them, its log. gpuprov must not install the
# driver packages over it: plan blocks the driver step with the evidence and the fix
# (`nvidia-installer --uninstall`); apply refuses before any step runs (not even nouveau's
# blacklist, which comes before the driver) and installs no package; facts and doctor say why.
# With `driver.replace_runfile: true` the same host converges: apply runs the runfile's own
# uninstaller before the package transaction, and a second run is a no-op.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

V=550.90.07
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
# What the runfile leaves (nvidia-installer, with nvidia-uninstall a link to it; the log's header;
# its libraries, one the driver packages do not ship). The stand-in installer uninstalls as the
# real one does with `--uninstall --silent` (or as nvidia-uninstall): removes the files it
# installed (its record of them stands in for the real installer's), itself and nvidia-uninstall
# included, and writes /var/log/nvidia-uninstall.log; an unknown option is an error (exit 1), and
# without --silent it would ask questions on a terminal gpuprov does not give it (exit 1).
mkdir -p "$LIBDIR" "$ROOT/var/log" "$ROOT/var/lib/nvidia"
cat >"$ROOT/usr/bin/nvidia-installer" <<'SH'
#!/bin/sh
uninstall=0 silent=0
[ "$(basename "$0")" = nvidia-uninstall ] && uninstall=1
for a in "$@"; do
    case "$a" in
        --uninstall) uninstall=1 ;;
        -s | --silent) silent=1 ;;
        *) echo "ERROR: Unrecognized option: '$a'; try 'nvidia-installer --help'." >&2; exit 1 ;;
    esac
done
[ "$uninstall" = 1 ] || { echo "ERROR: this stand-in only uninstalls" >&2; exit 1; }
[ "$silent" = 1 ] || { echo "ERROR: no terminal to ask the uninstall questions on" >&2; exit 1; }
log=/var/log/nvidia-uninstall.log
echo "nvidia-installer log file '$log'" >"$log"
while read -r f; do rm -f "$f" && echo "-> Removed $f" >>"$log"; done </var/lib/nvidia/log
rm -f /var/lib/nvidia/log
echo "-> Uninstallation of existing driver is complete." >>"$log"
SH
chmod 0755 "$ROOT/usr/bin/nvidia-installer"
ln -s nvidia-installer "$ROOT/usr/bin/nvidia-uninstall"
: >"$LIBDIR/libnvidia-ml.so.$V"
ln -s "libnvidia-ml.so.$V" "$LIBDIR/libnvidia-ml.so.1"
: >"$LIBDIR/libnvidia-ptxjitcompiler.so.$V"
printf '%s\n' "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.$V" /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 \
    "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.$V" /usr/bin/nvidia-uninstall \
    /usr/bin/nvidia-installer >"$ROOT/var/lib/nvidia/log"
for args in "--uninstall --silent --no-such-option" "--uninstall"; do
    # shellcheck disable=SC2086 # the options, word by word
    if in_root "$ROOT" 10 nvidia-installer $args 2>/dev/null; then
        fail "the stand-in installer must refuse '$args'"
    else pass "the stand-in installer refuses '$args' (exit 1)"; fi
done
assert_file "and uninstalls nothing then" "$ROOT/usr/bin/nvidia-installer"
printf "nvidia-installer log file '/var/log/nvidia-installer.log'\ncreation time: Tue Jun 18 10:12:03 2024\ninstaller version: %s\n" "$V" \
    >"$ROOT/var/log/nvidia-installer.log"

gp facts --json
expect_rc "facts --json" 0
check "facts report the runfile driver $V" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))["runfile_driver"]
sys.exit(0 if d and d["version"] == sys.argv[2] and len(d["evidence"]) == 3 else repr(d))' "$GP_STDOUT" "$V"

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan is blocked" 1
check "the driver step is blocked with the uninstall fix and installs nothing" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = next(s for s in d["steps"] if s["id"] == "driver")
ok = s["status"] == "blocked" and "nvidia-installer --uninstall" in s["reason"] and not s["installs"]
sys.exit(0 if ok else repr(s))' "$GP_STDOUT"

before=$(tree_digest "$ROOT" var/lib/dpkg usr/lib/x86_64-linux-gnu usr/bin)
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply stops at the driver step" 1
assert_grep "apply says what to run" "nvidia-installer --uninstall" <(gp_output)
assert_eq "no package installed, the runfile's files untouched" "$before" \
    "$(tree_digest "$ROOT" var/lib/dpkg usr/lib/x86_64-linux-gnu usr/bin)"
check "the journal has the driver step blocked" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = next(s for s in d["steps"] if s["id"] == "driver")
sys.exit(0 if s["status"] == "blocked" else repr(s))' "$ROOT/var/lib/gpuprov/state.json"
assert_no_file "the steps before the driver did not run" "$ROOT/etc/modprobe.d/blacklist-nouveau.conf"
assert_no_pkg nvidia-driver-550
assert_no_pkg cuda-drivers-550

gp doctor --json
check "doctor explains the runfile driver" grep -q '"runfile-driver"' "$GP_STDOUT"

check "doctor offers driver.replace_runfile" grep -q 'driver.replace_runfile: true' "$GP_STDOUT"

# driver.replace_runfile: true: the plan shows the uninstall first, apply runs it before the one
# package transaction, and the runfile is gone.
cat >"$ROOT/etc/gpuprov/e2e-replace.yaml" <<'YAML'
name: e2e-replace
extends: /etc/gpuprov/e2e.yaml
driver: {replace_runfile: true}
YAML
P=/etc/gpuprov/e2e-replace.yaml
gp plan "$P" --json
expect_rc "plan with replace_runfile" 0
check "the driver step is pending with the uninstall as its first change" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = next(s for s in d["steps"] if s["id"] == "driver")
first = s["changes"][0]
ok = (s["status"] == "pending" and first["kind"] == "command"
      and first["target"] == "/usr/bin/nvidia-installer --uninstall --silent"
      and any(i["name"] == "cuda-drivers-550" for i in s["installs"]))
sys.exit(0 if ok else repr(s))' "$GP_STDOUT"

gp apply "$P" --yes
expect_rc "apply replaces the runfile driver" 0
for f in /usr/bin/nvidia-installer /usr/bin/nvidia-uninstall "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.$V"; do
    assert_no_file "the uninstaller removed $f" "$ROOT$f"
done
assert_grep "the uninstaller wrote its log" 'Uninstallation of existing driver is complete' "$ROOT/var/log/nvidia-uninstall.log"
assert_eq "libnvidia-ml.so.$V is the package's now" "libnvidia-compute-550" \
    "$(in_root "$ROOT" 30 dpkg -S "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.$V" | cut -d: -f1)"
assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
LOG=$ROOT/var/log/gpuprov.log
at() { grep -n "$1" "$LOG" | head -n 1 | cut -d: -f1; }
# shellcheck disable=SC2016 # backticks: gpuprov's log quotes commands with them
u=$(at 'run `/usr/bin/nvidia-installer --uninstall --silent` -> exit 0')
i=$(at 'run `apt-get install ')
check "the uninstall ran (log line ${u:-none}) before the package transaction (${i:-none})" \
    test "${u:-0}" -gt 0 -a "${i:-0}" -gt "${u:-0}"
assert_eq "journal result" "done" "$(journal_result)"
gp facts --json
check "facts see no runfile driver any more" "$E2E_PYTHON" -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["runfile_driver"] is None else 1)' "$GP_STDOUT"
gp doctor --json
check "doctor finds no runfile driver, and the installer's old log is no conflict" bash -c \
    "! grep -q '\"runfile-driver' '$GP_STDOUT'"

before=$(tree_digest "$ROOT" var/lib/dpkg usr/bin)
gp plan "$P" --detailed-exitcode
expect_rc "the replaced host plans as a no-op" 0
gp apply "$P" --yes
expect_rc "a second apply" 0
assert_eq "the second apply changed no package and no binary" "$before" "$(tree_digest "$ROOT" var/lib/dpkg usr/bin)"
check "the uninstaller ran once" test "$(grep -c 'run `/usr/bin/nvidia-installer' "$LOG")" -eq 1
scenario_end
