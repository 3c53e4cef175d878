#!/usr/bin/env bash
# Infrastructure self-test, independent of gpuprov: the root works without /proc, the mirror is
# trusted over HTTPS, plain apt installs NVIDIA-named stand-ins from it, and the stand-in tools
# print the real formats.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean --no-gpuprov

check "no host mounts inside the root" test -z "$(awk -v p="$ROOT/" 'index($2, p) == 1' /proc/mounts)"
check "simulated /proc/meminfo" grep -q '^MemTotal: *270000000 kB' "$ROOT/proc/meminfo"

# Manual repo setup, the way the NVIDIA docs do it (deb822 + Signed-By), no gpuprov involved.
gpg --dearmor <"$MIRROR_DIR/www/compute/cuda/repos/debian12/x86_64/3bf863cc.pub" \
    >"$ROOT/usr/share/keyrings/cuda-archive-keyring.gpg"
cat >"$ROOT/etc/apt/sources.list.d/e2e-manual.sources" <<SRC
Types: deb
URIs: $(mirror_url compute/cuda/repos/debian12/x86_64/)
Suites: /
Signed-By: /usr/share/keyrings/cuda-archive-keyring.gpg
SRC
check "apt-get update against the HTTPS mirror" in_root "$ROOT" 120 apt-get -q update
# NVIDIA's Debian shape ([F1], tests/fixtures/nvidia-repos/debian12): cuda-drivers-580 depends
# floor-only, so without a pin apt completes it with the newest branch's parts.
sim=$(in_root "$ROOT" 60 apt-get -s install cuda-drivers-580 2>&1 | sed -n 's/^Inst nvidia-driver (\([^ ]*\) .*/\1/p')
assert_eq "without a pin, cuda-drivers-580 pulls 595's nvidia-driver" "$E2E_D595-1" "$sim"
deps=$(in_root "$ROOT" 10 apt-cache show "cuda-drivers-580=$E2E_D580_OLDER-1" | sed -n 's/^Depends: //p')
assert_eq "cuda-drivers-580 $E2E_D580_OLDER-1 depends with >= (verbatim from [F1])" \
    "nvidia-driver (>= 580.65.06), nvidia-driver-cuda (>= 580.65.06), nvidia-kernel-dkms (>= 580.65.06), nvidia-settings (>= 580.65.06), nvidia-xconfig (>= 580.65.06)" "$deps"
# The pin, in its own transaction first (NVIDIA's guide): its preferences file holds the branch,
# and the older meta still gets the branch's newest build.
check "apt-get install nvidia-driver-pinning-580" in_root "$ROOT" 120 apt-get -q -y install nvidia-driver-pinning-580
check "the pin file is in preferences.d" grep -qx 'Pin: version 580\.\*' "$ROOT/etc/apt/preferences.d/nvidia-driver-pin"
sim=$(in_root "$ROOT" 60 apt-get -s install "cuda-drivers-580=$E2E_D580_OLDER-1" 2>&1 | sed -n 's/^Inst nvidia-driver (\([^ ]*\) .*/\1/p')
assert_eq "under the 580 pin apt pairs the older meta with the branch's newest driver build" "$E2E_D580-1" "$sim"
check "apt-get install cuda-toolkit-12-4 cuda-toolkit-13-0 cuda-drivers-580" \
    in_root "$ROOT" 180 apt-get -q -y -o DPkg::Lock::Timeout=60 install cuda-toolkit-12-4 cuda-toolkit-13-0 cuda-drivers-580
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_pkg cuda-toolkit-13-0 13.0.2-1
assert_pkg cuda-drivers-580 "$E2E_D580-1"
for p in nvidia-driver nvidia-driver-cuda nvidia-kernel-dkms nvidia-kernel-support libcuda1 nvidia-smi nvidia-persistenced; do
    assert_pkg "$p" "$E2E_D580-1"
done
assert_no_pkg cuda-drivers
assert_no_pkg nvidia-kernel-open-dkms

# The module: installed, not loaded; DKMS built it for the running kernel; modprobe loads it.
check "no module loaded by the install" test ! -e "$ROOT/proc/driver/nvidia/version"
assert_eq "dkms status" "nvidia/$E2E_D580, $SIM_KERNEL, x86_64: installed" "$(in_root "$ROOT" 10 dkms status)"
check "modprobe nvidia loads the built module" in_root "$ROOT" 10 modprobe nvidia
check "loaded module is the installed build, proprietary" grep -q "x86_64 Kernel Module  $E2E_D580 " "$ROOT/proc/driver/nvidia/version"

