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
# The profile asks for IMEX (`fabric: {imex: true, imex_nodes: [...]}`): gpuprov writes the node
# list to /etc/nvidia-imex/nodes_config.cfg and enables and starts nvidia-imex after fabric
# manager. The stand-in daemon is as strict as NVIDIA documents: it aborts unless the loaded
# driver is its version, without a node list, or when no entry of the list is this node's address
# (the root's /var/lib/nvidia-stub/ip-addresses); nvidia-imex-ctl -q answers only through the
# command service config.cfg turns on.
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
printf 'name: e2e-nvlink5\nextends: %s\nhost:\n  gpus: {count: 8, model: B200, interconnect: nvlink}\ndriver: {branch: "595", flavor: open, hold: true}\nfabric_manager: auto\nfabric:\n  imex: true\n  imex_nodes: [10.0.0.11, 10.0.0.12]\n' \
    "$PROFILE_IN_ROOT" >"$ROOT$profile"
# This node's addresses, where the IMEX stand-in looks for its own entry of the node list.
mkdir -p "$ROOT/var/lib/nvidia-stub"
printf '127.0.0.1\n10.0.0.11\n' >"$ROOT/var/lib/nvidia-stub/ip-addresses"

gp plan "$profile" --json
expect_rc "plan" 0
check "the plan's fabric-manager step: FM, NSCQ, IMEX at $DRV, nvlsm $NVLSM, ib_umad now and at boot" "$E2E_PYTHON" -c 'import json, sys
s = {s["id"]: s for s in json.load(open(sys.argv[1]))["steps"]}["fabric-manager"]
got = dict((i["name"], i["version"]) for i in s["installs"])
want = {"nvidia-fabricmanager": sys.argv[2], "libnvidia-nscq": sys.argv[2], "nvidia-imex": sys.argv[2],
        "nvidia-modprobe": sys.argv[2], "nvlsm": sys.argv[3]}
assert s["status"] == "pending" and got == want, (s["status"], got, s.get("reason"))
text = json.dumps(s["changes"])
assert "modprobe ib_umad" in text and "/etc/modules-load.d/gpuprov-ib_umad.conf" in text, text
files = [c["target"] for c in s["changes"] if c["kind"] == "file"]
units = [c["target"] for c in s["changes"] if c["kind"] == "service"]
assert "/etc/nvidia-imex/nodes_config.cfg" in files, files
assert units == ["nvidia-fabricmanager.service", "nvidia-imex.service"], units' "$GP_STDOUT" "$DRV" "$NVLSM"

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
assert_pkg nvidia-imex "$DRV"
assert_eq "IMEX's node list as the profile gives it" "10.0.0.11 10.0.0.12" \
    "$(tr '\n' ' ' <"$ROOT/etc/nvidia-imex/nodes_config.cfg" | sed 's/ $//')"
check "nvidia-imex.service enabled" \
    test -L "$ROOT/etc/systemd/system/multi-user.target.wants/nvidia-imex.service"
check "nvidia-imex.service active (the stand-in starts only with the node list and this node in it)" \
    test -f "$ROOT/run/e2e-systemd/nvidia-imex.service.active"
check "nvidia-imex started after nvidia-fabricmanager" "$E2E_PYTHON" -c 'import sys
log = open(sys.argv[1]).read().splitlines()
fm = [i for i, l in enumerate(log) if "nvidia-fabricmanager" in l and ("--now" in l or "start" in l)]
imex = [i for i, l in enumerate(log) if l == "systemctl restart nvidia-imex.service"]
assert fm and imex and fm[0] < imex[0], log' "$ROOT/var/log/e2e-systemctl.log"

gp verify "$profile" --json
expect_rc "verify after apply" 0
check "verify: fabric-manager.active, .ib-umad and .fabric-state passed" "$E2E_PYTHON" -c 'import json, sys
c = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"]}
for i in ("fabric-manager.active", "fabric-manager.ib-umad", "fabric-manager.fabric-state"):
    assert i in c and c[i]["passed"] and not c[i]["skipped"], c.get(i, i)
assert c["fabric-manager.fabric-state"]["found"] == "Completed, Success on 8 GPUs", c["fabric-manager.fabric-state"]
assert c["fabric-manager.imex"]["passed"] and c["fabric-manager.imex"]["found"] == "active", c["fabric-manager.imex"]
r = c["fabric-manager.imex-ready"]
assert r["skipped"] and "IMEX_CMD_ENABLED=1" in r["found"], r' "$GP_STDOUT"
in_root "$ROOT" 30 nvidia-smi -q >"$OUT/nvidia-smi-q-completed.txt"

