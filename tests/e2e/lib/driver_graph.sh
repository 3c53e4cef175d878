# shellcheck shell=bash
# What an NVIDIA driver scenario on the recorded graph asks of a root and of plain apt (43-46):
# the installed driver packages, the pinning packages, apt's simulation, and what of it lands on
# another branch. Sourced after lib/scenario.sh (in_root, $ROOT).

# NVIDIA driver packages by name ("libcuda1 " is Debian's name for the CUDA driver library);
# the container toolkit's libnvidia-container* are not driver packages.
DRIVER_RE='^(nvidia-|libnvidia-|cuda-drivers|xserver-xorg-video-nvidia|libcuda1 )'
NOT_DRIVER_RE='^(nvidia-container-toolkit|libnvidia-container)'

# driver_versions: "name version" of every installed NVIDIA driver package (pinning packages apart)
driver_versions() {
    # shellcheck disable=SC2016 # dpkg-query format
    in_root "$ROOT" 30 dpkg-query -W -f='${Status}\t${Package} ${Version}\n' 2>/dev/null |
        awk -F'\t' '$1 ~ /^(install|hold) ok installed$/ {print $2}' |
        grep -E "$DRIVER_RE" | grep -Ev "$NOT_DRIVER_RE" | grep -v '^nvidia-driver-pinning' || true
}
# pins_installed: the installed nvidia-driver-pinning-* packages, one per line
pins_installed() {
    # shellcheck disable=SC2016 # dpkg-query format
    in_root "$ROOT" 30 dpkg-query -W -f='${Status}\t${Package}\n' 'nvidia-driver-pinning*' 2>/dev/null |
        awk -F'\t' '$1 ~ /^(install|hold) ok installed$/ {print $2}' || true
}
# apt_sim ARGS...: plain apt's simulation in the root, versions shown; never fails the scenario
apt_sim() { in_root "$ROOT" 120 apt-get -s -o APT::Get::Show-Versions=1 "$@" 2>&1 || true; }
# off_branch BRANCH SIM-OUTPUT: the NVIDIA driver packages apt would install at another branch
# (a version whose leading number is not BRANCH; pinning packages count, their version is "<b>-N").
off_branch() {
    grep -E '^Inst ' <<<"$2" | awk '{print $2, ($3 ~ /^\[/ ? $4 : $3)}' | tr -d '(' |
        grep -E "$DRIVER_RE" | grep -Ev "$NOT_DRIVER_RE" |
        awk -v b="$1" '{split($2, v, /[.-]/); if (v[1] != b) print $1 " " $2}' || true
}
# assert_dist_upgrade_keeps DESC: plain `apt-get -s dist-upgrade` in the root installs, upgrades
# or removes no NVIDIA driver package (its output kept as $OUT/dist-upgrade.txt).
assert_dist_upgrade_keeps() {
    local sim
    sim=$(apt_sim dist-upgrade)
    printf '%s\n' "$sim" >"$OUT/dist-upgrade.txt"
    log "$1: dist-upgrade would: $(grep -E '^(Inst|Remv) ' <<<"$sim" | paste -sd';')"
    assert_eq "$1" "" \
        "$(grep -E '^(Inst|Remv) ' <<<"$sim" | awk '{print $2}' | grep -E "$DRIVER_RE" | grep -Ev "$NOT_DRIVER_RE" || true)"
}
