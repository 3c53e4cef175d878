#!/usr/bin/env bash
# e2e-timeout: 900
# (49) Debian 13 (a debootstrapped trixie root with its real apt 3 and sqv) and the key policy apt
# 3 enforces (issue 21, docs/security.md "Key policy"). The mirror offers a debian13 CUDA
# repository (the recorded 2026 debian12 index and packages under the debian13 slug) twice:
# signed by a throwaway key whose self-signature uses SHA-1, and by one bound with SHA-512.
#   SHA-1: `gpuprov plan` refuses before any change (dpkg status and every file under /etc
#   byte-identical), naming the key, the signature, SHA-1 and the 2026-02-01 cut-off; plain
#   `apt-get update` in the same root with that key refuses the repository too.
#   SHA-512: apt-get update accepts it, and gpuprov's plan passes the key check; then fresh
#   apply, verify and the no-op re-apply (lib/scenario.sh checks plan --detailed-exitcode).
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
begin_args clean
ROOT=$(rootfs_new "$SCENARIO" trixie)
rootfs_prepare_host "$ROOT" clean
rootfs_install_gpuprov "$ROOT" || scenario_end
# apt 3 fetches over OpenSSL, which finds CAs through /usr/lib/ssl (the `openssl` package on every
# real Debian 13 host with ca-certificates); debootstrap's minimal trixie lacks it, so the links
# that package ships point OpenSSL at the bundle rootfs_trust_ca extended with the mirror's CA.
mkdir -p "$ROOT/usr/lib/ssl"
ln -sfn /etc/ssl/certs "$ROOT/usr/lib/ssl/certs"
ln -sfn /etc/ssl/certs/ca-certificates.crt "$ROOT/usr/lib/ssl/cert.pem"
log "scenario $SCENARIO: root $ROOT"

check "the root is Debian 13" grep -q '^VERSION_ID="13"' "$ROOT/etc/os-release"
check "the root's apt is 3.x" bash -c "chroot '$ROOT' dpkg-query -W -f='\${Version}' apt | grep -q '^3\.'"
check "the root has sqv" test -x "$ROOT/usr/bin/sqv"

