#!/usr/bin/env bash
# e2e-timeout: 900
# EL control checks, plain dnf and rpm, no gpuprov: the rpm half of the mirror behaves as NVIDIA's
# repositories do (tests/fixtures/nvidia-repos/RPM.md), so a gpuprov scenario on it means something.
#  Rocky 9: `dnf versionlock` is "No such command" (no plugin on a stock image); the streams are
#   genmodules.py's; without a stream nvidia-open is filtered out; with
#   `dnf module enable nvidia-driver:580-open`, `dnf install nvidia-open` installs branch 580's
#   newest build and no component of the 595 stream the repository also carries; the stream's
#   /fm profile resolves fabric manager and NSCQ at that build; DKMS builds the module, it loads,
#   nvidia-smi reports 580 and CUDA 13.0.
#  Rocky 9, DCGM 4 (rhel9/cuda-rhel9-x86_64.dcgm.txt): `dnf install datacenter-gpu-manager-4-cuda12`
#   resolves core at -cuda12's own newest version 1:4.6.1-1 (its exact Requires) and, as weak
#   dependencies, the proprietary pair at that version; asking for -cuda12 1:4.4.2-1 takes core
#   1:4.4.2-1 with it (libsolv satisfies the exact Requires instead of failing as apt does).
#  Rocky 10: no module metadata; `dnf install nvidia-open` resolves the newest branch (610); after
#   `dnf install python3-dnf-plugin-versionlock` (BaseOS) and NVIDIA's `dnf versionlock add
#   '*nvidia*595*'` it installs 595's newest build, nothing of 610, and without the locks the
#   same request for nvidia-open 595 would pull 610 (the meta's floor-only Requires); the 595
#   open module builds and loads, nvidia-smi reports 595 and CUDA 13.2.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"

# NVIDIA's documented setup by hand (the key, the .repo), as scenario 30 does.
add_cuda_repo() { # SLUG
    cp "$MIRROR_DIR/www/compute/cuda/repos/$1/x86_64/D42D0685.pub" "$ROOT/etc/pki/rpm-gpg/e2e-cuda.asc"
    cat >"$ROOT/etc/yum.repos.d/cuda-$1.repo" <<REPO
[cuda-$1-x86_64]
name=cuda-$1-x86_64
baseurl=$(mirror_url "compute/cuda/repos/$1/x86_64/")
enabled=1
gpgcheck=1
repo_gpgcheck=1
gpgkey=file:///etc/pki/rpm-gpg/e2e-cuda.asc
REPO
    check "dnf makecache ($1, BaseOS, AppStream, EPEL)" dnf_in_root -y makecache
}
dnf_out() { # LABEL ARGS...: dnf's combined output (kept under $OUT), whatever its exit code
    local label=$1
    shift
    set +e
    DNF_OUT=$(dnf_in_root "$@" 2>&1)
    DNF_RC=$?
    set -e
    printf '%s\n' "$DNF_OUT" >"$OUT/$label.txt"
}
# The NEVRs a dnf transaction listing names: "name version" for every " name arch [e:]v-r repo" line.
planned() { sed -nE 's/^ ([A-Za-z0-9_.+-]+) +(x86_64|noarch) +([0-9]+:)?([^ ]+) +.*/\1 \4/p' <<<"$1"; }
# Installed NVIDIA driver packages (anything named *nvidia*, and cuda-drivers): "name version".
nvidia_installed() {
    in_root "$ROOT" 30 rpm -qa --qf '%{NAME} %{VERSION}\n' | grep -E '^(\S*nvidia\S*|cuda-drivers) ' | LC_ALL=C sort || true
}
assert_all_at() { # DESC VERSION LINES("name version")
    local off
    off=$(awk -v v="$2" '$2 != v' <<<"$3")
    if [[ -n "$3" && -z "$off" ]]; then pass "$1: every one at $2 ($(wc -l <<<"$3") packages)"
    else fail "$1: expected every one at $2, got: $(paste -sd, <<<"${off:-none}")"; fi
}
loads_and_reports() { # VERSION CUDA
    assert_eq "dkms built the module for the running kernel" "nvidia/$1, $SIM_KERNEL, x86_64: installed" \
        "$(in_root "$ROOT" 10 dkms status)"
    check "modprobe nvidia loads the built module" in_root "$ROOT" 10 modprobe nvidia
    check "the loaded module is the open $1" grep -q "Open Kernel Module for x86_64  $1 " "$ROOT/proc/driver/nvidia/version"
    assert_eq "nvidia-smi reports driver $1" "$1" \
        "$(in_root "$ROOT" 10 nvidia-smi --query-gpu=driver_version --format=csv,noheader | sed -n 1p)"
    check "nvidia-smi reports CUDA $2" grep -q "CUDA Version: $2 " <(in_root "$ROOT" 10 nvidia-smi)
}

