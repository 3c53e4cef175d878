#!/usr/bin/env bash
# (issue 25 item 4) Rollback after a branch change (docs/rollback.md): gpuprov installed branch
# 535 (CUDA 12.2, held) and verified it; the operator's profile moves to 550 (CUDA 12.4), apply
# and the resumed run after the reboot verify it. `gpuprov rollback` plans the 535 closure back
# with apt's own transaction, reinstalls exactly the versions the journal recorded as verified
# (the 550 packages removed, NCCL/cuDNN downgraded), stops for the reboot the module change
# needs, and the resume unit finishes it as a rollback: the holds are as before and verify
# passes. A second rollback is a no-op.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
# Ubuntu 22.04's slug, as 14-branch-change: the mirror's CUDA 12.2 and branch 535 live there.
rm -f "$ROOT/etc/os-release"
cp "$REPO_ROOT/tests/fixtures/e2e/os-release/ubuntu-22.04" "$ROOT/etc/os-release"

site=/etc/gpuprov/site.yaml
write_site() { # BRANCH CUDA: the operator's one profile file, edited in place
    cat >"$ROOT$site" <<YAML
name: site
extends: /etc/gpuprov/e2e.yaml
driver: {branch: "$1"}
cuda: {version: "$2"}
YAML
}
journal_json() { # PYTHON-EXPRESSION over the journal `j`
    "$E2E_PYTHON" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$ROOT/var/lib/gpuprov/state.json" "$1"
}

# --- A: branch 535 ------------------------------------------------------------------------------
write_site 535 12.2
cp "$ROOT$site" "$ROOT/etc/gpuprov/site-535.yaml"
gp apply "$site" --yes
expect_rc "apply branch 535" 0
assert_pkg cuda-drivers-535 "$E2E_DRIVER_535-1"
gp verify "$site"
expect_rc "verify on 535" 0
assert_eq "one verified closure" 1 "$(journal_json 'len(j["verified"])')"
assert_eq "it is branch 535's" 535 "$(journal_json 'j["verified"][0]["driver_branch"]')"
journal_json '"\n".join(k + " " + v for k, v in sorted(j["verified"][0]["packages"].items()))' \
    >"$OUT/closure-535.txt"
check "the closure names the driver at its version" grep -qx "cuda-drivers-535 $E2E_DRIVER_535-1" "$OUT/closure-535.txt"
check "the closure names the toolkit" grep -q "^cuda-toolkit-12-2 " "$OUT/closure-535.txt"
check "the closure names NCCL" grep -q "^libnccl2 .*+cuda12.2$" "$OUT/closure-535.txt"
holds | sort >"$OUT/holds-535.txt"
check "535 closure held" grep -qx cuda-drivers-535 "$OUT/holds-535.txt"

gp rollback --plan
expect_rc "rollback with one verified closure is refused" 1
assert_grep "and says there is no earlier one" "no earlier one to go back to" "$GP_STDERR"

# --- B: the profile moves to 550 ----------------------------------------------------------------
write_site 550 12.4
gp apply "$site" --yes
expect_rc "apply of the change stops for the reboot" 3
rootfs_reboot "$ROOT"
run_resume_unit /etc/systemd/system/gpuprov-resume.service
gp verify "$site"
expect_rc "verify on 550" 0
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_eq "two verified closures" 2 "$(journal_json 'len(j["verified"])')"
assert_eq "the newest is 550's" 550 "$(journal_json 'j["verified"][0]["driver_branch"]')"

# --- rollback -----------------------------------------------------------------------------------
gp rollback --plan
expect_rc "rollback --plan: changes pending" 2
assert_grep "names the target" "Rollback to: +profile 'site', driver branch 535, CUDA 12.2" "$GP_STDOUT"
assert_grep "lists the driver to restore" "cuda-drivers-535 \(not installed\) -> $E2E_DRIVER_535-1" "$GP_STDOUT"
assert_grep "shows apt's transaction: the 535 closure held" "install +nvidia-driver-535 +$E2E_DRIVER_535-1 +\(held\)" "$GP_STDOUT"
assert_grep "and the 550 closure removed" "remove +nvidia-driver-550 +$E2E_DRIVER_VERSION-1" "$GP_STDOUT"
assert_grep "NCCL goes back to 12.2's build" "libnccl2 .*\+cuda12\.4 -> .*\+cuda12\.2" "$GP_STDOUT"

gp rollback --yes
expect_rc "rollback stops for the reboot (550 still loaded)" 3
check "550's module still loaded until the reboot" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
assert_eq "the resume unit resumes the rollback" "/usr/local/bin/gpuprov rollback --yes --reboot never" \
    "$(sed -n 's/^ExecStart=//p' "$ROOT/etc/systemd/system/gpuprov-resume.service")"
rootfs_reboot "$ROOT"
check "535's module loads at boot" grep -q "Kernel Module  $E2E_DRIVER_535 " "$ROOT/proc/driver/nvidia/version"
run_resume_unit /etc/systemd/system/gpuprov-resume.service
assert_grep "the resumed rollback says it restored the closure" "Rolled back: .* verified" "$GP_STDOUT"
assert_eq "journal result" "done" "$(journal_result)"
while read -r name version; do
    assert_pkg "$name" "$version"
done <"$OUT/closure-535.txt"
for p in cuda-drivers-550 nvidia-driver-550 nvidia-dkms-550 libnvidia-compute-550; do assert_no_pkg "$p"; done
holds | sort >"$OUT/holds-after.txt"
assert_eq "holds as before the change" "$(cat "$OUT/holds-535.txt")" "$(cat "$OUT/holds-after.txt")"
assert_eq "the restored closure is the newest verified one, a rollback's" rollback \
    "$(journal_json 'j["verified"][0]["via"]')"
gp verify /etc/gpuprov/site-535.yaml
expect_rc "verify with branch 535's profile" 0
gp plan /etc/gpuprov/site-535.yaml --detailed-exitcode
expect_rc "branch 535's profile plans as converged" 0
assert_eq "dpkg --audit is empty" "" "$(dpkg_audit)"

# --- a second rollback is a no-op ---------------------------------------------------------------
gp rollback --plan
expect_rc "second rollback --plan: nothing to do" 0
assert_grep "says so" "Nothing to do" "$GP_STDOUT"
sha256sum "$ROOT/var/lib/dpkg/status" >"$OUT/status.before"
gp rollback --yes
expect_rc "second rollback" 0
assert_grep "changes nothing" "Nothing to do" "$GP_STDOUT"
check "dpkg's database untouched" sha256sum -c --quiet "$OUT/status.before"
scenario_end