out=$(in_root "$ROOT" 10 /usr/local/cuda-12.4/bin/nvcc --version)
assert_eq "nvcc release line" "Cuda compilation tools, release 12.4, V12.4.131" "$(sed -n 4p <<<"$out")"
out=$(in_root "$ROOT" 10 /usr/local/cuda-13.0/bin/nvcc --version)
assert_eq "nvcc 13.0 release line" "Cuda compilation tools, release 13.0, V13.0.88" "$(sed -n 4p <<<"$out")"
out=$(in_root "$ROOT" 10 nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader,nounits)
assert_eq "nvidia-smi query, 4 GPUs" "3, NVIDIA A100-SXM4-80GB, $E2E_D580, 81920" "$(sed -n 4p <<<"$out")"
check "nvidia-smi topo -m is TAB separated with NV12" grep -qP '^GPU0\t X \tNV12\t' <(in_root "$ROOT" 10 nvidia-smi topo -m)

# Stand-ins against the real samples in tests/fixtures/e2e (byte-exact where a sample exists).
FX=$REPO_ROOT/tests/fixtures/e2e
table=$(in_root "$ROOT" 10 nvidia-smi)
assert_eq "nvidia-smi table column headers = R580 sample" "$(sed -n 4,8p "$FX/nvidia-smi/table-r580-truncated.txt")" "$(sed -n 4,8p <<<"$table")"
assert_eq "nvidia-smi table row widths = R580 sample" "$(sed -n 2,16p "$FX/nvidia-smi/table-r580-truncated.txt" | awk '{print length($0)}' | sort -u | paste -sd,)" \
    "$(sed -n 2,16p <<<"$table" | awk '{print length($0)}' | sort -u | paste -sd,)"
rowshape() { sed -E 's/NVIDIA A100-SXM4-[0-9]+GB/name/; s/E\. Process|Default/mode/; s/ (On|Off) / pm /; s/[0-9A-F]/9/g; s/9+/9/g; s/ +/ /g'; }
assert_eq "nvidia-smi GPU row shape = R580 sample" "$(sed -n 9,12p "$FX/nvidia-smi/table-r580-truncated.txt" | rowshape)" \
    "$(sed -n 9,12p <<<"$table" | rowshape)"
assert_eq "nvidia-smi topo Legend = real sample" "$(cat "$FX/nvidia-smi/topo-legend.txt")" "$(in_root "$ROOT" 10 nvidia-smi topo -m | sed -n '/^Legend:/,$p')"
assert_eq "nvidia-smi topo header shape = real sample" "$(head -n 1 "$FX/nvidia-smi/topo-m-hgx-h100-truncated.txt" | sed -E 's/\t(GPU|NIC)[0-9]//g')" \
    "$(in_root "$ROOT" 10 nvidia-smi topo -m | head -n 1 | sed -E 's/\t(GPU|NIC)[0-9]//g')"
assert_eq "nvcc 12.4 = real sample" "$(cat "$FX/nvcc/12.4.txt")" "$(in_root "$ROOT" 10 /usr/local/cuda-12.4/bin/nvcc --version)"
assert_eq "driver version file shape = real proprietary sample" \
    "$(sed -E 's/[0-9]+\.[0-9]+(\.[0-9]+)?  .*/V/' "$FX/proc/driver-nvidia-version-proprietary.txt" | head -n 1)" \
    "$(sed -E 's/[0-9]+\.[0-9]+(\.[0-9]+)?  .*/V/' "$ROOT/proc/driver/nvidia/version" | head -n 1)"

# systemctl stand-in + nvidia-persistenced: NVIDIA's unit keeps persistence off; an override turns it on.
pm() { in_root "$ROOT" 10 nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | sort -u | paste -sd,; }
check "systemctl enable --now nvidia-persistenced" in_root "$ROOT" 30 systemctl enable --now nvidia-persistenced
check "wants symlink created" test -L "$ROOT/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service"
assert_eq "persistence with NVIDIA's stock unit (--no-persistence-mode)" Disabled "$(pm)"
mkdir -p "$ROOT/etc/systemd/system/nvidia-persistenced.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/bin/nvidia-persistenced --user root --persistence-mode --verbose\n' \
    >"$ROOT/etc/systemd/system/nvidia-persistenced.service.d/override.conf"
check "systemctl restart nvidia-persistenced" in_root "$ROOT" 30 systemctl restart nvidia-persistenced
assert_eq "persistence with the override" Enabled "$(pm)"
check "systemctl is-active" in_root "$ROOT" 10 systemctl is-active --quiet nvidia-persistenced

# Driver not loaded: the real message and exit code 9.
rm -rf "$ROOT/proc/driver/nvidia"
set +e
out=$(in_root "$ROOT" 10 nvidia-smi 2>&1)
rc=$?
set -e
assert_eq "nvidia-smi exit code without driver" 9 "$rc"
assert_eq "nvidia-smi driver-not-loaded message = real sample" "$(cat "$FX/nvidia-smi/driver-not-loaded.txt")" "$(head -n 1 <<<"$out")"

# Fault injection reaches apt.
mirror_fault 'debian12/x86_64/InRelease$' 500
rm -rf "$ROOT"/var/lib/apt/lists/127.0.0.1*
set +e
out=$(in_root "$ROOT" 60 apt-get -q update 2>&1)
set -e
mirror_clear_faults
check "apt sees the injected 500" grep -q '500' <<<"$out"
scenario_end