# --- Rocky 9: module streams ---------------------------------------------------------------------
el_use_os rocky-9
el_scenario_begin clean --no-gpuprov
add_cuda_repo rhel9
K=${SIM_KERNEL%.x86_64}

dnf_out el9-versionlock-no-plugin versionlock
check "Rocky 9 without python3-dnf-plugin-versionlock: dnf versionlock fails" test "$DNF_RC" -ne 0
check "... with 'No such command'" grep -q 'No such command: versionlock' <<<"$DNF_OUT"

# DCGM 4 (not modular): the parts at one version, as their exact Requires demand.
dnf_out el9-dcgm-cuda12 install --assumeno datacenter-gpu-manager-4-cuda12
p=$(planned "$DNF_OUT")
for n in core cuda12 proprietary proprietary-cuda12; do
    assert_eq "dnf: -cuda12 brings datacenter-gpu-manager-4-$n at 4.6.1-1" 4.6.1-1 \
        "$(awk -v n="datacenter-gpu-manager-4-$n" '$1 == n {print $2}' <<<"$p")"
done
check "dnf: nothing of CUDA 13" test -z "$(grep cuda13 <<<"$p" || true)"
dnf_out el9-dcgm-cuda12-older install --assumeno datacenter-gpu-manager-4-cuda12-1:4.4.2-1
p=$(planned "$DNF_OUT")
assert_eq "dnf: -cuda12 1:4.4.2-1 takes core 1:4.4.2-1 with it" 4.4.2-1 \
    "$(awk '$1 == "datacenter-gpu-manager-4-core" {print $2}' <<<"$p")"

dnf_out el9-module-list module list nvidia-driver
for s in 580 580-dkms 580-open 595 595-dkms 595-open latest 'latest-dkms \[d\]' open-dkms; do
    check "module stream nvidia-driver:${s%% *} listed" grep -Eq "^nvidia-driver +$s( |$)" <<<"$DNF_OUT"
done

# Before a stream is enabled the default stream (latest-dkms, NVIDIA's defaults document) filters
# nvidia-open out: it belongs to the -open streams only (RPM.md), so NVIDIA's guide enables one first.
dnf_out el9-no-stream --assumeno install nvidia-open
check "no stream enabled: dnf install nvidia-open finds nothing the default stream allows" test "$DNF_RC" -ne 0
check "... 'filtered out by modular filtering'" grep -q 'filtered out by modular filtering' <<<"$DNF_OUT"

check "dnf module enable nvidia-driver:580-open" dnf_in_root -y module enable nvidia-driver:580-open
assert_eq "modules.d records the stream" 580-open "$(enabled_stream nvidia-driver)"
check "dnf install kernel-devel for the running kernel" dnf_in_root -y install "kernel-devel-$K"
dnf_out el9-install-nvidia-open -y install nvidia-open
check "dnf install nvidia-open (580-open stream)" test "$DNF_RC" -eq 0
got=$(nvidia_installed)
printf '%s\n' "$got" >"$OUT/el9-installed.txt"
assert_all_at "Rocky 9, nvidia-driver:580-open: the installed NVIDIA packages" 580.178.04 "$got"
assert_eq "no 595 component" "" "$(grep ' 595\.' <<<"$got" || true)"
for p in nvidia-open kmod-nvidia-open-dkms nvidia-driver nvidia-driver-cuda nvidia-driver-cuda-libs nvidia-driver-libs \
    libnvidia-ml libnvidia-cfg libnvidia-gpucomp nvidia-kmod-common nvidia-modprobe nvidia-persistenced; do
    check "$p installed (nvidia-open's closure)" grep -q "^$p " <<<"$got"
done
assert_no_rpm kmod-nvidia-latest-dkms
assert_no_rpm cuda-drivers
assert_rpm nvidia-open 3:580.178.04-1.el9
assert_rpm dkms 3.0.13-1.el9
for p in egl-gbm libglvnd-glx vulkan-loader ocl-icd opencl-filesystem linux-firmware; do
    check "$p from the distribution (NVIDIA's rpms require it)" test -n "$(rpm_evr "$p")"
done
loads_and_reports 580.178.04 13.0

# The stream's /fm profile: fabric manager and NSCQ at the stream's build, not 595's.
dnf_out el9-fm-profile --assumeno module install nvidia-driver:580-open/fm
fm=$(planned "$DNF_OUT")
check "/fm resolves nvidia-fabricmanager 580.178.04" grep -qx 'nvidia-fabricmanager 580.178.04-1.el9' <<<"$fm"
check "/fm resolves libnvidia-nscq 580.178.04" grep -qx 'libnvidia-nscq 580.178.04-1.el9' <<<"$fm"
assert_eq "/fm resolves nothing of 595" "" "$(grep ' 595\.' <<<"$fm" || true)"
assert_eq "rpm -Va: every installed file intact (configs aside)" "" "$(rpm_verify_all)"
rootfs_remove "$ROOT"

