#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (m) Holds that hold. NVIDIA's cuda-drivers-550 depends on nvidia-driver-550 with >=, so the
# whole closure apt installs is held, at exactly the versions the plan printed; apt then refuses
# to move any of it. hold_kernel holds the kernel metapackages (linux-image-amd64 would bring a
# new ABI kernel the DKMS module was never built for), not only the running kernel's image.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

# The host's kernel packaging, from the mirror's debian-kernel repository (a Debian mirror).
mirror_apt_source "$ROOT" debian debian-kernel
check "apt-get update (kernel repository)" in_root "$ROOT" 120 apt-get -q update
check "the running kernel's packages, an older metapackage" in_root "$ROOT" 120 apt-get -q -y install \
    linux-image-amd64=6.1.119-1 linux-headers-amd64=6.1.119-1
assert_pkg linux-image-6.1.0-28-amd64 6.1.119-1

cat >"$ROOT/etc/gpuprov/e2e-holds.yaml" <<'YAML'
name: e2e-holds
extends: /etc/gpuprov/e2e.yaml
driver: {hold_kernel: true}
YAML
P=/etc/gpuprov/e2e-holds.yaml

gp plan "$P" --json
expect_rc "plan" 0
planned=$(planned_holds "$GP_STDOUT")
log "planned held packages: $(paste -sd, <<<"$planned")"
for p in cuda-drivers-550 nvidia-driver-550 nvidia-dkms-550 libnvidia-compute-550; do
    check "plan marks $p held at $E2E_DRIVER_VERSION-1" grep -qx "$p $E2E_DRIVER_VERSION-1" <<<"$planned"
done
check "the container toolkit's libnvidia-container is not driver packaging" bash -c "! grep -q libnvidia-container <<<'$planned'"

gp apply "$P" --yes
expect_rc "apply" 0
held=$(holds | sort)
log "held: $(paste -sd, <<<"$held")"
while read -r name version; do
    [[ -n "$name" ]] || continue
    check "$name held" grep -qx "$name" <<<"$held"
    assert_pkg "$name" "$version"
done <<<"$planned"
for p in linux-image-amd64 linux-headers-amd64 linux-image-6.1.0-28-amd64 linux-headers-6.1.0-28-amd64; do
    check "hold_kernel holds $p" grep -qx "$p" <<<"$held"
done

# apt itself now refuses to move the driver to the branch's other build; the same request with
# the holds overridden resolves, so the holds are what stops it.
older=()
for p in cuda-drivers-550 nvidia-driver-550 nvidia-dkms-550 libnvidia-compute-550; do older+=("$p=$E2E_DRIVER_OLDER-1"); done
check "without the holds apt could move the driver" \
    in_root "$ROOT" 60 apt-get -s -y --allow-downgrades --allow-change-held-packages install "${older[@]}"
set +e
out=$(in_root "$ROOT" 60 apt-get -s -y --allow-downgrades install "${older[@]}" 2>&1)
rc=$?
set -e
check "apt refuses to change the held driver (exit $rc)" test "$rc" -ne 0
if grep -q "Held packages were changed" <<<"$out"; then pass "... because it is held"; else
    fail "... because it is held: apt said: $(tail -n 3 <<<"$out")"; fi
# A newer ABI kernel is published (6.1.0-31); unattended upgrades must not bring it.
out=$(in_root "$ROOT" 60 apt-get -s -y dist-upgrade 2>&1)
check "dist-upgrade keeps the kernel metapackage back" bash -c "! grep -q '^Inst linux-image' <<<\"\$1\"" _ "$out"
check "dist-upgrade installs no NVIDIA package" bash -c "! grep -Eq '^Inst (cuda-drivers|nvidia-|libnvidia-compute)' <<<\"\$1\"" _ "$out"

gp plan "$P" --detailed-exitcode
expect_rc "converged: the holds are part of the state" 0
# Someone unholds one package of the closure: the plan notices and the apply re-holds it.
in_root "$ROOT" 30 apt-mark unhold nvidia-dkms-550 >/dev/null
gp plan "$P" --detailed-exitcode
expect_rc "an unheld closure package is a pending change" 2
assert_grep "the plan holds it again" "apt-mark hold .*nvidia-dkms-550" "$GP_STDOUT"
gp apply "$P" --yes
expect_rc "apply re-holds" 0
check "nvidia-dkms-550 held again" grep -qx nvidia-dkms-550 <(holds)
scenario_end
