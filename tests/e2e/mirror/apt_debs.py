#!/usr/bin/env python3
"""The e2e mirror's NVIDIA driver .debs, built from the recorded fixtures (tests/fixtures/nvidia-repos,
read by apt_fixtures.py): each .deb carries exactly its stanza's control fields (our X- fields
stripped; Maintainer and Installed-Size added) and the stand-in files its X-Payload names.

  apt_debs.py build FIXTURES-DIR POOL-DIR KERNEL-REGEX
      writes POOL-DIR/<key>/<name>_<version>_<arch>.deb (the version without its epoch, as dpkg-deb
      and NVIDIA name files), one per distinct stanza, and prints "REPO <slug> <key>/<file>" for
      every .deb of a slug's driver graph (<slug>/Packages) and "REPO <slug>-dcgm <key>/<file>" for
      its DCGM 4 (<slug>/Packages.dcgm). <key> is the stanza's content hash: one name and version
      recorded differently in two slugs (NVIDIA's Ubuntu and Debian repositories are separate)
      are two .debs.

One python process packs them all (ar + tar, the .deb format dpkg-deb writes), because forking
dpkg-deb, cat and chmod per package made the mirror build several times slower on a loaded CI
host. The payloads are mirror/build.sh's: payload.sh's and dcgm.sh's functions and mkso (called once
each through bash), stubs/nvidia-smi, and the DKMS flow the driver packages always had (dh_dkms' postinst runs
`dkms add` + `dkms install` for the running kernel; lib/dkms-standin builds, lib/modprobe-standin
loads). MIRROR_SCALE=K (bench only) adds K-1 filler dependencies per package, as build.sh's mkdeb.
Stdlib only: it runs on the e2e host's system python.
"""
import gzip
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import apt_fixtures  # noqa: E402  (the reader, next to this file)

MAINTAINER = "cudatools <cudatools@nvidia.com>"
MTIME = 1764547200  # fixed (2025-12-01): the same fixtures give byte-identical .debs
LIBDIR = "/usr/lib/x86_64-linux-gnu"


def payload_sh(function, *args):
    """The output of one mirror/payload.sh function (the payload both mirror halves share)."""
    return subprocess.run(["bash", "-c", 'source "$1"; shift; "$@"', "_", os.path.join(HERE, "payload.sh"),
                           function] + list(args), check=True, stdout=subprocess.PIPE).stdout


def dcgm_sh(function, *args):
    """The output of one mirror/dcgm.sh function (DCGM's payloads, shared with build-rpm.sh)."""
    return subprocess.run(["bash", "-c", 'source "$1"; shift; "$@"', "_", os.path.join(HERE, "dcgm.sh"),
                           function] + list(args), check=True, stdout=subprocess.PIPE).stdout


def dcgm_libexec():
    """dcgm.sh's DCGM_LIBEXEC (where NVIDIA's packages put the plugins)."""
    return subprocess.run(["bash", "-c", 'source "$1"; printf %s "$DCGM_LIBEXEC"', "_", os.path.join(HERE, "dcgm.sh")],
                          check=True, stdout=subprocess.PIPE).stdout.decode()