# --- Rocky 10: no module streams, versionlock ---------------------------------------------------
el_use_os rocky-10
el_scenario_begin clean --no-gpuprov
add_cuda_repo rhel10
K=${SIM_KERNEL%.x86_64}
assert_eq "os-release is Rocky 10's" 'PLATFORM_ID="platform:el10"' "$(grep '^PLATFORM_ID=' "$ROOT/etc/os-release")"
assert_rpm rocky-release 10.0-1.el10
assert_rpm kernel-core "$K"

dnf_out el10-module-list module list nvidia-driver
check "rhel10 has no module metadata: dnf module list nvidia-driver finds nothing" test "$DNF_RC" -ne 0
check "... 'No matching Modules to list'" grep -q 'No matching Modules to list' <<<"$DNF_OUT"

dnf_out el10-newest --assumeno install nvidia-open
newest=$(planned "$DNF_OUT")
check "dnf install nvidia-open resolves nvidia-open 610.57.04 (the newest)" grep -qx 'nvidia-open 610.57.04-1.el10' <<<"$newest"
check "... and its module 610.57.04" grep -qx 'kmod-nvidia-open-dkms 610.57.04-1.el10' <<<"$newest"
assert_eq "... and nothing of 595" "" "$(grep ' 595\.' <<<"$newest" || true)"

dnf_out el10-versionlock-no-plugin versionlock
check "Rocky 10 without python3-dnf-plugin-versionlock: dnf versionlock fails" test "$DNF_RC" -ne 0
check "... with 'No such command'" grep -q 'No such command: versionlock' <<<"$DNF_OUT"
check "dnf install python3-dnf-plugin-versionlock (BaseOS)" dnf_in_root -y install python3-dnf-plugin-versionlock
assert_rpm python3-dnf-plugin-versionlock 4.7.0-9.el10
check "dnf versionlock works with the plugin installed" dnf_in_root versionlock list
check "rpm owns the plugin it installed" in_root "$ROOT" 10 rpm -qf /usr/lib/python3/dist-packages/dnf-plugins/versionlock.py

# NVIDIA's guide, RHEL 10, a specific branch: lock *nvidia*<branch>*, then install nvidia-open.
check "dnf versionlock add '*nvidia*595*'" dnf_in_root versionlock add '*nvidia*595*'
locked=$(versionlock_list)
printf '%s\n' "$locked" >"$OUT/el10-versionlock.list"
check "versionlock.list locks nvidia-open at 595.91.07" grep -qxF 'nvidia-open-3:595.91.07-1.el10.*' <<<"$locked"
check "versionlock.list locks kmod-nvidia-open-dkms at 595.91.07" grep -qxF 'kmod-nvidia-open-dkms-3:595.91.07-1.el10.*' <<<"$locked"
assert_eq "versionlock.list locks nothing of 610" "" "$(grep 610 <<<"$locked" || true)"

# Without the locks the same request for the 595 meta reaches 610: nvidia-open requires its parts
# floor-only (>=), INFERRED from NVIDIA's deb metas (RPM.md); the locks are what keep the branch.
dnf_out el10-unlocked-595 --disableplugin=versionlock --assumeno install nvidia-open-3:595.91.07-1.el10
unlocked=$(planned "$DNF_OUT")
check "unlocked: nvidia-open 595.91.07 pulls kmod-nvidia-open-dkms 610.57.04" \
    grep -qx 'kmod-nvidia-open-dkms 610.57.04-1.el10' <<<"$unlocked"

check "dnf install kernel-devel for the running kernel" dnf_in_root -y install "kernel-devel-$K"
dnf_out el10-install-nvidia-open -y install nvidia-open
check "dnf install nvidia-open (locked to 595)" test "$DNF_RC" -eq 0
got=$(nvidia_installed)
printf '%s\n' "$got" >"$OUT/el10-installed.txt"
assert_all_at "Rocky 10, versionlock *nvidia*595*: the installed NVIDIA packages" 595.91.07 "$got"
assert_eq "no 610 component" "" "$(grep ' 610\.' <<<"$got" || true)"
for p in nvidia-open kmod-nvidia-open-dkms nvidia-driver nvidia-driver-cuda libnvidia-ml nvidia-kmod-common nvidia-persistenced; do
    check "$p installed (nvidia-open's closure)" grep -q "^$p " <<<"$got"
done
assert_no_rpm kmod-nvidia-latest-dkms
assert_no_rpm xorg-x11-nvidia # EL 10 has no X.Org server to supplement
loads_and_reports 595.91.07 13.2
assert_eq "rpm -Va: every installed file intact (configs aside)" "" "$(rpm_verify_all)"
scenario_end
