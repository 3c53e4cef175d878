#!/usr/bin/env bash
# e2e-timeout: 300
# Air-gapped EL hosts (issue 24, docs/air-gapped.md): `gpuprov bundle --for rocky-9` on a Rocky 9
# root that reaches the mirror (NVIDIA's rpm repositories and the distribution's BaseOS,
# AppStream and EPEL) writes the profile's closure (the 580-open stream, CUDA, kernel-devel for
# the named kernel, dkms, the versionlock plugin) as createrepo_c repositories whose repomd.xml
# the bundle key signs. A fresh Rocky 9 root whose every repository points at a dead port applies
# it with --from-bundle: converges, verifies, a second apply is a no-op. One .rpm altered, the
# bundle signed by another key, and a host running a kernel the bundle has no kernel-devel for
# are refused before any change. 130 s measured on the loaded 2-core machine.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean

# copy_host_tool ROOT BIN: the host's (Debian 12, like the roots) binary and its libraries. The EL
# root has gpg but not its agent (key generation needs it), nor createrepo_c/modifyrepo_c, which
# `gpuprov bundle` runs on an EL builder (EL: dnf install createrepo_c).
copy_host_tool() {
    local r=$1 bin=$2 lib
    install -D -m 0755 "$bin" "$r$bin"
    for lib in $(ldd "$bin" | awk '$3 ~ /^\// {print $3}'); do
        [[ -e "$r$lib" ]] || install -D -m 0644 "$(readlink -f "$lib")" "$r$lib"
    done
}
for tool in /usr/bin/gpg-agent /usr/bin/gpgconf /usr/bin/createrepo_c /usr/bin/modifyrepo_c; do
    copy_host_tool "$ROOT" "$tool"
done

KA=$SIM_KERNEL                    # 5.14.0-362.24.1.el9_3.x86_64: the running kernel of both roots
KB=5.14.0-427.13.1.el9_4.x86_64   # the newer el9 kernel the mirror carries
gp --timeout 240 bundle "$PROFILE_IN_ROOT" --for rocky-9/x86_64 --kernel "$KA" --output /root/bundle.tar
expect_rc "bundle for rocky-9, kernel $KA" 0
FPR=$(sed -n 's/^Bundle key fingerprint: //p' "$GP_STDOUT")
check "bundle printed a 40-digit key fingerprint" grep -Eqx '[0-9A-F]{40}' <<<"$FPR"
BDIR=$OUT/bundle
rm -rf "$BDIR" && mkdir -p "$BDIR" && tar -xf "$ROOT/root/bundle.tar" -C "$BDIR"
check "manifest: target, kernel, package keys, every file hashed, the closure inside" "$E2E_PYTHON" -c '
import json, sys, hashlib, os
d = json.load(open(sys.argv[1] + "/manifest.json"))
assert d["target"] == {"os": "rhel-9", "arch": "x86_64"}, d["target"]  # rocky-9 is rhel-9
assert d["kernels"] == [sys.argv[2]], d["kernels"]
assert d["package_keys"]["cuda"] == "keys/cuda.gpg", d.get("package_keys")
names = [f["path"] for f in d["files"]]
for f in d["files"]:
    data = open(os.path.join(sys.argv[1], f["path"]), "rb").read()
    assert hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["size"], f["path"]
kdev = "kernel-devel-" + sys.argv[2] + ".rpm"
for want in ("repos/cuda/nvidia-open-" + sys.argv[3], "repos/cuda/" + kdev, "repos/cuda/dkms-",
             "repos/cuda/repodata/repomd.xml.asc", "repos/container-toolkit/nvidia-container-toolkit-1.17.3",
             "provenance/cuda/repomd.xml.asc", "provenance/distribution/baseos/repomd.xml"):
    assert any(n.startswith(want) for n in names), (want, names)
assert any("modules" in n for n in names if n.startswith("repos/cuda/repodata/")), names
' "$BDIR" "$KA" "$EL_DRIVER_VERSION"
check "the bundle repository's repomd.xml verifies with the bundle key alone" \
    gpgv --keyring "$BDIR/bundle-key.gpg" "$BDIR/repos/cuda/repodata/repomd.xml.asc" "$BDIR/repos/cuda/repodata/repomd.xml"