class Payloads:
    """The stand-in files, each made once and reused by every .deb that carries it."""

    def __init__(self, kernels, tmp):
        self.kernels, self.tmp, self.cache = kernels, tmp, {}
        with open(os.path.join(HERE, "stubs", "nvidia-smi")) as f:
            self.smi = f.read()

    def once(self, key, make):
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def shared_object(self, soname):
        """A tiny real ELF shared object (payload.sh's mkso), so ldconfig caches it."""
        def make():
            out = os.path.join(self.tmp, soname)
            subprocess.run(["bash", "-c", 'source "$1"; mkso "$2" "$3"', "_", os.path.join(HERE, "payload.sh"),
                            soname, out], check=True)
            with open(out, "rb") as f:
                return f.read()
        return self.once(("so", soname), make)

    def files(self, name, version, words):
        """(files, scripts): files maps path -> (mode, bytes) or ("link", target); scripts maps
        control-archive member (postinst, prerm, conffiles, triggers) -> text. version is the
        stanza's (epoch and revision included)."""
        files, scripts = {}, {}
        upstream = apt_fixtures.upstream(version)
        cuda = next((w[5:] for w in words if w.startswith("cuda=")), None)
        for w in words:
            if w in ("none", "pin-file") or w.startswith("cuda="):
                continue
            if w.startswith("/"):
                # The pin file: a conffile, as debhelper makes every file under /etc, so a removed
                # (not purged) pinning package leaves its pin in force and the next pinning package
                # takes the file over.
                with open(w, "rb") as f:
                    files["/etc/apt/preferences.d/nvidia-driver-pin"] = (0o644, f.read())
                scripts["conffiles"] = "/etc/apt/preferences.d/nvidia-driver-pin\n"
            elif w in ("dkms-proprietary", "dkms-open"):
                files["/usr/src/nvidia-%s/dkms.conf" % upstream] = (0o644, self.dkms_conf(upstream, w == "dkms-open"))
                scripts["postinst"], scripts["prerm"] = self.dkms_scripts(name, upstream)
            elif w == "compute-libs":
                for soname, stem in (("libnvidia-ml.so.1", "libnvidia-ml.so"), ("libcuda.so.1", "libcuda.so")):
                    real = "%s.%s" % (stem, upstream)
                    files["%s/%s" % (LIBDIR, real)] = (0o644, self.shared_object(soname))
                    files["%s/%s" % (LIBDIR, soname)] = ("link", real)
                scripts["triggers"] = "activate-noawait ldconfig\n"
            elif w == "nvidia-smi":
                text = re.sub(r"^CUDA_VERSION=.*$", "CUDA_VERSION=" + cuda, self.smi, count=1, flags=re.M)
                files["/usr/bin/nvidia-smi"] = (0o755, text.encode())
            elif w == "persistenced":
                # NVIDIA's unit starts it with --no-persistence-mode (hence the override NVIDIA's
                # ansible role, and gpuprov, install); the daemon needs the loaded module.
                files["/usr/bin/nvidia-persistenced"] = (0o755, self.once("pd", lambda: payload_sh("payload_persistenced")))
                files["/lib/systemd/system/nvidia-persistenced.service"] = (
                    0o644, self.once("pdu", lambda: payload_sh("payload_persistenced_unit")))
            elif w == "fabricmanager":
                files["/usr/bin/nv-fabricmanager"] = (0o755, payload_sh("payload_fabricmanager", upstream))
                files["/lib/systemd/system/nvidia-fabricmanager.service"] = (
                    0o644, self.once("fmu", lambda: payload_sh("payload_fabricmanager_unit")))
            elif w == "nscq":
                files["%s/libnvidia-nscq.so.%s" % (LIBDIR, upstream)] = (
                    0o644, ("gpuprov e2e stand-in for libnvidia-nscq %s\n" % upstream).encode())
            elif w == "nvlsm":
                files["/opt/nvidia/nvlsm/sbin/nvlsm"] = (0o755, payload_sh("payload_nvlsm", upstream))
                files["/usr/share/nvidia/nvlsm/nvlsm.conf"] = (
                    0o644, b"# gpuprov e2e stand-in for NVLSM's configuration\nlog_file /var/log/nvlsm.log\n")
            elif w == "imex":
                files["/usr/bin/nvidia-imex"] = (0o755, payload_sh("payload_imex", upstream))
                files["/usr/bin/nvidia-imex-ctl"] = (0o755, self.once("imexctl", lambda: payload_sh("payload_imex_ctl")))
                files["/lib/systemd/system/nvidia-imex.service"] = (
                    0o644, self.once("imexu", lambda: payload_sh("payload_imex_unit")))
                # The package's conffile (canonical/apt-packaging-imex debian/conffiles); no
                # nodes_config.cfg ships.
                files["/etc/nvidia-imex/config.cfg"] = (0o644, self.once("imexcfg", lambda: payload_sh("payload_imex_config")))
                scripts["conffiles"] = "/etc/nvidia-imex/config.cfg\n"
            elif w == "dcgm-hostengine":
                # As the hand-written stand-ins had it: the version without its epoch.
                files["/usr/bin/nv-hostengine"] = (0o755, dcgm_sh("payload_dcgm_hostengine", version.split(":", 1)[-1]))
            elif w == "dcgmi":
                files["/usr/bin/dcgmi"] = (0o755, dcgm_sh("payload_dcgmi", version))
            elif w == "dcgm-unit":
                files["/lib/systemd/system/nvidia-dcgm.service"] = (
                    0o644, self.once("dcgmu", lambda: dcgm_sh("payload_dcgm_unit")))
            elif w == "dcgm-plugins":
                libexec = self.once("dcgmlibexec", dcgm_libexec)
                files["%s/plugins/cuda%s/README" % (libexec, cuda)] = (0o644, dcgm_sh("payload_dcgm_plugins", upstream, cuda))
            else:
                raise SystemExit("apt_debs.py: %s: unknown X-Payload role %s" % (name, w))
        return files, scripts

    def dkms_conf(self, upstream, is_open):
        # The modules (nvidia, and nvidia-peermem, which ships with the driver since R470).
        # BUILD_EXCLUSIVE_KERNEL: on a kernel the regex misses, DKMS skips the build, the install
        # succeeds and the module never loads (e2e 15). The open flavour's marker makes
        # lib/dkms-standin build an open module ("Open Kernel Module" once loaded).
        text = ('PACKAGE_NAME="nvidia"\nPACKAGE_VERSION="%s"\nAUTOINSTALL="yes"\n'
                'BUILT_MODULE_NAME[0]="nvidia"\nDEST_MODULE_LOCATION[0]="/updates/dkms"\n'
                'BUILT_MODULE_NAME[1]="nvidia-peermem"\nDEST_MODULE_LOCATION[1]="/updates/dkms"\n'
                'BUILD_EXCLUSIVE_KERNEL="%s"\n' % (upstream, self.kernels))
        if is_open:
            text += "# gpuprov-e2e-flavour: open\n"
        return text.encode()

    @staticmethod
    def dkms_scripts(name, upstream):
        # dh_dkms' postinst: add, then build+install for the running kernel, never load (the
        # driver step's `modprobe nvidia` does, or a reboot). A build DKMS skips (BUILD_EXCLUSIVE,
        # exit 77) is not an error; a failed build fails the package.
        postinst = """#!/bin/sh
set -e
if [ "$1" = configure ] && command -v dkms >/dev/null 2>&1; then
    dkms add -m nvidia -v %(v)s >/dev/null 2>&1 || true
    kernel=$(cat /proc/sys/kernel/osrelease)
    rc=0
    dkms install -m nvidia -v %(v)s -k "$kernel" || rc=$?
    if [ "$rc" -eq 77 ]; then
        echo "%(n)s: DKMS skipped the build for kernel $kernel" >&2
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
fi
exit 0
""" % {"v": upstream, "n": name}
        prerm = """#!/bin/sh
set -e
if command -v dkms >/dev/null 2>&1; then dkms remove -m nvidia -v %s --all >/dev/null 2>&1 || true; fi
exit 0
""" % upstream
        return postinst, prerm


