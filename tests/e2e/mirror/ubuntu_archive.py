#!/usr/bin/env python3
"""The e2e mirror's Ubuntu-archive stand-in (scenario 54): Canonical's signed precompiled NVIDIA
modules and the kernel packages they follow, from tests/fixtures/ubuntu-archive/<suite>/Packages.

  ubuntu_archive.py build FIXTURE-PACKAGES POOL-DIR KEY-DIR
      writes POOL-DIR/<name>_<version>_amd64.deb, one per stanza, and prints "REPO <tree> <file>"
      for every .deb the tree lists (now: the archive as gpuprov finds it; next: after a kernel
      update is published). KEY-DIR gets the stand-in module signing key (cert.pem, key.pem,
      serial): a throwaway certificate whose subject is Canonical's module key's CN, and whose
      subject key identifier equals its serial, so the simulated kernel's /proc/keys line (what
      lib/rootfs.sh's rootfs_simulate_secure_boot writes) names the key modinfo's sig_key shows.

The module is a real ELF object with a .modinfo section (version, license, vermagic), signed the
way the kernel's sign-file signs (a detached PKCS#7 over the module, without attributes or
certificates, then struct module_signature and "~Module signature appended~\\n"), so the root's
own kmod modinfo reads its signer and sig_key. As in linux-restricted-modules, the objects and
the signatures come in their own packages and the per-ABI linux-modules-nvidia package joins them
into /lib/modules/<kernel>/kernel/nvidia-<b>srv/nvidia.ko at configure time and runs depmod.
Stdlib only, plus the host's cc and openssl.
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import apt_debs  # noqa: E402  (the .deb writer and the userspace payloads)

CN = "Canonical Ltd. Kernel Module Signing"
MAINTAINER = "Canonical Kernel Team <kernel-team@lists.ubuntu.com>"
LRM = "/usr/lib/linux-restricted-modules"  # INFERRED: where the objects and signatures sit
MAGIC = b"~Module signature appended~\n"


def stanzas(path):
    out, cur = [], {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    out.append(cur)
                cur = {}
                continue
            key, _, value = line.partition(":")
            cur[key] = value.strip()
    if cur:
        out.append(cur)
    return out


def signing_key(key_dir):
    os.makedirs(key_dir, exist_ok=True)
    serial = os.urandom(16).hex()
    serial = "4" + serial[1:]  # a positive, full-length serial (DER keeps no sign byte)
    subprocess.run(["openssl", "req", "-new", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256",
                    "-keyout", os.path.join(key_dir, "key.pem"), "-out", os.path.join(key_dir, "cert.pem"),
                    "-days", "3650", "-subj", "/O=Canonical Ltd./CN=" + CN, "-set_serial", "0x" + serial,
                    "-addext", "subjectKeyIdentifier=" + ":".join(serial[i:i + 2] for i in range(0, 32, 2)),
                    "-addext", "extendedKeyUsage=codeSigning"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(key_dir, "serial"), "w") as f:
        f.write(serial + "\n")
    return key_dir


def module_object(tmp, kernel, version, license_):
    """nvidia.ko: an ELF relocatable object whose .modinfo the real modinfo reads."""
    fields = ["version=" + version, "license=" + license_, "name=nvidia",
              "vermagic=%s SMP preempt mod_unload modversions " % kernel]
    body = "".join(f.replace("\\", "\\\\").replace('"', '\\"') + "\\0" for f in fields)
    src = os.path.join(tmp, "modinfo-%s.c" % kernel)
    obj = os.path.join(tmp, "nvidia-%s.ko" % kernel)
    with open(src, "w") as f:
        f.write('__attribute__((section(".modinfo"), used)) static const char m[] = "%s";\n' % body)
    subprocess.run(["cc", "-c", "-o", obj, src], check=True)
    with open(obj, "rb") as f:
        return f.read()


def signature(tmp, key_dir, module):
    """What sign-file appends: PKCS#7 (no attributes, no certificates), struct
    module_signature {algo, hash, id_type=PKEY_ID_PKCS7 (2), signer_len, key_id_len, pad[3],
    be32 sig_len}, the magic."""
    src = os.path.join(tmp, "module.bin")
    with open(src, "wb") as f:
        f.write(module)
    der = subprocess.run(["openssl", "cms", "-sign", "-in", src, "-signer", os.path.join(key_dir, "cert.pem"),
                          "-inkey", os.path.join(key_dir, "key.pem"), "-binary", "-outform", "DER", "-noattr",
                          "-nocerts", "-nosmimecap", "-md", "sha256"],
                         check=True, stdout=subprocess.PIPE).stdout
    return der + struct.pack(">BBBBB3xI", 0, 0, 2, 0, 0, len(der)) + MAGIC


def short_dir(series):
    """linux-restricted-modules' directory under kernel/: nvidia-580srv for 580-server."""
    return "nvidia-" + series.replace("-server", "srv")


