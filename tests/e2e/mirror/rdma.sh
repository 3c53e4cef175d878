# shellcheck shell=bash
# Debian 12's RDMA userspace as stand-ins for the distro archive the infiniband step installs
# from (e2e 27): the names, versions, Depends/Recommends/Pre-Depends/Multi-Arch and file paths of
# bookworm's packages (source package rdma-core 44.0-2, libnl 3.7.0-0.2+b1, read from the real
# .debs with `dpkg-deb -f` and `-c`), with tiny payloads. Published as the mirror's `debian`
# repository (label Debian). Sourced by mirror/build.sh once mkdeb, put, lib and script exist.
#
# What stays harsh: libibverbs1 only Recommends ibverbs-providers (the mlx5 provider), so an apt
# that skips Recommends leaves the verbs library without a driver and ibv_devinfo finds no HCA;
# infiniband-diags needs perl:any, which only a Multi-Arch: allowed perl satisfies; rdma-core
# needs udev, lsb-base and libnl-3-200 (the first in the root, the other two only here).
RDMA=44.0-2
NL=3.7.0-0.2+b1
ARCH_LIB=/usr/lib/x86_64-linux-gnu

# --- libnl (libibverbs1 and rdma-core link it) ---------------------------------------------
MAINT='Heiko Stuebner <mmind@debian.org>'
lib libnl-3-200 "$NL" libnl-3.so.200 libnl-3.so.200.26.0
printf '0x00000000\tdefault\n' | put libnl-3-200 "$NL" /etc/libnl-3/classid 0644
printf 'ip.src\tu32\tnet\t12\n' | put libnl-3-200 "$NL" /etc/libnl-3/pktloc 0644
printf '/etc/libnl-3/classid\n/etc/libnl-3/pktloc\n' | script libnl-3-200 "$NL" conffiles
EXTRA_FIELDS='Multi-Arch: same' mkdeb libnl-3-200 "$NL" "libc6 (>= 2.34)" \
    "library for dealing with netlink sockets" libs
lib libnl-route-3-200 "$NL" libnl-route-3.so.200 libnl-route-3.so.200.26.0
EXTRA_FIELDS='Multi-Arch: same' mkdeb libnl-route-3-200 "$NL" "libnl-3-200 (= $NL), libc6 (>= 2.34)" \
    "library for dealing with netlink sockets - route interface" libs

# --- what rdma-core and infiniband-diags need that a minbase root lacks -----------------------
MAINT='Debian QA Group <packages@qa.debian.org>'
EXTRA_FIELDS='Multi-Arch: foreign' mkdeb lsb-base 11.6 "sysvinit-utils (>= 3.05-4~)" \
    "transitional package for LSB init script functionality" misc
# perl without its modules (the stand-in ships no files; perl-base's /usr/bin/perl stays).
MAINT='Niko Tyni <ntyni@debian.org>'
EXTRA_FIELDS='Multi-Arch: allowed' mkdeb perl 5.36.0-7+deb12u3 "perl-base (>= 5.36.0-7)" \
    "Larry Wall's Practical Extraction and Report Language" perl

# --- rdma-core 44.0-2 ---------------------------------------------------------------------------
MAINT='Benjamin Drung <bdrung@ubuntu.com>'
lib libibverbs1 "$RDMA" libibverbs.so.1 libibverbs.so.1.14.44.0
script libibverbs1 "$RDMA" postinst <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    getent group rdma > /dev/null 2>&1 || addgroup --system --quiet rdma
fi
POSTINST
EXTRA_FIELDS=$'Recommends: ibverbs-providers\nBreaks: ibverbs-providers (<< 34~)\nMulti-Arch: same' \
    mkdeb libibverbs1 "$RDMA" "adduser, libc6 (>= 2.34), libnl-3-200 (>= 3.2.7), libnl-route-3-200 (>= 3.2.7)" \
    "Library for direct userspace use of RDMA (InfiniBand/iWARP)" libs

# The mlx5 provider (ConnectX-4 and later): its .driver file and the library libibverbs dlopens.
lib ibverbs-providers "$RDMA" libmlx5.so.1 libmlx5.so.1.24.44.0
printf 'driver mlx5\n' | put ibverbs-providers "$RDMA" /etc/libibverbs.d/mlx5.driver 0644
mkdir -p "$(pkgdir ibverbs-providers "$RDMA")/root$ARCH_LIB/libibverbs"
ln -sf ../libmlx5.so.1.24.44.0 "$(pkgdir ibverbs-providers "$RDMA")/root$ARCH_LIB/libibverbs/libmlx5-rdmav34.so"
EXTRA_FIELDS=$'Multi-Arch: same\nBreaks: libmlx5-1 (<< 15)\nReplaces: libmlx5-1 (<< 15)' \
    mkdeb ibverbs-providers "$RDMA" "libc6 (>= 2.34), libibverbs1 (>= 38)" \
    "User space provider drivers for libibverbs" net

# ibv_devinfo -l as rdma-core's prints it ("N HCAs found:", a tab before each name). Devices are
# found as libibverbs finds them: /sys/class/infiniband_verbs/uverbs*/ibdev, each kept only when
# a provider matches its PCI vendor (/etc/libibverbs.d/*.driver) and the provider library loads;
# otherwise libibverbs' own warning on stderr. Only -l is simulated.
put ibverbs-utils "$RDMA" /usr/bin/ibv_devinfo 0755 <<'DEVINFO'
#!/bin/sh
# gpuprov e2e stand-in for rdma-core 44's ibv_devinfo (only -l).
lib=/usr/lib/x86_64-linux-gnu
if [ ! -e "$lib/libibverbs.so.1" ]; then
    echo "ibv_devinfo: error while loading shared libraries: libibverbs.so.1: cannot open shared object file: No such file or directory" >&2
    exit 127
