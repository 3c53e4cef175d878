#!/usr/bin/env bash
# Prints the path of a link-time glibc sysroot: Debian 11 (bullseye) libc6 and libc6-dev,
# fetched with apt from Debian's archive into a private apt state (the host's sources and
# package database are untouched) and cached. The release binary links against it (CMake's
# GPUPROV_GLIBC_SYSROOT), so it needs no glibc symbol version newer than its libc (2.31) offers,
# nor the crt files of glibc >= 2.34 (__libc_start_main@GLIBC_2.34); scripts/check-portable.sh
# then holds it to 2.28 (EL 8), the oldest supported glibc.
#
# --arch ARCH (a Debian architecture, default the host's): the same for another architecture,
# for a cross build (scripts/build-arm64.sh). --deps: instead of glibc, Debian 12's -dev
# packages of the libraries gpuprov links statically (and the tests' googletest) for ARCH: the
# cross build compiles and links against them as the native build does against the host's. They
# are fetched rather than installed as multiarch packages: libyaml-cpp-dev is not Multi-Arch:
# same, so installing its arm64 twin removes the host's, and the rest would upgrade host packages.
# Usage: scripts/sysroot.sh [--arch ARCH] [--deps]
#        (GPUPROV_SYSROOT_CACHE, default /var/cache/gpuprov-build)
set -euo pipefail
arch=$(dpkg --print-architecture)
suite=bullseye
pkgs=(libc6 libc6-dev)
name=sysroot
while (($#)); do
    case $1 in
    --arch) arch=$2; shift 2 ;;
    --deps)
        suite=bookworm
        name=deps
        # What cmake/GpuprovDeps.cmake and tests/ find (scripts/deps.sh for the host).
        pkgs=(libcli11-dev libyaml-cpp-dev libfmt-dev libspdlog-dev libcurl4-openssl-dev libssl-dev
            zlib1g-dev nlohmann-json3-dev libgtest-dev)
        shift
        ;;
    *) echo "usage: scripts/sysroot.sh [--arch ARCH] [--deps]" >&2; exit 2 ;;
    esac
done
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${GPUPROV_SYSROOT_CACHE:-/var/cache/gpuprov-build}
recipe=1 # bump when the steps below change
key=$(printf '%s|%s|%s\n' "$suite" "$mirror" "$recipe" | sha256sum | cut -c1-12)
# The host's glibc sysroot keeps the name it always had (existing caches stay valid).
tag=$suite
[[ "$name" == sysroot && "$arch" == "$(dpkg --print-architecture)" ]] || tag=$suite-$arch
dir=$cache/$name-$tag-$key
if [[ -f "$dir/.complete" ]]; then
    printf '%s\n' "$dir"
    exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 600 9 || { echo "sysroot.sh: $cache/.lock is held" >&2; exit 1; }
if [[ ! -f "$dir/.complete" ]]; then
    work=$(mktemp -d "$cache/.work.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/root"
    printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
        "$mirror" "$suite" >"$work/sources.list"
    apt_opts=(-q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work" -o Dir::Cache::pkgcache=
        -o Dir::Cache::srcpkgcache= -o Dir::State::status=/dev/null -o Debug::NoLocking=1
        -o APT::Sandbox::User=root -o "APT::Architecture=$arch" -o APT::Architectures="$arch")
    apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
    (cd "$work/archives" && apt-get "${apt_opts[@]}" download "${pkgs[@]}") >>"$work/apt.log" 2>&1 ||
        { cat "$work/apt.log" >&2; exit 1; }
    for deb in "$work"/archives/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
    # libc6-dev's links and linker scripts name absolute paths; inside the sysroot they must
    # point into it, never at the host's newer glibc.
    while IFS= read -r link; do
        target=$(readlink "$link")
        ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$work/root$target")" "$link"
    done < <(find "$work/root" -type l -lname '/*')
    if [[ "$name" == sysroot ]]; then
        dpkg-deb -f "$work"/archives/libc6_*.deb Version >"$work/root/.glibc-version"
    fi
    touch "$work/root/.complete"
    rm -rf "$dir"
    mv "$work/root" "$dir"
fi
printf '%s\n' "$dir"
