#!/usr/bin/env bash
# e2e-exclusive: changes or counts what the shared mirror serves; runs alone (run.sh)
# (u) NVIDIA's cuda-keyring package next to gpuprov (issue 12; nvidia-facts.md §2.3). gpuprov
# sets up the CUDA repository without touching /usr/share/keyrings/cuda-archive-keyring.gpg;
# then a stand-in cuda-keyring .deb with the real paths is installed. Its .list names the same
# URL with another Signed-By, so apt refuses to update ("Conflicting values set for option
# Signed-By"). plan says so and adopts the package's source (its key is the pinned one); apply
# removes only gpuprov's own entry, apt updates again, and neither key file is changed by the
# other side. A cuda-keyring whose key is not the pinned one blocks with the fix.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

FPR=$(mirror_fingerprint)
URL=$(mirror_url compute/cuda/repos/debian12/x86_64/)
OWN_SRC=/etc/apt/sources.list.d/gpuprov-cuda.sources
OWN_KEY=/usr/share/keyrings/gpuprov-cuda.gpg
PKG_KEY=/usr/share/keyrings/cuda-archive-keyring.gpg
PKG_LIST=/etc/apt/sources.list.d/cuda-debian12-x86_64.list

gp apply "$PROFILE_IN_ROOT" --yes --only cuda-repo
expect_rc "gpuprov sets up the CUDA repository" 0
assert_no_file "cuda-keyring's path is not written by gpuprov" "$ROOT$PKG_KEY"
own_key_before=$(sha256sum <"$ROOT$OWN_KEY")

# build_keyring_deb KEYFILE OUT: cuda-keyring 1.1-1 with the paths the real package installs.
build_keyring_deb() {
    local d
    d=$(mktemp -d)
    mkdir -p "$d/DEBIAN" "$d/usr/share/keyrings" "$d/etc/apt/sources.list.d"
    gpg --dearmor <"$1" >"$d$PKG_KEY"
    printf 'deb [signed-by=%s] %s /\n' "$PKG_KEY" "$URL" >"$d$PKG_LIST"
    printf '%s\n' "$PKG_LIST" >"$d/DEBIAN/conffiles"
    cat >"$d/DEBIAN/control" <<CTL
Package: cuda-keyring
Version: 1.1-1
Architecture: all
Maintainer: cudatools <cudatools@nvidia.com>
Section: devel
Priority: optional
Description: GPG keyring for the CUDA repository (e2e stand-in)
CTL
    chmod 0644 "$d$PKG_KEY" "$d$PKG_LIST"
    dpkg-deb --root-owner-group -b "$d" "$2" >/dev/null
    rm -rf "$d"
}
KEYS=$MIRROR_DIR/www/compute/cuda/repos/debian12/x86_64
build_keyring_deb "$KEYS/3bf863cc.pub" "$ROOT/tmp/cuda-keyring.deb"
check "the stand-in cuda-keyring installs" in_root "$ROOT" 60 dpkg -i /tmp/cuda-keyring.deb
pkg_key=$(sha256sum <"$ROOT$PKG_KEY")

# What a host with both entries gets from apt.
out=$(in_root "$ROOT" 120 apt-get -q update 2>&1) && rc=0 || rc=$?
check "apt refuses two Signed-By values for one URL (exit $rc)" test "$rc" -ne 0
check "apt names the conflict" grep -q 'Conflicting values set for option Signed-By' <<<"$out"

gp plan "$PROFILE_IN_ROOT" --only cuda-repo --detailed-exitcode
expect_rc "plan: changes pending" 2
check "plan names the package's source" grep -q "$PKG_LIST" <(gp_output)
check "plan removes gpuprov's own entry" grep -q "$OWN_SRC" <(gp_output)

gp apply "$PROFILE_IN_ROOT" --yes --only cuda-repo
expect_rc "apply adopts cuda-keyring's source" 0
assert_no_file "gpuprov's own source is gone" "$ROOT$OWN_SRC"
assert_file "cuda-keyring's source stays" "$ROOT$PKG_LIST"
check "apt-get update works again" in_root "$ROOT" 120 apt-get -q update
assert_eq "cuda-keyring's key untouched by gpuprov" "$pkg_key" "$(sha256sum <"$ROOT$PKG_KEY")"
check "dpkg --verify cuda-keyring is clean" test -z "$(in_root "$ROOT" 30 dpkg --verify cuda-keyring 2>&1)"
assert_eq "gpuprov's key untouched by the package" "$own_key_before" "$(sha256sum <"$ROOT$OWN_KEY")"
assert_eq "the package's keyring holds the pinned key" "$FPR" "$(keyring_fprs "$PKG_KEY" | paste -sd,)"
gp plan "$PROFILE_IN_ROOT" --only cuda-repo --detailed-exitcode
expect_rc "plan after adopting: nothing to do" 0
assert_pkg cuda-keyring 1.1-1

# A cuda-keyring carrying some other key: gpuprov must not adopt it, and says what to do.
build_keyring_deb "$KEYS/wrong-key.pub" "$ROOT/tmp/cuda-keyring-wrong.deb"
check "the wrong-key stand-in installs" in_root "$ROOT" 60 dpkg -i /tmp/cuda-keyring-wrong.deb
gp plan "$PROFILE_IN_ROOT" --only cuda-repo
expect_rc "plan with a foreign key is blocked" 1
check "the fix is named" grep -q 'apt-get purge cuda-keyring' <(gp_output)
check "the pinned key is named" grep -q "$FPR" <(gp_output)
scenario_end
