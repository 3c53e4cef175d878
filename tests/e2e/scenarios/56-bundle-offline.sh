#!/usr/bin/env bash
# Air-gapped hosts (issue 24, docs/air-gapped.md): `gpuprov bundle` on a root that reaches the
# mirror (NVIDIA's repositories and the Debian kernel repository) writes the profile's closure as
# a signed offline bundle; a fresh root whose profile points at a dead port (nothing reachable)
# applies it with --from-bundle: converges, verifies, a second apply is a no-op. A bundle with
# one .deb altered, one signed by another key, and one applied on a host running a kernel whose
# headers it lacks are refused before any change. The air-gapped host has nouveau loaded, so the
# driver needs a reboot: the resume unit must install from the same bundle (its extracted copy,
# checked again), never from the repositories the host cannot reach. The key can be pinned in the
# profile (bundle.key_fingerprint) instead of --bundle-key.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

# copy_host_tool ROOT BIN: the host's (Debian 12, like the roots) binary and its libraries. The
# minbase roots have gpgv but not gpg, which the bundle key's signatures need.
copy_host_tool() {
    local r=$1 bin=$2 lib
    install -D -m 0755 "$bin" "$r$bin"
    for lib in $(ldd "$bin" | awk '$3 ~ /^\// {print $3}'); do
        [[ -e "$r$lib" ]] || install -D -m 0644 "$(readlink -f "$lib")" "$r$lib"
    done
}
for tool in /usr/bin/gpg /usr/bin/gpg-agent /usr/bin/gpgconf; do copy_host_tool "$ROOT" "$tool"; done

# The builder's distribution repository (kernel headers), as on a connected Debian host.
mirror_apt_source "$ROOT" debian debian-kernel
check "apt-get update (kernel repository)" in_root "$ROOT" 120 apt-get -q update

KA=$SIM_KERNEL   # 6.1.0-28-amd64: the running kernel of both roots
KB=6.1.0-31-amd64
gp --timeout 200 bundle "$PROFILE_IN_ROOT" --for debian-12/x86_64 --kernel "$KA" --output /root/bundle.tar
expect_rc "bundle for debian-12, kernel $KA" 0
FPR=$(sed -n 's/^Bundle key fingerprint: //p' "$GP_STDOUT")
check "bundle printed a 40-digit key fingerprint" grep -Eqx '[0-9A-F]{40}' <<<"$FPR"
BDIR=$OUT/bundle
rm -rf "$BDIR" && mkdir -p "$BDIR" && tar -xf "$ROOT/root/bundle.tar" -C "$BDIR"
assert_file "the signed manifest" "$BDIR/manifest.json.asc"
check "manifest: profile digest, target, kernel, every file hashed" "$E2E_PYTHON" -c '
import json, sys, hashlib, os
d = json.load(open(sys.argv[1] + "/manifest.json"))
assert d["profile"]["digest"].startswith("sha256:"), d["profile"]
assert d["target"] == {"os": "debian-12", "arch": "x86_64"}, d["target"]
assert d["kernels"] == [sys.argv[2]], d["kernels"]
names = [f["path"] for f in d["files"]]
for f in d["files"]:
    data = open(os.path.join(sys.argv[1], f["path"]), "rb").read()
    assert hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["size"], f["path"]
for want in ("nvidia-driver-550_", "linux-headers-" + sys.argv[2] + "_", "nvidia-container-toolkit_"):
    assert any(want in n for n in names), (want, names)
assert any(n.startswith("provenance/cuda/") for n in names), names
' "$BDIR" "$KA"
check "bundle repository InRelease verifies with the bundle key alone" \
    gpgv --keyring "$BDIR/bundle-key.gpg" "$BDIR/repos/cuda/InRelease"

# The same profile signed by another key (another --key-home).
gp --timeout 200 bundle "$PROFILE_IN_ROOT" --for debian-12/x86_64 --kernel "$KA" --key-home /root/other-key \
    --output /root/bundle-other.tar