def link_scripts(series, kernel):
    obj = "%s/%s/nvidia-%s/nvidia.ko" % (LRM, kernel, series)
    sig = "%s/%s/signatures/nvidia-%s/nvidia.ko.sig" % (LRM, kernel, series)
    dest = "/lib/modules/%s/kernel/%s/nvidia.ko" % (kernel, short_dir(series))
    postinst = """#!/bin/sh
set -e
if [ "$1" = configure ]; then
    mkdir -p "%(dir)s"
    cat "%(obj)s" "%(sig)s" >"%(dest)s.new"
    mv "%(dest)s.new" "%(dest)s"
    depmod -a %(kernel)s
fi
exit 0
""" % {"dir": os.path.dirname(dest), "obj": obj, "sig": sig, "dest": dest, "kernel": kernel}
    postrm = """#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
    rm -f "%(dest)s"
    rmdir "%(dir)s" 2>/dev/null || true
    if [ -f /lib/modules/%(kernel)s/modules.order ]; then depmod -a %(kernel)s; fi
fi
exit 0
""" % {"dir": os.path.dirname(dest), "dest": dest, "kernel": kernel}
    return {"postinst": postinst, "postrm": postrm}


def kernel_files(kernel):
    cfg = b"CONFIG_BLK_DEV_INITRD=y\nCONFIG_RD_GZIP=y\nCONFIG_RD_XZ=y\nCONFIG_RD_ZSTD=y\nCONFIG_MODULE_SIG=y\n"
    files = {"/boot/vmlinuz-" + kernel: (0o644, b"e2e placeholder kernel\n"),
             "/boot/config-" + kernel: (0o644, cfg)}
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        files["/lib/modules/%s/%s" % (kernel, f)] = (0o644, b"")
    # Ubuntu's linux-image postinst runs the kernel hooks with the version and the image.
    postinst = """#!/bin/sh
set -e
if [ "$1" = configure ] && [ -d /etc/kernel/postinst.d ]; then
    run-parts --report --exit-on-error --arg=%(k)s --arg=/boot/vmlinuz-%(k)s /etc/kernel/postinst.d
fi
exit 0
""" % {"k": kernel}
    return files, {"postinst": postinst}


def control(st, files):
    size = sum((len(c) + 1023) // 1024 for m, c in files.values() if m != "link") + 1
    lines = ["%s: %s" % (k, st[k]) for k in ("Package", "Version", "Architecture", "Source", "Depends",
                                              "Provides", "Conflicts", "Section") if st.get(k)]
    lines += ["Maintainer: " + MAINTAINER, "Installed-Size: %d" % size, "Priority: optional",
              "Description: " + st["Package"], " gpuprov e2e stand-in package (not Canonical's)."]
    return "\n".join(lines) + "\n"


def build(fixture, pool, key_dir):
    os.makedirs(pool, exist_ok=True)
    signing_key(key_dir)
    with tempfile.TemporaryDirectory() as tmp:
        payloads = apt_debs.Payloads("", tmp)
        objects = {}
        for st in stanzas(fixture):
            words = st.get("X-Payload", "none").split()
            files, scripts = {}, {}
            upstream = st["Version"].split("-")[0]
            if words[0] == "kernel-image":
                files, scripts = kernel_files(st["Package"][len("linux-image-"):])
            elif words[0] == "module-objects":
                series, kernel, version, lic = words[1], words[2], words[3], " ".join(words[4:])
                objects[(series, kernel)] = module_object(tmp, kernel, version, lic)
                files["%s/%s/nvidia-%s/nvidia.ko" % (LRM, kernel, series)] = (0o644, objects[(series, kernel)])
            elif words[0] == "module-signatures":
                series, kernel = words[1], words[2]
                sig = signature(tmp, key_dir, objects[(series, kernel)])  # objects come first
                files["%s/%s/signatures/nvidia-%s/nvidia.ko.sig" % (LRM, kernel, series)] = (0o644, sig)
            elif words[0] == "module-link":
                scripts = link_scripts(words[1], words[2])
            elif words[0] == "nvidia-smi":
                files, scripts = payloads.files(st["Package"], upstream, ["nvidia-smi", "cuda=" + words[1]])
            elif words[0] != "none":
                files, scripts = payloads.files(st["Package"], upstream, words)
            name = "%s_%s_amd64.deb" % (st["Package"], st["Version"])
            apt_debs.build_deb(os.path.join(pool, name), control(st, files), files, scripts)
            tree = st.get("X-Tree", "both")
            for t in ("now", "next"):
                if tree in (t, "both"):
                    print("REPO %s %s" % (t, name))


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "build":
        sys.exit("usage: ubuntu_archive.py build FIXTURE-PACKAGES POOL-DIR KEY-DIR")
    build(sys.argv[2], sys.argv[3], sys.argv[4])