fi
case "$*" in
    -l | --list) ;;
    *) echo "ibv_devinfo: the gpuprov e2e stand-in only simulates -l" >&2; exit 2 ;;
esac
n=0
names=""
for d in /sys/class/infiniband_verbs/uverbs*; do
    [ -r "$d/ibdev" ] || continue
    case "$(cat "$d/device/vendor" 2>/dev/null)" in
        0x15b3) prov=mlx5 ;;
        *) prov="" ;;
    esac
    if [ -z "$prov" ] || ! cat /etc/libibverbs.d/*.driver 2>/dev/null | grep -qx "driver $prov"; then
        echo "libibverbs: Warning: no userspace device-specific driver found for $d" >&2
        continue
    fi
    if [ ! -e "$lib/libibverbs/lib$prov-rdmav34.so" ]; then
        echo "libibverbs: Warning: couldn't load driver 'lib$prov-rdmav34.so': lib$prov-rdmav34.so: cannot open shared object file: No such file or directory" >&2
        continue
    fi
    n=$((n + 1))
    names="$names	$(cat "$d/ibdev")
"
done
if [ "$n" -eq 1 ]; then echo "1 HCA found:"; else echo "$n HCAs found:"; fi
printf '%s' "$names"
exit 0
DEVINFO
mkdeb ibverbs-utils "$RDMA" "libc6 (>= 2.34), libibverbs1 (>= 34)" "Examples for the libibverbs library" net

lib libibumad3 "$RDMA" libibumad.so.3 libibumad.so.3.2.44.0
EXTRA_FIELDS='Multi-Arch: same' mkdeb libibumad3 "$RDMA" "libc6 (>= 2.4)" \
    "InfiniBand Userspace Management Datagram (uMAD) library" libs
lib libibmad5 "$RDMA" libibmad.so.5 libibmad.so.5.3.44.0
EXTRA_FIELDS='Multi-Arch: same' mkdeb libibmad5 "$RDMA" "libc6 (>= 2.14), libibumad3 (>= 1.3.9)" \
    "Infiniband Management Datagram (MAD) library" libs
lib libibnetdisc5 "$RDMA" libibnetdisc.so.5 libibnetdisc.so.5.0.44.0
EXTRA_FIELDS='Multi-Arch: same' mkdeb libibnetdisc5 "$RDMA" "libc6 (>= 2.33), libibmad5 (>= 1.3.11), libibumad3 (>= 1.3.9)" \
    "InfiniBand diagnostics library" libs
printf '# gpuprov e2e stand-in for infiniband-diags %s\n' "$RDMA" | put infiniband-diags "$RDMA" /etc/infiniband-diags/ibdiag.conf 0644
printf '/etc/infiniband-diags/ibdiag.conf\n' | script infiniband-diags "$RDMA" conffiles
mkdeb infiniband-diags "$RDMA" "libibnetdisc5 (= $RDMA), perl:any, libc6 (>= 2.34), libibmad5 (>= 1.3.12), libibumad3 (>= 3.2.30)" \
    "InfiniBand diagnostic programs" net

# rdma-core: udev rules and the module lists its units load (ib_uverbs among them).
printf '# These modules are loaded by the system if any RDMA devices is installed\nib_iser\nib_uverbs\nrdma_ucm\n' |
    put rdma-core "$RDMA" /etc/rdma/modules/rdma.conf 0644
printf '# These modules are loaded by the system if any InfiniBand device is installed\nib_ipoib\nib_umad\n' |
    put rdma-core "$RDMA" /etc/rdma/modules/infiniband.conf 0644
printf '/etc/rdma/modules/infiniband.conf\n/etc/rdma/modules/rdma.conf\n' | script rdma-core "$RDMA" conffiles
printf 'SUBSYSTEM!="infiniband", GOTO="rdma_ulp_modules_end"\nTAG+="systemd", ENV{ID_RDMA_INFINIBAND}=="1", ENV{SYSTEMD_WANTS}+="rdma-load-modules@infiniband.service"\nLABEL="rdma_ulp_modules_end"\n' |
    put rdma-core "$RDMA" /lib/udev/rules.d/90-rdma-ulp-modules.rules 0644
printf '[Unit]\nDescription=Load RDMA modules from /etc/rdma/modules/%%I.conf\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/lib/systemd/systemd-modules-load /etc/rdma/modules/%%I.conf\n' |
    put rdma-core "$RDMA" /lib/systemd/system/rdma-load-modules@.service 0644
EXTRA_FIELDS=$'Pre-Depends: init-system-helpers (>= 1.54~)\nRecommends: dmidecode, ethtool, iproute2\nBreaks: infiniband-diags (<< 2.0.0)\nReplaces: infiniband-diags (<< 2.0.0)' \
    mkdeb rdma-core "$RDMA" "lsb-base (>= 3.2-14~), udev, libc6 (>= 2.34), libnl-3-200 (>= 3.2.7), libsystemd0, libudev1 (>= 183)" \
    "RDMA core userspace infrastructure and documentation" net
