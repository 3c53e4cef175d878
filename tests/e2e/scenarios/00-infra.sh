#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
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
# The legacy tree (docs/e2e.md) carries none of the recorded graph's packages.
assert_eq "legacy tree: no recorded package (pinning, unsuffixed names)" "" \
    "$(in_root "$ROOT" 30 apt-cache pkgnames | grep -E '^(nvidia-driver-pinning|nvidia-open$|nvidia-driver$|nvidia-kernel-open-dkms$)' || true)"
# NVIDIA's shape: the branch meta depends with >=, so apt pairs an older meta with the newest driver.
sim=$(in_root "$ROOT" 60 apt-get -s install "cuda-drivers-550=$E2E_DRIVER_OLDER-1" 2>&1 | sed -n 's/^Inst nvidia-driver-550 .*(\([^ ]*\) .*/\1/p')
assert_eq "apt pairs the older meta with the newest driver build" "$E2E_DRIVER_VERSION-1" "$sim"
check "apt-get install cuda-toolkit-12-4 cuda-drivers-550" \
    in_root "$ROOT" 180 apt-get -q -y -o DPkg::Lock::Timeout=60 install cuda-toolkit-12-4 cuda-drivers-550
assert_pkg cuda-toolkit-12-4 12.4.1-1
assert_pkg cuda-drivers-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_no_pkg cuda-drivers
# ... because the meta depends with >=.
deps=$(in_root "$ROOT" 10 apt-cache show "cuda-drivers-550=$E2E_DRIVER_OLDER-1" | sed -n 's/^Depends: //p')
assert_eq "cuda-drivers-550 $E2E_DRIVER_OLDER depends with >=" "nvidia-driver-550 (>= $E2E_DRIVER_OLDER)" "$deps"

# The module: installed, not loaded; DKMS built it for the running kernel; modprobe loads it.
check "no module loaded by the install" test ! -e "$ROOT/proc/driver/nvidia/version"
assert_eq "dkms status" "nvidia/$E2E_DRIVER_VERSION, $SIM_KERNEL, x86_64: installed" "$(in_root "$ROOT" 10 dkms status)"
check "modprobe nvidia loads the built module" in_root "$ROOT" 10 modprobe nvidia
check "loaded module is the installed build" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"

out=$(in_root "$ROOT" 10 /usr/local/cuda-12.4/bin/nvcc --version)
assert_eq "nvcc release line" "Cuda compilation tools, release 12.4, V12.4.131" "$(sed -n 4p <<<"$out")"
out=$(in_root "$ROOT" 10 nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader,nounits)
assert_eq "nvidia-smi query, 4 GPUs" "3, NVIDIA A100-SXM4-80GB, $E2E_DRIVER_VERSION, 81920" "$(sed -n 4p <<<"$out")"
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

# The second tree (docs/e2e.md): the recorded 2026 graph under nvidia-2026/, signed with the same
# key. Fetched over HTTPS inside the root and verified with the key apt trusts; its index lists
# the recorded pinning package and none of the legacy stand-ins. Scenario 29 checks it in full.
for slug in debian12 ubuntu2204 ubuntu2404; do
    base=$(mirror_url "$E2E_TREE_2026/$slug/x86_64")
    rm -f "$ROOT/tmp/InRelease-2026" "$ROOT/tmp/Packages-2026"
    # shellcheck disable=SC2016 # $1 is sh -c's
    check "2026 tree, $slug: InRelease and Packages served" in_root "$ROOT" 30 sh -c \
        '/usr/lib/apt/apt-helper download-file "$1/InRelease" /tmp/InRelease-2026 && /usr/lib/apt/apt-helper download-file "$1/Packages" /tmp/Packages-2026' \
        sh "$base"
    check "2026 tree, $slug: InRelease signed by the mirror's key" \
        in_root "$ROOT" 10 gpgv --keyring /usr/share/keyrings/cuda-archive-keyring.gpg /tmp/InRelease-2026
    check "2026 tree, $slug: the recorded pinning package is listed" grep -qx 'Package: nvidia-driver-pinning-580' "$ROOT/tmp/Packages-2026"
    check "2026 tree, $slug: no legacy stand-in listed" test -z "$(grep -E '^Package: (cuda-drivers|nvidia-driver)-(535|550|560)$' "$ROOT/tmp/Packages-2026")"
done
rm -f "$ROOT/tmp/InRelease-2026" "$ROOT/tmp/Packages-2026"

# Fault injection reaches apt.
mirror_fault 'debian12/x86_64/InRelease$' 500
rm -rf "$ROOT"/var/lib/apt/lists/127.0.0.1*
set +e
out=$(in_root "$ROOT" 60 apt-get -q update 2>&1)
set -e
mirror_clear_faults
check "apt sees the injected 500" grep -q '500' <<<"$out"
scenario_end
