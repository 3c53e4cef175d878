# shellcheck shell=bash
# EL-shaped root filesystems for the e2e suite: the cached Debian 12 minbase root (lib/rootfs.sh)
# plus Debian's own dnf 4, rpm 4.18 and dnf-plugins-core, with an rpm database of its own at EL's
# path and dnf configured as Rocky/RHEL ship it. Debian's dnf-plugins-core bundles the versionlock
# plugin, which a stock RHEL/Rocky image lacks (it is python3-dnf-plugin-versionlock, a BaseOS
# package): the root has it removed, and the mirror's BaseOS serves it as an rpm, so `dnf
# versionlock` fails with "No such command" until that rpm is installed, as on EL. Per scenario it
# becomes a Rocky 10, Rocky 9 or RHEL 8 host: verbatim os-release, the release package, kernel-core
# and a base-system stand-in in the rpm database, BaseOS, AppStream and EPEL repositories signed
# with a "distro" key that is already imported, and the EL kernel simulated. Cached like the Debian
# root, keyed by its inputs. Needs lib/rootfs.sh sourced first.

ROOTFS_EL_PACKAGES=dnf,rpm,dnf-plugins-core,gpg
ROOTFS_EL_RECIPE=2 # bump when rootfs_el_finish changes

rootfs_el_key() {
    printf '%s|%s|%s\n' "$(rootfs_key "$ROOTFS_SUITE" "$ROOTFS_INCLUDE")" "$ROOTFS_EL_PACKAGES" "$ROOTFS_EL_RECIPE" | sha256sum | cut -c1-16
}

# Prints the path of the cached EL root, building it (from the Debian one) when absent.
rootfs_el_base() {
    local base key dir
    base=$(rootfs_base) || return 1
    key=$(rootfs_el_key)
    dir="$E2E_CACHE/el-root-$key"
    (
        flock -w 900 9 || die "could not lock $E2E_CACHE/.lock within 900 s"
        if [[ -f "$dir/.e2e-complete" ]]; then exit 0; fi
        find "$E2E_CACHE" -mindepth 1 -maxdepth 1 -type d -name 'el-root-*' ! -name "el-root-$key" -exec rm -rf {} +
        local tmp="$dir.tmp.$$" t0=$SECONDS
        rm -rf "$tmp"
        cp -a --reflink=auto "$base" "$tmp"
        rm -f "$tmp/.e2e-complete"
        log "EL root: apt-get install ${ROOTFS_EL_PACKAGES//,/ } from $DEBIAN_MIRROR -> $dir"
        printf 'deb %s %s main\n' "$DEBIAN_MIRROR" "$ROOTFS_SUITE" >"$tmp/etc/apt/sources.list"
        cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
        if ! { in_root "$tmp" 600 apt-get -q update &&
            in_root "$tmp" 900 apt-get -q -y --no-install-recommends install ${ROOTFS_EL_PACKAGES//,/ }; } \
            >"$E2E_CACHE/el-root.log" 2>&1; then
            tail -n 30 "$E2E_CACHE/el-root.log" >&2
            rm -rf "$tmp"
            die "EL root: apt-get install failed (log: $E2E_CACHE/el-root.log)"
        fi
        rootfs_el_finish "$tmp"
        touch "$tmp/.e2e-complete"
        mv "$tmp" "$dir"
        log "EL root built in $((SECONDS - t0)) s"
    ) 9>"$E2E_CACHE/.lock" || return 1
    printf '%s\n' "$dir"
}

rootfs_el_finish() {
    local r=$1
    printf '# gpuprov e2e: Debian archive removed on purpose (offline test host)\n' >"$r/etc/apt/sources.list"
    rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin
    mkdir -p "$r/var/lib/apt/lists/partial"
    rootfs_slim "$r"
    # EL keeps the rpm database in /var/lib/rpm (rpmdb.sqlite on EL9); Debian's rpm uses ~/.rpmdb.
    mkdir -p "$r/etc/rpm" "$r/var/lib/rpm"
    printf '%%_dbpath /var/lib/rpm\n' >"$r/etc/rpm/macros.dbpath"
    in_root "$r" 60 rpm --initdb
    # Rocky/RHEL 9's /etc/dnf/dnf.conf, verbatim; EL 8's and EL 10's are taken to be the same
    # (INFERRED: not looked up).
    mkdir -p "$r/etc/dnf/plugins" "$r/etc/dnf/modules.d" "$r/etc/yum.repos.d" "$r/etc/pki/rpm-gpg"
    printf '[main]\ngpgcheck=1\ninstallonly_limit=3\nclean_requirements_on_remove=True\nbest=True\nskip_if_unavailable=False\n' \
        >"$r/etc/dnf/dnf.conf"
    # The versionlock plugin is not part of EL's dnf-plugins-core but its own package
    # (python3-dnf-plugin-versionlock, served by the mirror's BaseOS with these very files).
    rm -f "$r/usr/lib/python3/dist-packages/dnf-plugins/versionlock.py" \
        "$r"/usr/lib/python3/dist-packages/dnf-plugins/__pycache__/versionlock.* \
        "$r/etc/dnf/plugins/versionlock.conf" "$r/etc/dnf/plugins/versionlock.list"
    # dnf's `local` plugin (Debian enables it) copies every installed rpm into a local repo: not on EL.
    printf '[main]\nenabled = 0\n' >"$r/etc/dnf/plugins/local.conf"
    # chkconfig's `alternatives` (NVIDIA's rpm scriptlets call it): Debian's update-alternatives.
    ln -sfn /usr/bin/update-alternatives "$r/usr/sbin/alternatives"
    printf '%s\n' "$(date -u +%FT%TZ) built by tests/e2e/lib/rootfs_el.sh" >"$r/etc/gpuprov-e2e-el-root"
}

rootfs_el_new() { # NAME -> path of a fresh copy
    local base
    base=$(rootfs_el_base) || return 1
    rootfs_copy "$base" "$1"
}

# EL kernels the mirror's kernel-core/kernel-devel carry (mirror/build-rpm.sh).
el_kernel() { # 8|9|10
    case "$1" in
        8) echo 4.18.0-513.5.1.el8_9.x86_64 ;;
        9) echo 5.14.0-362.24.1.el9_3.x86_64 ;;
        10) echo 6.12.0-55.27.1.el10_0.x86_64 ;;
    esac
}