# --- the .deb format: an ar archive of debian-binary, control.tar.gz and data.tar.gz -----------
def _tar_gz(entries):
    """entries: list of (path, mode, bytes | ("link", target) | None for a directory)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for path, mode, data in entries:
            ti = tarfile.TarInfo(path)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            ti.mtime = MTIME
            if data is None:
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(ti)
            elif isinstance(data, tuple):
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, data[1], 0o777
                tar.addfile(ti)
            else:
                ti.size, ti.mode = len(data), mode
                tar.addfile(ti, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=MTIME, compresslevel=6) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def _ar(members):
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        out += ("%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, MTIME, 0, 0, "100644", len(data))).encode()
        out += data
        if len(data) % 2:
            out += b"\n"
    return bytes(out)


def build_deb(path, control, files, scripts):
    dirs = set()
    for p in files:
        parts = p.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    data = [("./", 0o755, None)] + [("./%s/" % d, 0o755, None) for d in sorted(dirs)]
    for p in sorted(files):
        mode, content = files[p]
        data.append(("." + p, mode if mode != "link" else 0o777, content if mode != "link" else ("link", content)))
    ctl = [("./", 0o755, None), ("./control", 0o644, control.encode())]
    for member in sorted(scripts):
        mode = 0o755 if member in ("postinst", "prerm", "postrm", "preinst") else 0o644
        ctl.append(("./" + member, mode, scripts[member].encode()))
    with open(path, "wb") as f:
        f.write(_ar([("debian-binary", b"2.0\n"), ("control.tar.gz", _tar_gz(ctl)), ("data.tar.gz", _tar_gz(data))]))


def control_file(stanza, files, extra_depends):
    """The recorded control fields (X- stripped), Depends + bench fillers, then Maintainer,
    Installed-Size (KiB, as dpkg-gencontrol counts: each file rounded up) and Description."""
    size = sum((len(c) + 1023) // 1024 for m, c in files.values() if m != "link") + 1
    lines = []
    for f in apt_fixtures.CONTROL_FIELDS:
        if f == "Description":
            continue
        value = stanza.get(f)
        if f == "Depends" and extra_depends:
            value = ", ".join(([value] if value else []) + extra_depends)
        if value:
            lines.append("%s: %s" % (f, value))
    lines += ["Maintainer: " + MAINTAINER, "Installed-Size: %d" % size, "Priority: optional",
              "Description: " + stanza.get("Description", stanza["Package"]),
              " gpuprov e2e stand-in package (not NVIDIA software)."]
    return "\n".join(lines) + "\n"


def all_stanzas(fixtures_dir):
    """(slug, slug_dir, part, stanza) for every stanza of every slug's files (apt_fixtures.PARTS)."""
    for slug in apt_fixtures.SLUGS:
        slug_dir = os.path.join(fixtures_dir, slug)
        for part, _, stanzas in apt_fixtures.load_parts(slug_dir):
            for _, st in stanzas:
                yield slug, slug_dir, part, st