# The two debian13 repositories, built once per mirror (hard links to the debian12 2026 tree).
SRC_REPO=$MIRROR_DIR/www/nvidia-2026/compute/cuda/repos/debian12/x86_64
E49=$MIRROR_DIR/www/e2e49
GH=$(mktemp -d)
chmod 0700 "$GH"
gpg_q() { GNUPGHOME=$GH gpg --batch --quiet --no-tty --pinentry-mode loopback --passphrase '' "$@"; }
MIRROR_FPR=$(mirror_fingerprint)
fpr_of49() { GNUPGHOME=$GH gpg --with-colons --list-keys "$1" | awk -F: '/^fpr/ {print $10; exit}'; }
binding_digest() { GNUPGHOME=$GH gpg --export "$1" | gpg --list-packets 2>/dev/null | sed -n 's/.*digest algo \([0-9]*\),.*/\1/p' | head -1; }
# gpg 2.2 makes a SHA-1 self-signature when asked (--cert-digest-algo SHA1); only the binding is
# SHA-1, the InRelease itself is signed with SHA-256, so the key alone is what apt 3 refuses.
gpg_q --cert-digest-algo SHA1 --quick-gen-key 'gpuprov e2e sha1-bound <e2e-sha1@invalid>' rsa3072 sign never 2>/dev/null
SHA1_FPR=$(fpr_of49 e2e-sha1@invalid)
assert_eq "the SHA-1-bound key's self-signature uses SHA-1 (digest algo 2)" 2 "$(binding_digest "$SHA1_FPR")"
# The mirror's own key lost its secret half when the mirror was built: a second throwaway key,
# bound the way gpg 2.2 binds by default (SHA-512), signs the accepted repository.
gpg_q --quick-gen-key 'gpuprov e2e sha512-bound <e2e-sha512@invalid>' rsa3072 sign never 2>/dev/null
SHA512_FPR=$(fpr_of49 e2e-sha512@invalid)
assert_eq "the other key's self-signature uses SHA-512 (digest algo 10)" 10 "$(binding_digest "$SHA512_FPR")"
mkrepo49() { # NAME FPR
    local dir=$E49/$1/compute/cuda/repos/debian13/x86_64
    rm -rf "${E49:?}/$1"
    mkdir -p "$dir"
    cp -al "$SRC_REPO/." "$dir/"
    rm -f "$dir"/InRelease* "$dir"/Release* "$dir"/*.pub
    (cd "$dir" && apt-ftparchive -o APT::FTPArchive::Release::Origin="NVIDIA CUDA" \
        -o APT::FTPArchive::Release::Label="NVIDIA CUDA" release . >"$GH/Release.$1" &&
        mv "$GH/Release.$1" Release)
    gpg_q --yes --local-user "$2" --digest-algo SHA256 --clearsign -o "$dir/InRelease" "$dir/Release"
    gpg_q --armor --export "$2" >"$dir/key.pub"
}
mkrepo49 sha1 "$SHA1_FPR"
mkrepo49 sha512 "$SHA512_FPR"

profile49() { # NAME FPR -> /etc/gpuprov/e2e49-NAME.yaml
    cat >"$ROOT/etc/gpuprov/e2e49-$1.yaml" <<EOF
name: e2e49-$1
description: cv-train on Debian 13 against the e2e mirror's debian13 repository signed by the $1-bound key
extends: cv-train
host:
  os: [debian-13]
  disk: {free_gib: 1}
  disks: []
repositories:
  cuda:
    url: https://127.0.0.1:$MIRROR_PORT/e2e49/$1/compute/cuda/repos/{distro}/{arch}/
    key_url: https://127.0.0.1:$MIRROR_PORT/e2e49/$1/compute/cuda/repos/{distro}/{arch}/key.pub
    key_fingerprint: $2
  container-toolkit:
    url: https://127.0.0.1:$MIRROR_PORT/libnvidia-container/stable/deb/{pkgarch}/
    key_url: https://127.0.0.1:$MIRROR_PORT/libnvidia-container/gpgkey
    key_fingerprint: $MIRROR_FPR
EOF
    cp "$ROOT/etc/gpuprov/e2e49-$1.yaml" "$OUT/"
}
mkdir -p "$ROOT/etc/gpuprov"
profile49 sha1 "$SHA1_FPR"
profile49 sha512 "$SHA512_FPR"

# snapshot NAME: dpkg's database and every file and link under /etc, byte for byte.
# Links are listed with their targets (a dangling one must not end the scenario).
snapshot() {
    (cd "$ROOT" && find etc var/lib/dpkg -xdev -type f -print0 | sort -z | xargs -0 -r sha256sum &&
        find etc var/lib/dpkg -xdev -type l -printf '%p -> %l\n' | sort) >"$OUT/snap-$1"
}

# --- SHA-1-bound key: plan refuses before any change ---
snapshot before
gp plan /etc/gpuprov/e2e49-sha1.yaml
check "plan with the SHA-1-bound key fails (exit $GP_RC)" test "$GP_RC" -ne 0
gp_output >"$OUT/plan-sha1.txt"
check "the refusal says the host's apt (sqv) would refuse the key" grep -q "would be refused by this host's apt" "$OUT/plan-sha1.txt"
check "the refusal names the key's fingerprint" grep -q "$SHA1_FPR" "$OUT/plan-sha1.txt"
check "the refusal names the signature and its hash" grep -q 'self-signature on user ID "gpuprov e2e sha1-bound.*SHA-1' "$OUT/plan-sha1.txt"
check "the refusal names the cut-off date" grep -q '2026-02-01' "$OUT/plan-sha1.txt"
check "the refusal names the policy file apt 3 hands sqv" grep -q '/usr/share/apt/default-sequoia.config' "$OUT/plan-sha1.txt"
check "the refusal says the fix (repositories.cuda.key_url)" grep -q "repositories.cuda.key_url" "$OUT/plan-sha1.txt"
snapshot after
check "dpkg's database and /etc are byte-identical after the refused plan" cmp -s "$OUT/snap-before" "$OUT/snap-after"

# apt_update NAME KEYFILE: plain apt-get update in the root against only that repository, with its
# own lists directory, so the root's state is left alone. Sets APT_RC; output in $OUT/apt-NAME.txt.
apt_update() {
    local k=/tmp/e2e49-$1.asc
    cp "$E49/$1/compute/cuda/repos/debian13/x86_64/key.pub" "$ROOT$k"
    printf 'Types: deb\nURIs: https://127.0.0.1:%s/e2e49/%s/compute/cuda/repos/debian13/x86_64/\nSuites: /\nSigned-By: %s\n' \
        "$MIRROR_PORT" "$1" "$k" >"$ROOT/tmp/e2e49-$1.sources"
    mkdir -p "$ROOT/tmp/e2e49-lists-$1/partial"
    set +e
    in_root "$ROOT" 120 apt-get -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/nonexistent \
        -o Dir::Etc::sourcelist="/tmp/e2e49-$1.sources" -o Dir::State::Lists="/tmp/e2e49-lists-$1" \
        -o APT::Update::Error-Mode=any update >"$OUT/apt-$1.txt" 2>&1
    APT_RC=$?
    set -e
}
apt_update sha1
check "plain apt-get update refuses the SHA-1-bound key too (exit $APT_RC)" test "$APT_RC" -ne 0
# sqv 1.3's words on Debian 13: "Signing key on FPR is not bound: No binding signature at time
# ... because: Policy rejected non-revocation signature (PositiveCertification) requiring second
# pre-image resistance because: SHA1 is not considered secure since 2026-02-01T00:00:00Z".
check "sqv says why: the SHA-1 binding, past 2026-02-01" grep -q 'SHA1 is not considered secure since 2026-02-01' "$OUT/apt-sha1.txt"
check "apt calls the repository not signed" grep -q "The repository .* is not signed" "$OUT/apt-sha1.txt"
apt_update sha512
check "plain apt-get update accepts the SHA-512-bound key (exit $APT_RC)" test "$APT_RC" -eq 0

# --- SHA-512-bound key: fresh apply, verify, no-op re-apply ---
gp plan /etc/gpuprov/e2e49-sha512.yaml
gp_output >"$OUT/plan-sha512.txt"
check "plan with the SHA-512-bound key does not refuse the key" bash -c "! grep -q 'would be refused' '$OUT/plan-sha512.txt'"
expect_rc "plan on Debian 13 with the SHA-512-bound key" 0
gp apply /etc/gpuprov/e2e49-sha512.yaml --yes
expect_rc "fresh apply on Debian 13" 0
assert_eq "the cuda keyring holds exactly the SHA-512-bound key" "$SHA512_FPR" \
    "$(keyring_fprs /usr/share/keyrings/gpuprov-cuda.gpg | paste -sd,)"
assert_grep "the cuda source is the debian13 repository" \
    "^URIs: *https://127\.0\.0\.1:$MIRROR_PORT/e2e49/sha512/compute/cuda/repos/debian13/x86_64/?$" \
    "$ROOT/etc/apt/sources.list.d/gpuprov-cuda.sources"
check "cv-train's driver (nvidia-open, R580) is installed" bash -c "chroot '$ROOT' dpkg-query -W -f='\${Version}' nvidia-open | grep -q '^580\.'"
check "cv-train's CUDA 13.0 toolkit is installed" test -n "$(pkg_version cuda-toolkit-13-0)"
gp verify /etc/gpuprov/e2e49-sha512.yaml
expect_rc "verify after apply on Debian 13" 0
gp apply /etc/gpuprov/e2e49-sha512.yaml --yes
expect_rc "no-op re-apply on Debian 13" 0
rm -rf "$GH"
scenario_end