expect_rc "bundle signed by another key" 0
OTHER=$(sed -n 's/^Bundle key fingerprint: //p' "$GP_STDOUT")
check "the other key differs" test "$OTHER" != "$FPR"
# One .deb altered after signing.
ALT=$OUT/altered && rm -rf "$ALT" && cp -a "$BDIR" "$ALT"
deb=$(find "$ALT/repos/cuda" -name 'nvidia-driver-550_*.deb' | head -n 1)
printf 'x' >>"$deb"
tar -C "$ALT" -cf "$OUT/bundle-altered.tar" .

# The air-gapped host: a fresh root, its profile's mirror a dead port, no distro sources.
BUILDER=$ROOT
ROOT=$(rootfs_new "$SCENARIO-offline")
rootfs_prepare_host "$ROOT" nouveau
render_profile 3bf863cc.pub
sed -i "s/127\.0\.0\.1:$MIRROR_PORT/127.0.0.1:9/g" "$ROOT$PROFILE_IN_ROOT"
rootfs_install_gpuprov "$ROOT"
cp "$BUILDER/root/bundle.tar" "$BUILDER/root/bundle-other.tar" "$OUT/bundle-altered.tar" "$ROOT/root/"
rootfs_remove "$BUILDER"
host_state() { (cd "$ROOT" && find etc/apt var/lib/dpkg usr/share/keyrings -printf '%p %s %m %T@\n' | LC_ALL=C sort); }
# Kernel B running, the bundle has kernel A's headers only.
bundle_refusals "repos/cuda/nvidia-driver-550_" "linux-headers-$KB" "dpkg, /etc/apt, keyrings"
assert_no_pkg nvidia-driver-550

UNIT=/etc/systemd/system/gpuprov-resume.service
gp apply "$PROFILE_IN_ROOT" --yes --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "apply --from-bundle, offline, nouveau loaded: reboot required" 3
assert_grep "the resume unit installs from the bundle's checked copy, with its key" \
    "^ExecStart=/usr/local/bin/gpuprov apply /etc/gpuprov/resume/[^ ]+\.yaml --yes --reboot never --from-bundle /var/cache/gpuprov/repos/bundles/[0-9a-f]{16} --bundle-key $FPR\$" \
    "$ROOT$UNIT"
rootfs_reboot "$ROOT"
run_resume_unit "$UNIT"
assert_eq "journal result after the resumed run" "done" "$(journal_result)"
assert_no_file "resume unit removed" "$ROOT$UNIT"
assert_pkg nvidia-driver-550 "$E2E_DRIVER_VERSION-1"
assert_pkg nvidia-container-toolkit 1.17.3-1
gp verify "$PROFILE_IN_ROOT" --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "verify --from-bundle" 0
status_before=$(sha256sum <"$ROOT/var/lib/dpkg/status")
gp apply "$PROFILE_IN_ROOT" --yes --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "second apply --from-bundle" 0
assert_eq "the second apply changed no package" "$status_before" "$(sha256sum <"$ROOT/var/lib/dpkg/status")"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "plan --detailed-exitcode after apply" 0
# The key pinned in the profile (bundle.key_fingerprint) instead of --bundle-key; both given and
# different: refused at the profile's line, naming both.
printf 'bundle:\n  key_fingerprint: "%s"\n' "$FPR" >>"$ROOT$PROFILE_IN_ROOT"
gp verify "$PROFILE_IN_ROOT" --from-bundle /root/bundle.tar
expect_rc "verify --from-bundle with the key pinned in the profile, no --bundle-key" 0
gp plan "$PROFILE_IN_ROOT" --from-bundle /root/bundle.tar --bundle-key "$OTHER"
expect_rc "plan with --bundle-key another than the profile's pin" 1
assert_grep "the refusal is at the profile's key and names both" \
    "$PROFILE_IN_ROOT:[0-9]+:[0-9]+: .*bundle.key_fingerprint is $FPR but --bundle-key is $OTHER" "$GP_STDERR"
check "the sources name the bundle, not the mirror" grep -q 'URIs: file:///var/cache/gpuprov/repos/bundles/' \
    "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources"
assert_no_http_requests
scenario_end
