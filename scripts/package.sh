#!/usr/bin/env bash
# Builds gpuprov_<version>_<arch>.deb from the tree `cmake --install` lays out (binary, man page,
# bash/zsh completion, logrotate, docs), with the runtime dependencies dpkg-shlibdeps computes
# from the binary itself plus libcurl (opened at run time). And gpuprov-<version>-1.<arch>.rpm
# from the same tree when rpmbuild is installed (Debian's `rpm` package). The binary is the
# release build (scripts/build.sh --release), checked by scripts/check-portable.sh: one package
# for every supported distro. e2e 17 holds the .deb to lintian (no error or warning).
# Usage: scripts/package.sh [OUTDIR]   (default dist-out/; builds build/gpuprov first)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist-out}" && cd "${1:-dist-out}" && pwd)

# An existing build tree is reused as it is configured (build/gpuprov relinks against the
# sysroot if it was not the release binary yet; nothing recompiles). A new one is a packager's:
# warnings are not errors (another compiler may warn where ours does not) and no tests.
if [[ ! -f build/CMakeCache.txt ]]; then
    export GPUPROV_WARNINGS_AS_ERRORS=${GPUPROV_WARNINGS_AS_ERRORS:-OFF}
    export GPUPROV_BUILD_TESTS=${GPUPROV_BUILD_TESTS:-OFF}
fi
scripts/build.sh --release --target gpuprov >&2
# The install paths are a configure-time choice (GNUInstallDirs puts /etc beside a /usr
# prefix); changing the prefix recompiles nothing.
cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc >/dev/null
version=$(sed -n 's/^project(gpuprov VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
DESTDIR=$root cmake --install build --strip >/dev/null
# As dh_strip does: no compiler version comments.
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/gpuprov"
scripts/check-portable.sh "$root/usr/bin/gpuprov" >&2
maintainer=${GPUPROV_MAINTAINER:-gpuprov developers <gpuprov@localhost>}
# Debian policy: man pages compressed, a copyright file, conffiles listed, root-owned files.
gzip -9n "$root/usr/share/man/man1/gpuprov.1"
mkdir -p "$root/usr/share/doc/gpuprov"
install -m 0644 dist/debian/copyright "$root/usr/share/doc/gpuprov/copyright"
install -D -m 0644 dist/debian/lintian-overrides "$root/usr/share/lintian/overrides/gpuprov"
printf 'gpuprov (%s-1) unstable; urgency=medium\n\n  * Release %s.\n\n -- %s  %s\n' \
    "$version" "$version" "$maintainer" "$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")" |
    gzip -9n >"$root/usr/share/doc/gpuprov/changelog.Debian.gz"

# Runtime dependencies, from the ELF's NEEDED entries and the system's shlibs/symbols files.
mkdir -p "$stage/debian"
printf 'Source: gpuprov\n\nPackage: gpuprov\nArchitecture: any\n' >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e root/usr/bin/gpuprov 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n "$depends" ]] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# libcurl is opened with dlopen by the commands that download (src/system/http_curl.cpp), so
# no NEEDED entry names it: either Debian flavour of libcurl.so.4, 7.61 (EL 8's) or newer.
depends="$depends, libcurl4 (>= 7.61) | libcurl3-gnutls (>= 7.61)"
# Repository signatures are checked with gpgv, which Debian 13's apt (sqv) no longer pulls in.
depends="$depends, gpgv"
# The host's symbols files date every glibc symbol to its own (>= 2.34) layout; the binary's
# newest glibc symbol version is the libc6 it needs.
glibc=$(objdump -T "$root/usr/bin/gpuprov" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
depends=$(sed -E "s/libc6 \(>= [^)]*\)/libc6 (>= $glibc)/" <<<"$depends")

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: gpuprov
Version: $version-1
Architecture: $arch
Maintainer: $maintainer
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
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 md5sum) >"$root/DEBIAN/md5sums"
deb="$out/gpuprov_${version}-1_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"

if command -v rpmbuild >/dev/null; then
    rm -rf "$root/DEBIAN" "$root/usr/share/lintian"
    rpmarch=$(uname -m)
    mkdir -p "$stage/rpm"
    {
        printf 'Name: gpuprov\nVersion: %s\nRelease: 1\nSummary: Provision and verify NVIDIA GPU hosts from YAML profiles\n' "$version"
        printf 'License: Proprietary\nBuildArch: %s\nAutoReqProv: yes\n' "$rpmarch"
        # Opened with dlopen (src/system/http_curl.cpp), so rpm's automatic requires miss it.
        printf 'Requires: libcurl.so.4()(64bit)\n\n'
        printf '%%description\ngpuprov turns a fresh server into a working, verified NVIDIA GPU machine.\n\n'
        # Every file of the install tree, as in the .deb (a hand-written list went stale and made
        # rpmbuild refuse "Installed (but unpackaged) file(s)"); /etc files are configuration
        # (the .deb's conffiles); the directories that are gpuprov's own are owned.
        printf '%%files\n'
        (cd "$root" && find . -mindepth 1 -type d \( -name '*gpuprov*' -o -path '*gpuprov*/*' \) \
            -printf '%%dir /%P\n' | LC_ALL=C sort)
        (cd "$root" && find . -type f -printf '/%P\n' | LC_ALL=C sort) | sed 's|^/etc/|%config(noreplace) /etc/|'
    } >"$stage/rpm/gpuprov.spec"
    # A failure is fatal: a mere warning here once hid a stale file list, and no .rpm was built.
    if ! rpmbuild -bb --quiet --buildroot "$root" --define "_topdir $stage/rpm" \
        --define "_rpmdir $out" --define '_build_id_links none' "$stage/rpm/gpuprov.spec" \
        >"$stage/rpmbuild.log" 2>&1; then
        echo "package.sh: rpmbuild failed:" >&2
        tail -n 20 "$stage/rpmbuild.log" >&2
        exit 1
    fi
    find "$out" -name "gpuprov-${version}-1.*.rpm" -newer "$stage/debian/control" -print
fi
