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

# killshim_arm ROOT count|states|kill:N|kill-before:CMD: counting from 1 again, with an empty log.
killshim_arm() {
    local c="$1/run/e2e-killshim"
    rm -f "$c/count" "$c/log" "$c/killed" "$c/states"
    touch "$c/armed" # what mode "states" compares ctimes with
    printf '%s\n' "$2" >"$c/mode"
}
killshim_disarm() { rm -f "$1/run/e2e-killshim/mode"; }
killshim_count() { cat "$1/run/e2e-killshim/count" 2>/dev/null || echo 0; }
killshim_log() { cat "$1/run/e2e-killshim/log" 2>/dev/null || true; }
# killshim_states ROOT: "N fingerprint" per call of the last run armed with mode "states".
killshim_states() { cat "$1/run/e2e-killshim/states" 2>/dev/null || true; }
killshim_killed() { cat "$1/run/e2e-killshim/killed" 2>/dev/null || true; }

# The copies a kill scenario (11, 45) runs each N on. killshim_copies_begin TEMPLATE NAME: COPIES
# is a tmpfs of its own when one can be mounted (as root it can; with E2E_KEEP=1 they stay on
# disk, to be looked at): on this VM's disk, removing a copy whose files had been written back
# took 4 s each. What is tested (a SIGKILL, then a re-run) does not depend on the filesystem: a
# killed process loses no write it made. The binary every copy runs is moved out of TEMPLATE
# once (SHARED_BIN, same filesystem as the copies) and hard-linked into each: copying and
# deleting 130 MB (debug info) per copy was most of that work. Nothing writes it in place:
# apply never installs the binary it runs from (/usr/local/bin/gpuprov), and write_file_atomic
# would replace the link, not the file.
killshim_copies_begin() {
    KILLSHIM_TEMPLATE=$1
    COPIES=$E2E_WORK/roots/$SCENARIO-copies
    mkdir -p "$COPIES"
    ON_TMPFS=0
    if [[ "${E2E_KEEP:-0}" != 1 ]] && mount -t tmpfs -o mode=0755 "gpuprov-e2e-$2" "$COPIES" 2>/dev/null; then
        ON_TMPFS=1
    else
        log "copies on disk (no tmpfs: E2E_KEEP=1 or the mount was refused)"
    fi
    BIN=usr/local/bin/gpuprov
    SHARED_BIN=$COPIES/gpuprov
    mv "$KILLSHIM_TEMPLATE/$BIN" "$SHARED_BIN"
}
# killshim_copy SRC NAME: a copy of SRC (the template or a root under COPIES) as COPIES/NAME, the
# shared binary linked in; prints its path.
killshim_copy() {
    local dst="$COPIES/$2"
    rm -rf "$dst"
    cp -a --reflink=auto "$1" "$dst"
    rm -f "$dst/$BIN"
    ln "$SHARED_BIN" "$dst/$BIN"
    printf '%s\n' "$dst"
}
# killshim_copies_end: the binary back into the template, the tmpfs gone.
killshim_copies_end() {
    mv "$SHARED_BIN" "$KILLSHIM_TEMPLATE/$BIN"
    if ((ON_TMPFS)); then umount "$COPIES" || umount -l "$COPIES" || true; fi
}
# timed PHASE CMD...: runs CMD (its status is returned), adds its wall time to SPENT[PHASE]
# (EPOCHREALTIME: sub-second); the scenario declares SPENT and logs where the time went.
timed() {
    local phase=$1 t0=$EPOCHREALTIME rc=0
    shift
    "$@" || rc=$?
    SPENT[$phase]=$(awk -v a="${SPENT[$phase]:-0}" -v t0="$t0" -v t1="$EPOCHREALTIME" 'BEGIN {printf "%.1f", a + t1 - t0}')
    return "$rc"
}
