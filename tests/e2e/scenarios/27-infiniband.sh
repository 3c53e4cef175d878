#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (s) InfiniBand for sci-sim. An 8x H100 host with a ConnectX-6 in InfiniBand mode (mlx5_0, HDR)
# and a ConnectX-6 Dx RoCE NIC (mlx5_1, Ethernet), both as the kernel's sysfs shows them
# (lib/rootfs.sh: rootfs_simulate_ib), and the distro's rdma-core stand-ins in its Debian
# archive (mirror/rdma.sh). The plan installs the RDMA userspace and nvidia-peermem; on the
# inbox ib_core peermem cannot load and apply fails saying why and both ways out; with
# MLNX_OFED's ib_core apply converges, verify passes (port ACTIVE at 200 Gb/s, ibv_devinfo lists
# both devices), /etc/nccl.conf names only the InfiniBand port, and after a reboot
# modules-load.d has loaded nvidia-peermem. Then the port goes DOWN and trains at EDR: verify
# fails naming the port and the fix, and doctor explains.
set -euo pipefail
PROFILE_TEMPLATE=e2e-sci-sim.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
SIM_GPU_COUNT=8
SIM_GPU_DEVICE=0x2330 # H100 SXM5 80GB
scenario_begin clean
rootfs_simulate_ib "$ROOT"
sed -i 's/^MemTotal:.*/MemTotal:       1056690116 kB/' "$ROOT/proc/meminfo" # sci-sim's 1 TB

# The distro's archive (the mirror's `debian` repository), its lists fetched as on any host. The
# root's apt skips Recommends, as Debian's cloud and container images configure it: whatever
# the verbs stack needs must be named, not recommended.
mirror_apt_source "$ROOT" debian debian
printf 'APT::Install-Recommends "false";\n' >"$ROOT/etc/apt/apt.conf.d/99e2e-no-recommends"
check "apt-get update (distro archive)" in_root "$ROOT" 120 apt-get -q update

gp facts --json
expect_rc "facts --json" 0
check "facts: the InfiniBand HCA on PCI, both RDMA devices, mlx5_0:1 ACTIVE at 200" "$E2E_PYTHON" -c 'import json, sys
ib = json.load(open(sys.argv[1]))["infiniband"]
devs = {d["name"]: d for d in ib["devices"]}
p = devs["mlx5_0"]["ports"][0]
ok = (ib["hca_pci"] == ["0000:0c:00.0"] and devs["mlx5_0"]["pci_address"] == "0000:0c:00.0"
      and devs["mlx5_1"]["pci_address"] == "0000:0c:00.1" and p["state"] == "ACTIVE"
      and p["rate_gbps"] == 200 and p["link_layer"] == "InfiniBand" and not ib["peermem_loaded"])
sys.exit(0 if ok else repr(ib))' "$GP_STDOUT"

RDMA_PKGS=(rdma-core ibverbs-utils ibverbs-providers infiniband-diags)
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json" 0
check "the plan installs the distro's RDMA userspace and sets up nvidia-peermem and nccl.conf" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
step = next(s for s in d["steps"] if s["id"] == "infiniband")
names = sorted(i["name"] for i in step["installs"])
targets = " ".join(c.get("target", "") for c in step["changes"])
ok = (step["status"] == "pending" and names == sorted(sys.argv[2:])
      and "/etc/modules-load.d/gpuprov-nvidia-peermem.conf" in targets and "/etc/nccl.conf" in targets)
sys.exit(0 if ok else json.dumps(step, indent=1))' "$GP_STDOUT" "${RDMA_PKGS[@]}"

# The distro kernel's inbox ib_core lacks the peer-memory API: modprobe nvidia-peermem fails.
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply on the inbox RDMA stack" 1
assert_grep "apply quotes modprobe's error" "could not insert 'nvidia_peermem': Invalid argument" <(gp_output)
assert_grep "apply names both ways out" "DOCA-OFED.*gpudirect_rdma: dmabuf" <(gp_output)
assert_eq "journal result" failed "$(journal_result)"
check "nvidia_peermem is not loaded" bash -c "! grep -q '^nvidia_peermem ' '$ROOT/proc/modules'"
gp doctor --profile "$PROFILE_IN_ROOT"
assert_grep "doctor: no GPUDirect RDMA, with the ways out" "ib-no-gpudirect-rdma.*stages GPU buffers through host memory" <(gp_output)

