# shellcheck shell=bash
# Docker's own repository as stand-ins (container.engine docker-ce, e2e 26): a dists repository
# laid out like https://download.docker.com/linux/debian (dists/bookworm/InRelease listing
# stable/binary-amd64/Packages, the .debs under pool/stable/amd64/), signed by the mirror's
# throwaway key, with docker-ce, docker-ce-cli and containerd.io at Docker's names, epoch-5
# versions and relationships (Docker's bookworm Packages: docker-ce Depends containerd.io
# (>= 1.6.24), docker-ce-cli; both Conflict with docker.io; containerd.io Provides, Conflicts and
# Replaces containerd and runc). Left out: docker-ce's Depends on iptables (the offline root has
# no Debian archive to bring it) and every Recommends. docker-ce's /usr/bin/dockerd and
# docker-ce-cli's /usr/bin/docker are lib/docker-standin answering with Docker CE's version.
# Sourced by mirror/build.sh: docker_debs once mkdeb and put exist, docker_repo once $FPR does.
DOCKER_VER=5:27.3.1-1~debian.12~bookworm
CONTAINERD_VER=1.7.22-1

docker_debs() {
    local standin="$HERE/../lib/docker-standin" ver=${DOCKER_VER#*:}
    # shellcheck disable=SC2034 # mkdeb reads it (dynamic scope), for these packages only
    local MAINT='Docker <support@docker.com>'
    sed 's/^VERSION=.*/VERSION="27.3.1, build 41ca978" # Docker CE 27.3.1 (dockerd)/' "$standin" |
        put docker-ce "$DOCKER_VER" /usr/bin/dockerd 0755
    sed 's/^VERSION=.*/VERSION="27.3.1, build ce12230" # Docker CE 27.3.1 (cli)/' "$standin" |
        put docker-ce-cli "$DOCKER_VER" /usr/bin/docker 0755
    printf '#!/bin/sh\necho "containerd containerd.io %s"\n' "${CONTAINERD_VER%-*}" |
        put containerd.io "$CONTAINERD_VER" /usr/bin/containerd 0755
    EXTRA_FIELDS=$'Provides: containerd, runc\nConflicts: containerd, runc\nReplaces: containerd, runc' \
        mkdeb containerd.io "$CONTAINERD_VER" "libc6 (>= 2.34), libseccomp2 (>= 2.5.0)" \
        "An open and reliable container runtime" devel
    EXTRA_FIELDS=$'Conflicts: docker (<< 1.5~), docker-engine, docker.io\nReplaces: docker-ce (<< 5:0), docker-engine, docker.io\nBreaks: docker-ce (<< 5:0)' \
        mkdeb docker-ce-cli "$DOCKER_VER" "libc6 (>= 2.34)" \
        "Docker CLI: the open-source application container engine" admin
    EXTRA_FIELDS=$'Conflicts: docker (<< 1.5~), docker-engine, docker.io\nReplaces: docker-engine' \
        mkdeb docker-ce "$DOCKER_VER" \
        "containerd.io (>= 1.6.24), docker-ce-cli, libseccomp2 (>= 2.3.0), libc6 (>= 2.34), libsystemd0" \
        "Docker: the open-source application container engine" admin
    # Docker's pool names carry no epoch (docker-ce_27.3.1-1~debian.12~bookworm_amd64.deb).
    local p
    for p in docker-ce docker-ce-cli; do
        mv "$OUT/pool/${p}_${DOCKER_VER}_amd64.deb" "$OUT/pool/${p}_${ver}_amd64.deb"
    done
}

docker_repo() { # the dists repository at www/docker/linux/debian, and its key as .../gpg
    local top="$OUT/www/docker/linux/debian"
    mkdir -p "$top/pool/stable/amd64" "$top/dists/bookworm/stable/binary-amd64"
    ln "$OUT"/pool/docker-ce_*.deb "$OUT"/pool/docker-ce-cli_*.deb "$OUT"/pool/containerd.io_*.deb \
        "$top/pool/stable/amd64/"
    (
        cd "$top" || exit 1
        apt-ftparchive packages pool/stable >dists/bookworm/stable/binary-amd64/Packages 2>/dev/null
        gzip -9nc dists/bookworm/stable/binary-amd64/Packages >dists/bookworm/stable/binary-amd64/Packages.gz
        cd dists/bookworm || exit 1
        apt-ftparchive -o APT::FTPArchive::Release::Origin=Docker -o APT::FTPArchive::Release::Label=Docker \
            -o APT::FTPArchive::Release::Suite=bookworm -o APT::FTPArchive::Release::Codename=bookworm \
            -o APT::FTPArchive::Release::Components=stable -o APT::FTPArchive::Release::Architectures=amd64 \
            release . >../Release.tmp
        mv ../Release.tmp Release
        gpg_q --yes --local-user "$FPR" --clearsign -o InRelease Release
    )
    gpg_q --armor --export "$FPR" >"$top/gpg"
}
