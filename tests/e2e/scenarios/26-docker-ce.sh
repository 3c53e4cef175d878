#!/usr/bin/env bash
# (s) container.engine docker-ce: on a Debian 12 host without Docker, apply adds Docker's
# repository from the mirror's Docker-shaped dists repository (mirror/docker.sh) as apt wants a
# dists source (Suites: bookworm, Components: stable, Signed-By its own keyring holding exactly
# the pinned key), installs docker-ce, docker-ce-cli and containerd.io at the mirror's versions
# through real apt (docker-ce's Depends and Conflicts as Docker's), and verify runs dockerd from
# docker-ce. A second apply changes nothing.
set -euo pipefail
export PROFILE_TEMPLATE=e2e-docker-ce.yaml.in
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean

rootfs_remove_docker "$ROOT"
SRC=$ROOT/etc/apt/sources.list.d/gpuprov-docker.sources
KEYRING=/usr/share/keyrings/gpuprov-docker.gpg

gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply with engine docker-ce" 0
check "the source is Docker's dists repository with its own keyring" grep -qzF \
    "$(printf 'URIs: https://127.0.0.1:%s/docker/linux/debian/\nSuites: bookworm\nComponents: stable\nSigned-By: %s\n' "$MIRROR_PORT" "$KEYRING")" "$SRC"
assert_eq "Docker's keyring holds exactly the pinned key" "$(mirror_fingerprint)" "$(keyring_fprs "$KEYRING" | paste -sd,)"
check "apt's lists hold the dists index under apt's names" test -s \
    "$ROOT/var/lib/apt/lists/127.0.0.1:${MIRROR_PORT}_docker_linux_debian_dists_bookworm_stable_binary-amd64_Packages"
assert_pkg docker-ce 5:27.3.1-1~debian.12~bookworm
assert_pkg docker-ce-cli 5:27.3.1-1~debian.12~bookworm
assert_pkg containerd.io 1.7.22-1
assert_no_pkg docker.io
check "dockerd is docker-ce's" grep -q 'Docker version 27.3.1, build 41ca978' <(in_root "$ROOT" 30 /usr/bin/dockerd --version)

gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify with docker-ce" 0
check "container.engine found docker-ce's dockerd" "$E2E_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = {c["id"]: c for c in d["checks"]}["container.engine"]
sys.exit(0 if c["passed"] and c["found"] == "Docker version 27.3.1, build 41ca978" else repr(c))' "$GP_STDOUT"

status_before=$(sha256sum <"$ROOT/var/lib/dpkg/status")
src_before=$(sha256sum <"$SRC")
gp plan "$PROFILE_IN_ROOT" --detailed-exitcode
expect_rc "plan after apply: nothing to do" 0
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "second apply" 0
assert_eq "second apply: dpkg status byte-identical" "$status_before" "$(sha256sum <"$ROOT/var/lib/dpkg/status")"
assert_eq "second apply: the source unchanged" "$src_before" "$(sha256sum <"$SRC")"
scenario_end
