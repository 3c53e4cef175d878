#!/usr/bin/env bash
# Builds gpuprov_<version>_<arch>.deb from the tree `cmake --install` lays out (binary, man page,
# bash/zsh completion, logrotate, docs), with the runtime dependencies dpkg-shlibdeps computes
# from the binary itself plus libcurl (opened at run time). And gpuprov-<version>-1.<arch>.rpm
# from the same tree when rpmbuild is installed (Debian's `rpm` package). The binary is the
# release build (scripts/build.sh --release), checked by scripts/check-portable.sh: one package
# for every supported distro. e2e 17 holds the .deb to lintian (no error or warning).
# --arch arm64: the aarch64 packages (gpuprov_<version>_arm64.deb, gpuprov-<version>-1.aarch64.rpm)
# from the cross build (scripts/build-arm64.sh, build-arm64/) for GH200/GB200/GB300 hosts.
# Usage: scripts/package.sh [--arch amd64|arm64] [OUTDIR]   (default dist-out/; builds the binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(dpkg --print-architecture)
if [[ "${1:-}" == "--arch" ]]; then
    arch=$2
    shift 2
fi
case $arch in
amd64) build=build rpmarch=x86_64 elfarch=x86_64 tools= ;;
arm64) build=build-arm64 rpmarch=aarch64 elfarch=aarch64 tools=aarch64-linux-gnu- ;;
*) echo "package.sh: --arch amd64 or arm64, not $arch" >&2; exit 2 ;;
esac
[[ "$arch" == "$(dpkg --print-architecture)" || "$arch" == arm64 ]] ||
    { echo "package.sh: --arch $arch is not built on $(dpkg --print-architecture)" >&2; exit 2; }
out=$(mkdir -p "${1:-dist-out}" && cd "${1:-dist-out}" && pwd)

# An existing build tree is reused as it is configured (build/gpuprov relinks against the
# sysroot if it was not the release binary yet; nothing recompiles). A new one is a packager's:
# warnings are not errors (another compiler may warn where ours does not) and no tests.
if [[ ! -f $build/CMakeCache.txt ]]; then
    export GPUPROV_WARNINGS_AS_ERRORS=${GPUPROV_WARNINGS_AS_ERRORS:-OFF}
    export GPUPROV_BUILD_TESTS=${GPUPROV_BUILD_TESTS:-OFF}
fi
if [[ $build == build ]]; then
    scripts/build.sh --release --target gpuprov >&2
else
    scripts/build-arm64.sh --target gpuprov >&2 # always the release link (its sysroot)
fi
# The install paths are a configure-time choice (GNUInstallDirs puts /etc beside a /usr
# prefix); changing the prefix recompiles nothing.
cmake -S . -B "$build" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc >/dev/null
version=$(sed -n 's/^project(gpuprov VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
DESTDIR=$root cmake --install "$build" --strip >/dev/null
# As dh_strip does: no compiler version comments (the target's strip: the host's reads no
# aarch64 ELF).
"${tools}strip" --remove-section=.comment --remove-section=.note "$root/usr/bin/gpuprov"
scripts/check-portable.sh "$root/usr/bin/gpuprov" "$elfarch" >&2
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
if [[ $build == build ]]; then
    depends=$(cd "$stage" && dpkg-shlibdeps -O -e root/usr/bin/gpuprov 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
else
    # No arm64 libc6 or libgcc-s1 is installed here for dpkg-shlibdeps to read, and
    # check-portable.sh allowed only glibc's libraries and libgcc_s as NEEDED: the same two
    # packages, libgcc-s1 at the newest GCC_ symbol version the binary asks for (as its symbols
    # file dates them); libc6's version is set below for both.
    gcc_version=$(objdump -T "$root/usr/bin/gpuprov" | grep -o '(GCC_[0-9.]*)' | tr -d '()' |
        sed -E 's/^GCC_//; s/^([0-9]+\.[0-9]+)\.0$/\1/' | sort -V | tail -n 1)
    depends="libc6 (>= 2.17), libgcc-s1 (>= ${gcc_version:-3.0})"
fi
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
    mkdir -p "$stage/rpm"
    {
        printf 'Name: gpuprov\nVersion: %s\nRelease: 1\nSummary: Provision and verify NVIDIA GPU hosts from YAML profiles\n' "$version"
        printf 'License: Proprietary\nAutoReqProv: yes\n'
        # A foreign BuildArch is refused ("No compatible architectures found for build"); the
        # cross package's arch comes from rpmbuild --target below.
        [[ "$rpmarch" != "$(uname -m)" ]] || printf 'BuildArch: %s\n' "$rpmarch"
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
    # --target: the arm64 package is built on x86_64.
    target=()
    [[ "$rpmarch" == "$(uname -m)" ]] || target=(--target "$rpmarch-linux")
    if ! rpmbuild -bb --quiet "${target[@]}" --buildroot "$root" --define "_topdir $stage/rpm" \
        --define "_rpmdir $out" --define '_build_id_links none' "$stage/rpm/gpuprov.spec" \
        >"$stage/rpmbuild.log" 2>&1; then
        echo "package.sh: rpmbuild failed:" >&2
        tail -n 20 "$stage/rpmbuild.log" >&2
        exit 1
    fi
    find "$out" -name "gpuprov-${version}-1.*.rpm" -newer "$stage/debian/control" -print
fi
