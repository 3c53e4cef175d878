#!/usr/bin/env bash
# (t) A driver installed with NVIDIA's .run installer: its installer in /usr/bin, its libraries
# in the library directory with no package owning them, its log. gpuprov must not install the
# driver packages over it: plan blocks the driver step with the evidence and the fix
# (`nvidia-installer --uninstall`); apply refuses before any step runs (not even nouveau's
# blacklist, which comes before the driver) and installs no package; facts and doctor say why.
# Once it is uninstalled, the same profile applies.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

V=550.90.07
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
# What the runfile leaves (nvidia-installer, with nvidia-uninstall a link to it; the log's header).
mkdir -p "$LIBDIR" "$ROOT/var/log"
printf '#!/bin/sh\necho "nvidia-installer stand-in: $*"\n' >"$ROOT/usr/bin/nvidia-installer"
chmod 0755 "$ROOT/usr/bin/nvidia-installer"
ln -s nvidia-installer "$ROOT/usr/bin/nvidia-uninstall"
: >"$LIBDIR/libnvidia-ml.so.$V"
ln -s "libnvidia-ml.so.$V" "$LIBDIR/libnvidia-ml.so.1"
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

# What `nvidia-installer --uninstall` removes; then the same profile goes through.
rm -f "$ROOT/usr/bin/nvidia-installer" "$ROOT/usr/bin/nvidia-uninstall" "$LIBDIR/libnvidia-ml.so.$V" "$LIBDIR/libnvidia-ml.so.1"
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan after the uninstall" 0
check "the driver step is pending now" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = next(s for s in d["steps"] if s["id"] == "driver")
sys.exit(0 if s["status"] == "pending" else repr(s))' "$GP_STDOUT"
scenario_end