# The command service on (as NVIDIA's and Azure's Slurm prologs turn it on), the daemon restarted:
# verify asks it, and READY passes.
sed -i 's/^IMEX_CMD_ENABLED=.*/IMEX_CMD_ENABLED=1/' "$ROOT/etc/nvidia-imex/config.cfg"
in_root "$ROOT" 30 systemctl restart nvidia-imex
gp verify "$profile" --json
expect_rc "verify with IMEX's command service on" 0
check "verify: fabric-manager.imex-ready passed (nvidia-imex-ctl -q: READY)" "$E2E_PYTHON" -c 'import json, sys
r = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"]}["fabric-manager.imex-ready"]
assert r["passed"] and not r["skipped"] and r["found"] == "READY", r' "$GP_STDOUT"

# The IMEX stand-in is as strict as NVIDIA documents: no entry of the list is this node's, or no
# list at all: it does not start.
printf '127.0.0.1\n' >"$ROOT/var/lib/nvidia-stub/ip-addresses"
if imex_out=$(in_root "$ROOT" 30 nvidia-imex -c /etc/nvidia-imex/config.cfg 2>&1); then
    fail "nvidia-imex started with no address of this node in its node list"
else
    check "nvidia-imex refuses a node list without this node" grep -q "address of this node" <<<"$imex_out"
fi
printf '127.0.0.1\n10.0.0.11\n' >"$ROOT/var/lib/nvidia-stub/ip-addresses"
mv "$ROOT/etc/nvidia-imex/nodes_config.cfg" "$ROOT/etc/nvidia-imex/nodes_config.cfg.away"
if imex_out=$(in_root "$ROOT" 30 nvidia-imex -c /etc/nvidia-imex/config.cfg 2>&1); then
    fail "nvidia-imex started without a node list"
else
    check "nvidia-imex refuses to start without its node list" grep -q "node config file" <<<"$imex_out"
fi
mv "$ROOT/etc/nvidia-imex/nodes_config.cfg.away" "$ROOT/etc/nvidia-imex/nodes_config.cfg"
in_root "$ROOT" 30 systemctl restart nvidia-imex

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

# A node joins the domain and apply is SIGKILLed between writing the new list and restarting
# IMEX (lib/killshim, kill-before). The file is then the profile's; only the daemon's start time,
# older than the file, shows it still runs on the old list. The re-run plans and does the restart.
# shellcheck source=lib/killshim.sh
source "$E2E_DIR/lib/killshim.sh"
profile3=/etc/gpuprov/e2e-nvlink5-3.yaml
sed 's/imex_nodes: \[10.0.0.11, 10.0.0.12\]/imex_nodes: [10.0.0.11, 10.0.0.12, 10.0.0.13]/; s/^name: .*/name: e2e-nvlink5-3/' \
    "$ROOT$profile" >"$ROOT$profile3"
killshim_install "$ROOT"
killshim_arm "$ROOT" "kill-before:systemctl restart nvidia-imex.service"
gp apply "$profile3" --yes
killshim_disarm "$ROOT"
kill_procs_in_root || true
assert_eq "apply killed before IMEX's restart" 137 "$GP_RC"
check "the kill came right before the restart" grep -q "systemctl restart nvidia-imex.service" "$ROOT/run/e2e-killshim/killed"
assert_eq "the killed apply wrote the new node list" "10.0.0.11 10.0.0.12 10.0.0.13" \
    "$(tr '\n' ' ' <"$ROOT/etc/nvidia-imex/nodes_config.cfg" | sed 's/ $//')"
check "IMEX still runs from before the list was written" \
    test "$ROOT/etc/nvidia-imex/nodes_config.cfg" -nt "$ROOT/run/e2e-systemd/nvidia-imex.service.active"
gp plan "$profile3" --json
check "the re-run's plan restarts IMEX and writes no file" "$E2E_PYTHON" -c 'import json, sys
s = {s["id"]: s for s in json.load(open(sys.argv[1]))["steps"]}["fabric-manager"]
assert s["status"] == "pending", s
assert not [c for c in s["changes"] if c["kind"] == "file"], s["changes"]
assert "systemctl restart nvidia-imex.service" in json.dumps(s["changes"]), s["changes"]' "$GP_STDOUT"
gp apply "$profile3" --yes # then plan --detailed-exitcode 0 (lib/scenario.sh)
expect_rc "the re-run converges" 0
check "IMEX restarted after its node list was written" \
    test "$ROOT/run/e2e-systemd/nvidia-imex.service.active" -nt "$ROOT/etc/nvidia-imex/nodes_config.cfg"

assert_eq "journal result" "done" "$(journal_result)"
scenario_end
