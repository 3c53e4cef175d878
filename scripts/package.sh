#!/usr/bin/env bash
# Builds gpuprov_<version>_<arch>.deb from the tree `cmake --install` lays out (binary, man page,
# bash/zsh completion, logrotate, docs), with the runtime dependencies dpkg-shlibdeps computes
# from the binary itself. And gpuprov-<version>-1.<arch>.rpm from the same tree when rpmbuild
# is installed (Debian's `rpm` package).
# Usage: scripts/package.sh [OUTDIR]   (default dist-out/; builds build/ first when needed)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist-out}" && cd "${1:-dist-out}" && pwd)

if [[ ! -x build/gpuprov ]]; then GPUPROV_BUILD_TESTS=${GPUPROV_BUILD_TESTS:-OFF} scripts/build.sh; fi
# The install paths are a configure-time choice (GNUInstallDirs puts /etc beside a /usr
# prefix); changing the prefix recompiles nothing.
cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc >/dev/null
version=$(sed -n 's/^project(gpuprov VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
DESTDIR=$root cmake --install build --strip >/dev/null
# Debian policy: man pages compressed, a copyright file, conffiles listed, root-owned files.
gzip -9n "$root/usr/share/man/man1/gpuprov.1"
mkdir -p "$root/usr/share/doc/gpuprov"
cat >"$root/usr/share/doc/gpuprov/copyright" <<'COPY'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: gpuprov
Comment: NVIDIA facts in the documentation cite NVIDIA's published documents; the version
 matrix is data about NVIDIA's packages, none of NVIDIA's software is included.
COPY

# Runtime dependencies, from the ELF's NEEDED entries and the system's shlibs/symbols files.
mkdir -p "$stage/debian"
printf 'Source: gpuprov\n\nPackage: gpuprov\nArchitecture: any\n' >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e root/usr/bin/gpuprov 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n "$depends" ]] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: gpuprov
Version: $version-1
Architecture: $arch
Maintainer: gpuprov developers <gpuprov@localhost>
Installed-Size: $size
Depends: $depends
Recommends: apt, gpg
Section: admin
Priority: optional
Description: provision and verify NVIDIA GPU hosts from YAML profiles
 gpuprov turns a fresh cloud VM or bare-metal server into a working, verified
 NVIDIA GPU machine: nouveau blacklist, NVIDIA's repositories with pinned keys,
 the driver (held), CUDA toolkit, cuDNN, NCCL, container toolkit, tuning and
 monitoring. Its plan is the package manager's own transaction; it verifies
 every step with the real tools and resumes after the reboot a driver needs.
CONTROL
find "$root/etc" -type f -printf '/etc/%P\n' | sort >"$root/DEBIAN/conffiles"
deb="$out/gpuprov_${version}-1_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"

if command -v rpmbuild >/dev/null; then
    rm -rf "$root/DEBIAN"
    rpmarch=$(uname -m)
    mkdir -p "$stage/rpm"
    {
        printf 'Name: gpuprov\nVersion: %s\nRelease: 1\nSummary: Provision and verify NVIDIA GPU hosts from YAML profiles\n' "$version"
        printf 'License: Proprietary\nBuildArch: %s\nAutoReqProv: yes\n\n' "$rpmarch"
        printf '%%description\ngpuprov turns a fresh server into a working, verified NVIDIA GPU machine.\n\n'
        printf '%%files\n/usr/bin/gpuprov\n/usr/share/man/man1/gpuprov.1.gz\n/usr/share/bash-completion/completions/gpuprov\n'
        printf '/usr/share/zsh/vendor-completions/_gpuprov\n%%config(noreplace) /etc/logrotate.d/gpuprov\n/usr/share/doc/gpuprov\n'
    } >"$stage/rpm/gpuprov.spec"
    rpmbuild -bb --quiet --buildroot "$root" --define "_topdir $stage/rpm" \
        --define "_rpmdir $out" --define '_build_id_links none' "$stage/rpm/gpuprov.spec" >/dev/null 2>&1 &&
        find "$out" -name "gpuprov-${version}-1.*.rpm" -newer "$stage/debian/control" -print ||
        echo "package.sh: rpmbuild failed; no .rpm" >&2
fi
