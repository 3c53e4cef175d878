# shellcheck shell=bash
# Harness side of lib/killshim (the wrapper that SIGKILLs gpuprov at its Nth command).
# Sourced by scenarios after lib/scenario.sh.

# Every command name gpuprov may start by name (src/: argv[0] of each Command), plus the tools
# they are usually reached through. Commands gpuprov starts by absolute path bypass PATH and
# are not counted: /sbin/ldconfig -p and /usr/local/cuda-X.Y/bin/nvcc --version, both
# read-only probes of the verify step.
KILLSHIM_NAMES="apt-get apt-mark apt-cache dpkg dpkg-query gpgv update-initramfs dracut systemctl
ln modprobe modinfo rmmod lsmod nvidia-smi nvidia-ctk nvidia-persistenced dkms mokutil ldconfig
update-alternatives uname"

# killshim_install ROOT: the wrapper and a link per name whose real command exists now.
killshim_install() {
    local r=$1 n
    install -D -m 0755 "$E2E_DIR/lib/killshim" "$r/usr/local/sbin/e2e-killshim"
    mkdir -p "$r/run/e2e-killshim"
    # shellcheck disable=SC2086 # one name per word
    printf '%s\n' $KILLSHIM_NAMES >"$r/run/e2e-killshim/names"
    for n in $KILLSHIM_NAMES; do
        if [[ -x "$r/usr/local/bin/$n" || -x "$r/usr/sbin/$n" || -x "$r/usr/bin/$n" ]]; then
            ln -sfn e2e-killshim "$r/usr/local/sbin/$n"
        fi
    done
}

# killshim_arm ROOT count|kill:N: counting from 1 again, with an empty log.
killshim_arm() {
    local c="$1/run/e2e-killshim"
    rm -f "$c/count" "$c/log" "$c/killed"
    printf '%s\n' "$2" >"$c/mode"
}
killshim_disarm() { rm -f "$1/run/e2e-killshim/mode"; }
killshim_count() { cat "$1/run/e2e-killshim/count" 2>/dev/null || echo 0; }
killshim_log() { cat "$1/run/e2e-killshim/log" 2>/dev/null || true; }
killshim_killed() { cat "$1/run/e2e-killshim/killed" 2>/dev/null || true; }
