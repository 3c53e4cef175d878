#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (l) An admin installed branch 560 (cuda-drivers-560 and its closure) before gpuprov. The
# profile wants 550, which conflicts with it: apt would remove 560. The plan must say so, with
# versions, and be blocked; apply without --allow-remove must refuse before changing anything;
# with --allow-remove the plan names the removals, apply carries them out and converges.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

# The admin's install: NVIDIA's .debs fetched by hand and installed with apt, no repository.
POOL=$ROOT/root/debs
mkdir -p "$POOL"
debs=()
for p in cuda-drivers-560 nvidia-driver-560 nvidia-dkms-560 libnvidia-compute-560; do
    cp "$MIRROR_DIR/www/compute/cuda/repos/debian12/x86_64/${p}_560.35.03-1_amd64.deb" "$POOL/"
    debs+=("/root/debs/${p}_560.35.03-1_amd64.deb")
done
check "admin installs branch 560 from local .debs" \
    in_root "$ROOT" 120 apt-get -q -y -o DPkg::Lock::Timeout=60 install "${debs[@]}"
assert_pkg cuda-drivers-560 560.35.03-1
before=$(tree_digest "$ROOT" var/lib/dpkg etc)

gp plan "$PROFILE_IN_ROOT"
expect_rc "plan with an unowned removal is blocked" 1
for p in cuda-drivers-560 nvidia-driver-560 nvidia-dkms-560 libnvidia-compute-560; do
    assert_grep "plan names the removal of $p with its version" "remove +$p +560\.35\.03-1 .*not owned.*--allow-remove" "$GP_STDOUT"
done
assert_grep "plan shows what apt installs instead, at the planned build" "install +nvidia-driver-550 +$E2E_DRIVER_VERSION-1" "$GP_STDOUT"

gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json blocked too" 1
check "plan --json lists the removals, not owned, and blocks" "$E2E_PYTHON" -c 'import json, sys
t = json.load(open(sys.argv[1]))["transaction"]
rm = {r["name"]: (r["version"], r["owned"]) for r in t["remove"]}
want = {p: ("560.35.03-1", False) for p in ["cuda-drivers-560", "nvidia-driver-560", "nvidia-dkms-560", "libnvidia-compute-560"]}
sys.exit(0 if rm == want and t["blocked"] else 1)' "$GP_STDOUT"

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply without --allow-remove refuses" 1
assert_grep "apply says why and how" "allow-remove" <(gp_output)
assert_eq "nothing changed: dpkg database and /etc identical" "$before" "$(tree_digest "$ROOT" var/lib/dpkg etc)"
assert_pkg cuda-drivers-560 560.35.03-1

gp plan "$PROFILE_IN_ROOT" --allow-remove
expect_rc "plan --allow-remove is not blocked (changes pending)" 0
assert_grep "plan --allow-remove still names the removal" "remove +cuda-drivers-560 +560\.35\.03-1" "$GP_STDOUT"

gp apply "$PROFILE_IN_ROOT" --yes --allow-remove
expect_rc "apply --allow-remove converges" 0
for p in cuda-drivers-560 nvidia-driver-560 nvidia-dkms-560 libnvidia-compute-560; do assert_no_pkg "$p"; done
assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
check "the 550 module is loaded" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify" 0
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "converged: nothing to do, nothing to remove" 0
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"
scenario_end