def build(fixtures_dir, pool, kernels):
    errs = apt_fixtures.check(fixtures_dir)
    if errs:
        raise SystemExit("\n".join(errs))
    scale = int(os.environ.get("MIRROR_SCALE", "1") or 1)
    lines, built = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        payloads = Payloads(kernels, tmp)
        for slug, slug_dir, part, st in all_stanzas(fixtures_dir):
            repo = slug + ("-" + part if part else "")
            words = [os.path.abspath(os.path.join(slug_dir, w)) if w.startswith("pin/") else w
                     for w in st["X-Payload"].split()]
            fn = "%s_%s_%s.deb" % (st["Package"], st["Version"].split(":", 1)[-1], st["Architecture"])
            content = apt_fixtures.control_text(st) + "\0" + "\0".join(
                open(w).read() if w.startswith("/") else w for w in words)
            key = hashlib.sha256(content.encode()).hexdigest()[:12]
            fillers = ["%s-benchfill-%d" % (st["Package"], i) for i in range(1, scale)]
            if key not in built:
                built.add(key)
                files, scripts = payloads.files(st["Package"], st["Version"], words)
                os.makedirs(os.path.join(pool, key), exist_ok=True)
                build_deb(os.path.join(pool, key, fn), control_file(st, files, fillers), files, scripts)
            lines.append("REPO %s %s/%s" % (repo, key, fn))
            for f in fillers:  # bench only: one small file each, as build.sh's fillers
                rel = "bench/%s_1.0_amd64.deb" % f
                if rel not in built:
                    built.add(rel)
                    body = ("bench filler %s of %s\n" % (f.rsplit("-", 1)[1], st["Package"])).encode()
                    ffiles = {"/usr/share/gpuprov-bench/" + f: (0o644, body)}
                    fst = {"Package": f, "Version": "1.0", "Architecture": "amd64",
                           "Section": "multiverse/libs", "Description": "gpuprov bench filler"}
                    os.makedirs(os.path.join(pool, "bench"), exist_ok=True)
                    build_deb(os.path.join(pool, rel), control_file(fst, ffiles, []), ffiles, {})
                line = "REPO %s %s" % (repo, rel)
                if line not in lines:
                    lines.append(line)
    return lines


def main(argv):
    if len(argv) == 5 and argv[1] == "build":
        print("\n".join(build(argv[2], argv[3], argv[4])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