# rootfs_el_host ROOT OS(rocky-10|rocky-9|rhel-8): make the root that EL host (after rootfs_simulate_host).
rootfs_el_host() {
    local r=$1 os=$2 major dist
    major=${os##*-}
    dist=el$major
    local osr="$REPO_ROOT/tests/fixtures/os/$os/usr/lib/os-release"
    [[ -f "$osr" ]] || osr="$REPO_ROOT/tests/fixtures/os/$os/etc/os-release"
    rm -f "$r/etc/os-release" "$r/usr/lib/os-release" "$r/etc/debian_version"
    install -m 0644 "$osr" "$r/usr/lib/os-release"
    ln -s ../usr/lib/os-release "$r/etc/os-release"
    # kernel-core owns /lib/modules/<kver>/build (a link into kernel-devel's tree).
    rm -rf "$r/lib/modules/$SIM_KERNEL/build"
    cp "$MIRROR_DIR/el-host/$dist"/*.rpm "$r/tmp/"
    install -m 0644 "$MIRROR_DIR/distro-key.asc" "$r/etc/pki/rpm-gpg/RPM-GPG-KEY-e2e-$dist"
    in_root "$r" 60 rpm --import "/etc/pki/rpm-gpg/RPM-GPG-KEY-e2e-$dist" || return 1
    # shellcheck disable=SC2046
    in_root "$r" 120 rpm -i --force-debian $(cd "$r/tmp" && printf '/tmp/%s ' *.rpm) || return 1
    rm -f "$r"/tmp/*.rpm
    # The distro's repositories (BaseOS: kernel-devel/-headers, linux-firmware, the versionlock
    # plugin; AppStream: the libraries NVIDIA's rpms require; EPEL: dkms), key already imported.
    # As Rocky ships rocky.repo (baseos and appstream sections) and EPEL epel.repo: gpgcheck=1 on
    # the packages, repo_gpgcheck off.
    local name file
    local distro_repo=rocky
    [[ "$os" == rhel-* ]] && distro_repo=redhat
    rm -f "$r/etc/yum.repos.d/$distro_repo.repo" "$r/etc/yum.repos.d/epel.repo"
    for name in baseos appstream epel; do
        file=$distro_repo
        [[ $name == epel ]] && file=epel
        printf '[%s]\nname=e2e %s %s\nbaseurl=%s\nenabled=1\ngpgcheck=1\ngpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-e2e-%s\n\n' \
            "$name" "$dist" "$name" "$(mirror_url "$dist/$name/x86_64/")" "$dist" >>"$r/etc/yum.repos.d/$file.repo"
    done
}

# EL's initramfs tool and the rest of the EL kernel tooling the harness simulates.
rootfs_el_install_tools() {
    install -D -m 0755 "$E2E_DIR/lib/dracut-standin" "$1/usr/bin/dracut"
    rm -f "$1/usr/sbin/modprobe"
    install -D -m 0755 "$E2E_DIR/lib/modprobe-standin" "$1/usr/sbin/modprobe"
    install -D -m 0644 "$E2E_DIR/lib/efivars-standin.sh" "$1/usr/lib/gpuprov-e2e/efivars.sh"
}