# The same bundle signed by another key (its key file and manifest signature replaced).
OTHERHOME=$(mktemp -d) && chmod 0700 "$OTHERHOME"
gpg --homedir "$OTHERHOME" --batch --passphrase '' --quick-gen-key 'other <other@e2e.invalid>' rsa2048 sign never 2>/dev/null
OTHER=$(gpg --homedir "$OTHERHOME" --with-colons --list-secret-keys | awk -F: '$1 == "fpr" {print $10; exit}')
OBUN=$OUT/other && rm -rf "$OBUN" && cp -a "$BDIR" "$OBUN"
gpg --homedir "$OTHERHOME" --export "$OTHER" >"$OBUN/bundle-key.gpg"
gpg --homedir "$OTHERHOME" --batch --yes --local-user "$OTHER" --clearsign -o "$OBUN/manifest.json.asc" "$OBUN/manifest.json"
tar -C "$OBUN" -cf "$OUT/bundle-other.tar" .
gpgconf --homedir "$OTHERHOME" --kill gpg-agent 2>/dev/null || true
rm -rf "$OTHERHOME"
# One .rpm altered after signing.
ALT=$OUT/altered && rm -rf "$ALT" && cp -a "$BDIR" "$ALT"
rpmf=$(find "$ALT/repos/cuda" -name "nvidia-open-$EL_DRIVER_VERSION-*.rpm" | head -n 1)
printf 'x' >>"$rpmf"
tar -C "$ALT" -cf "$OUT/bundle-altered.tar" .

# The air-gapped host: a fresh Rocky 9 root whose profile and distribution repositories all point
# at a dead port.
BUILDER=$ROOT
EL_ROOT_NAME=$SCENARIO-offline el_scenario_begin clean
sed -i "s/127\.0\.0\.1:$MIRROR_PORT/127.0.0.1:9/g" "$ROOT$PROFILE_IN_ROOT" "$ROOT"/etc/yum.repos.d/*.repo
cp "$BUILDER/root/bundle.tar" "$OUT/bundle-other.tar" "$OUT/bundle-altered.tar" "$ROOT/root/"
rootfs_remove "$BUILDER"
host_state() {
    rpmdb_digest
    (cd "$ROOT" && find etc/yum.repos.d etc/pki/rpm-gpg etc/dnf -printf '%p %s %m %T@\n' | LC_ALL=C sort)
}
bundle_refusals "repos/cuda/nvidia-open-" "kernel-devel-$KB" "rpmdb, /etc/yum.repos.d, keys, dnf"
assert_no_rpm nvidia-open

gp --timeout 400 apply "$PROFILE_IN_ROOT" --yes --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "apply --from-bundle, offline" 0
assert_el_converged
assert_grep "cuda .repo: the bundle, repo_gpgcheck against the bundle key" '^repo_gpgcheck=1$' "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_grep "cuda .repo: baseurl in the bundle" '^baseurl=file:///var/cache/gpuprov/repos/bundles/' "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_grep "cuda .repo: package signatures against the profile's key too" \
    '^gpgkey=file:///etc/pki/rpm-gpg/gpuprov-cuda.asc file:///etc/pki/rpm-gpg/gpuprov-cuda-packages.asc$' "$ROOT/etc/yum.repos.d/gpuprov-cuda.repo"
assert_eq "the package key is the profile's pin" "$(mirror_fingerprint)" \
    "$(keyring_fprs /etc/pki/rpm-gpg/gpuprov-cuda-packages.asc | paste -sd,)"
check "no --nogpgcheck anywhere in gpuprov's log" bash -c "! grep -q -- '--nogpgcheck' '$ROOT/var/log/gpuprov.log'"
gp verify "$PROFILE_IN_ROOT" --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "verify --from-bundle" 0
db_before=$(rpmdb_digest)
gp apply "$PROFILE_IN_ROOT" --yes --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "second apply --from-bundle" 0
assert_eq "the second apply changed no package" "$db_before" "$(rpmdb_digest)"
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode --from-bundle /root/bundle.tar --bundle-key "$FPR"
expect_rc "plan --detailed-exitcode after apply" 0
assert_no_http_requests
scenario_end