# MLNX_OFED's kernel modules (a kernel-only install): ib_core exports the peer-memory API.
printf 'ffffffffc0a1b2c0 T ib_register_peer_memory_client\t[ib_core]\n' >>"$ROOT/proc/kallsyms"
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with MLNX_OFED's ib_core" 0
assert_eq "journal result" "done" "$(journal_result)"
for p in "${RDMA_PKGS[@]}" libibverbs1; do assert_pkg "$p" 44.0-2; done
check "nvidia_peermem is loaded" grep -q '^nvidia_peermem ' "$ROOT/proc/modules"
assert_grep "modules-load.d loads nvidia-peermem at boot" '^nvidia-peermem$' "$ROOT/etc/modules-load.d/gpuprov-nvidia-peermem.conf"
assert_grep "nccl.conf names exactly the InfiniBand port" '^NCCL_IB_HCA==mlx5_0:1$' "$ROOT/etc/nccl.conf"

verify_checks() { # prints "id passed found" per infiniband check of the last verify --json
    "$E2E_PYTHON" -c 'import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["id"].startswith("infiniband."): print(c["id"], c["passed"], c["found"])' "$GP_STDOUT"
}
gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify" 0
verify_checks >"$OUT/verify-ok.txt"
for id in devices ports rate verbs peermem nccl-conf; do
    check "verify: infiniband.$id passes" grep -q "^infiniband.$id True" "$OUT/verify-ok.txt"
done
assert_grep "verify: ibv_devinfo lists both devices" '^infiniband.verbs True mlx5_0, mlx5_1$' "$OUT/verify-ok.txt"

# A reboot: nothing loads nvidia-peermem but modules-load.d.
rootfs_reboot "$ROOT"
check "after the reboot nvidia_peermem is loaded again" grep -q '^nvidia_peermem ' "$ROOT/proc/modules"
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify after the reboot" 0
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan --detailed-exitcode: nothing to do" 0

# The cable is pulled: DOWN/Polling (the kernel then reports the port at 10 Gb/sec, 4X SDR).
rootfs_ib_port "$ROOT" mlx5_0 1 "1: DOWN" "2: Polling" "10 Gb/sec (4X SDR)"
gp verify "$PROFILE_IN_ROOT"
expect_rc "verify with mlx5_0:1 DOWN" 1
assert_grep "verify names the port, its state and link state" "mlx5_0:1 DOWN \\(Polling" <(gp_output)
assert_grep "verify gives the fix" "fix: mlx5_0:1: no link: check the cable and the switch port" <(gp_output)
gp doctor --profile "$PROFILE_IN_ROOT"
assert_grep "doctor: ib-port-not-active" "ib-port-not-active" <(gp_output)
assert_grep "doctor explains the port and the fallback" "mlx5_0:1 DOWN \\(Polling\\): no link: check the cable and the switch port" <(gp_output)
assert_grep "doctor says NCCL falls back to sockets" "NET/Socket" <(gp_output)

# The link comes back at EDR, below sci-sim's min_rate_gbps.
rootfs_ib_port "$ROOT" mlx5_0 1 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (4X EDR)"
gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify with mlx5_0:1 at 100 Gb/s" 1
check "verify: only infiniband.rate fails, with both numbers" "$E2E_PYTHON" -c 'import json, sys
c = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"] if c["id"].startswith("infiniband.")}
r = c["infiniband.rate"]
failed = sorted(i for i in c if not c[i]["passed"] and not c[i]["skipped"])
ok = failed == ["infiniband.rate"] and "200 Gb/s" in r["expected"] and "mlx5_0:1 100 Gb/sec" in r["found"]
sys.exit(0 if ok else json.dumps(c, indent=1))' "$GP_STDOUT"
scenario_end
