# shellcheck shell=bash
# What NVIDIA's DCGM 4 needs from Debian 12's own archive and a minbase root lacks, as stand-ins on
# the mirror's `debian` repository (label Debian), beside rdma.sh's: core `Depends: libc6 (>= 2.27),
# lshw` and -cuda<N> `Recommends: libnuma1` (tests/fixtures/nvidia-repos/<slug>/Packages.dcgm). The
# e2e roots have libc6 2.36, passwd and login (core's Pre-Depends); lshw and libnuma1 they do not.
# Names, versions, Source, Depends, Recommends, Multi-Arch, Section and file paths are bookworm's
# (`apt-cache show` and `dpkg-deb -f`/`-c` of the .debs from deb.debian.org bookworm/main, read on
# a Debian 12 host on 2026-12-05); the payloads are stand-ins. Sourced by mirror/build.sh once
# mkdeb, put and lib exist.
#
# What stays harsh: without this repository among the root's sources, apt cannot install DCGM's
# core at all (lshw is a Depends), as on a host whose Debian archive is missing. lshw's own
# Recommends (pci.ids, usb.ids) are kept and are not on the mirror: apt skips a recommendation it
# cannot find, as it would skip one the host's apt is told not to install.
LSHW=02.19.git.2021.06.19.996aaad9c7-2+b1
NUMA=2.0.16-1

# shellcheck disable=SC2034 # MAINT is read by build.sh's mkdeb
MAINT='Ghe Rivero <ghe@debian.org>'
cat <<'LSHW' | put lshw "$LSHW" /usr/bin/lshw 0755
#!/bin/sh
# gpuprov e2e stand-in for lshw (Debian 12's lshw 02.19.git.2021.06.19.996aaad9c7-2+b1)
case "${1:-}" in -version) echo "B.02.19"; exit 0 ;; esac
echo "e2e lshw stand-in: no hardware listing is simulated" >&2
exit 0
LSHW
EXTRA_FIELDS=$'Source: lshw (02.19.git.2021.06.19.996aaad9c7-2)\nRecommends: pci.ids, usb.ids' \
    mkdeb lshw "$LSHW" "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 11)" \
    "information about hardware configuration" utils

# shellcheck disable=SC2034
MAINT='Ian Wienand <ianw@debian.org>'
lib libnuma1 "$NUMA" libnuma.so.1 libnuma.so.1.0.0
EXTRA_FIELDS=$'Source: numactl\nMulti-Arch: same' mkdeb libnuma1 "$NUMA" "libc6 (>= 2.34)" \
    "Libraries for controlling NUMA policy" libs
