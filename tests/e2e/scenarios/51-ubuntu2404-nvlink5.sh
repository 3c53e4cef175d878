#!/usr/bin/env bash
# e2e-timeout: 300
# (51) NVLink 5 fabric on an HGX B200-shaped host, Ubuntu 24.04, branch 595 (pinned, unsuffixed)
# against the recorded 2026 graph (the mirror's nvidia-2026/ tree). 8 B200 GPUs (10de:2901) and
# no NVIDIA PCI bridge: the four NVSwitches are ConnectX-7 functions registered as InfiniBand
# devices whose VPD holds SW_MNG (lib/rootfs.sh rootfs_simulate_nvlink5), found as NVIDIA's
# driver container finds them. mlx5_core/mlx5_ib are loaded, ib_umad is not (the kernel ships it).
# `fabric_manager: auto` installs fabric manager, NSCQ and IMEX at the driver's exact version and
# NVLSM (its own date-based version, the index's newest), loads ib_umad and lists it in
# modules-load.d, then enables and starts nvidia-fabricmanager, whose unit starts NVLSM: the
# stand-in daemon refuses to start on an NVLink 5 host without NVLSM or ib_umad (as NVIDIA's fails
# with NV_WARN_NOTHING_TO_DO), so an active unit proves the order. verify reads each GPU's
# `nvidia-smi -q` Fabric state: it passes on Completed and fails on In Progress, naming the GPUs.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-2026.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
SIM_GPU_COUNT=8
SIM_GPU_DEVICE=0x2901 # B200
scenario_begin clean
rootfs_simulate_nvlink5 "$ROOT"
rm -f "$ROOT/etc/os-release" # Debian's is a symlink to ../usr/lib/os-release
cp "$REPO_ROOT/tests/fixtures/hosts/ubuntu-24.04/etc/os-release" "$ROOT/etc/os-release"

gp facts --json
expect_rc "facts --json on the HGX B200 host" 0
check "facts: 8 B200 GPUs, no PCI NVSwitch, 4 NVLink 5 switches (SW_MNG)" "$E2E_PYTHON" -c 'import json, sys
f = json.load(open(sys.argv[1]))
assert len(f["gpus"]) == 8 and all(g["model"] == "B200" for g in f["gpus"]), f["gpus"]
assert f["nvswitch_count"] == 0 and f["nvlink5_switch_count"] == 4, (f["nvswitch_count"], f["nvlink5_switch_count"])
assert [d["nvswitch"] for d in f["infiniband"]["devices"]] == [True] * 4, f["infiniband"]' "$GP_STDOUT"

# shellcheck source=lib/driver_graph.sh
source "$E2E_DIR/lib/driver_graph.sh"
DRV="$E2E_U595-1ubuntu1"
NVLSM=2025.10.12-1
profile=/etc/gpuprov/e2e-nvlink5.yaml
printf 'name: e2e-nvlink5\nextends: %s\nhost:\n  gpus: {count: 8, model: B200, interconnect: nvlink}\ndriver: {branch: "595", flavor: open, hold: true}\nfabric_manager: auto\n' \
    "$PROFILE_IN_ROOT" >"$ROOT$profile"

gp plan "$profile" --json
expect_rc "plan" 0
check "the plan's fabric-manager step: FM, NSCQ, IMEX at $DRV, nvlsm $NVLSM, ib_umad now and at boot" "$E2E_PYTHON" -c 'import json, sys
s = {s["id"]: s for s in json.load(open(sys.argv[1]))["steps"]}["fabric-manager"]
got = dict((i["name"], i["version"]) for i in s["installs"])
want = {"nvidia-fabricmanager": sys.argv[2], "libnvidia-nscq": sys.argv[2], "nvidia-imex": sys.argv[2],
        "nvidia-modprobe": sys.argv[2], "nvlsm": sys.argv[3]}
assert s["status"] == "pending" and got == want, (s["status"], got, s.get("reason"))
text = json.dumps(s["changes"])
assert "modprobe ib_umad" in text and "/etc/modules-load.d/gpuprov-ib_umad.conf" in text, text' "$GP_STDOUT" "$DRV" "$NVLSM"

gp apply "$profile" --yes # lib/scenario.sh then checks plan --detailed-exitcode gives 0
expect_rc "apply on a fresh Ubuntu 24.04 HGX B200 host" 0
assert_pkg nvidia-fabricmanager "$DRV"
assert_pkg nvlsm "$NVLSM"
assert_eq "ib_umad listed for boot" "ib_umad" "$(grep -v '^#' "$ROOT/etc/modules-load.d/gpuprov-ib_umad.conf")"
check "ib_umad loaded" grep -q '^ib_umad ' "$ROOT/proc/modules"
check "nvidia-fabricmanager.service enabled" \
    test -L "$ROOT/etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service"
check "nvidia-fabricmanager.service active (the stand-in starts only with NVLSM and ib_umad)" \
    test -f "$ROOT/run/e2e-systemd/nvidia-fabricmanager.service.active"
assert_eq "the GPUs joined the fabric" "Completed" "$(cat "$ROOT/var/lib/nvidia-stub/fabric-state")"

gp verify "$profile" --json
expect_rc "verify after apply" 0
check "verify: fabric-manager.active, .ib-umad and .fabric-state passed" "$E2E_PYTHON" -c 'import json, sys
c = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"]}
for i in ("fabric-manager.active", "fabric-manager.ib-umad", "fabric-manager.fabric-state"):
    assert i in c and c[i]["passed"] and not c[i]["skipped"], c.get(i, i)
assert c["fabric-manager.fabric-state"]["found"] == "Completed, Success on 8 GPUs", c["fabric-manager.fabric-state"]' "$GP_STDOUT"
in_root "$ROOT" 30 nvidia-smi -q >"$OUT/nvidia-smi-q-completed.txt"

# The GPUs fall back to registering (fabric manager restarted without NVLSM, a reset): verify fails
# and names every GPU.
echo "In Progress" >"$ROOT/var/lib/nvidia-stub/fabric-state"
gp verify "$profile" --json
expect_rc "verify with the fabric In Progress" 1
check "verify: fabric-state failed, naming the 8 GPUs In Progress" "$E2E_PYTHON" -c 'import json, sys
c = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"]}["fabric-manager.fabric-state"]
assert not c["passed"] and not c["skipped"], c
assert c["found"].count("(NVIDIA B200): State In Progress, Status N/A") == 8, c["found"]
assert c["found"].startswith("GPU 00000000:"), c["found"]' "$GP_STDOUT"
in_root "$ROOT" 30 nvidia-smi -q >"$OUT/nvidia-smi-q-in-progress.txt"
echo Completed >"$ROOT/var/lib/nvidia-stub/fabric-state"

# The stand-in is as strict as NVIDIA's: without ib_umad, fabric manager does not start.
rm -rf "$ROOT/sys/module/ib_umad"
sed -i '/^ib_umad /d' "$ROOT/proc/modules"
if fm_out=$(in_root "$ROOT" 30 nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg 2>&1); then
    fail "nv-fabricmanager started on an NVLink 5 host without ib_umad"
else
    check "nv-fabricmanager refuses to start without ib_umad" grep -q "ib_umad" <<<"$fm_out"
fi
in_root "$ROOT" 30 modprobe ib_umad

assert_eq "journal result" "done" "$(journal_result)"
scenario_end
