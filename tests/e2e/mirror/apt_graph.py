#!/usr/bin/env python3
"""The recorded apt fixtures behave like NVIDIA's repositories, asked of apt itself: `apt-get -s`
(simulation, no .debs, no root) in a private sandbox (its own apt.conf, lists, dpkg status and
preferences.d under a temporary directory) against each slug's index (apt_fixtures.py index).

  apt_graph.py FIXTURES-DIR     exit 0 when every claim holds, 1 naming the ones that do not,
                                77 when apt-get is missing (ctest: skipped)

The claims are the reference's (/work/shared/reference/nvidia-repos-2026.md §0, A3, A4) and the
e2e control scenario's (tests/e2e/scenarios/29-apt-graph-control.sh, which asks the same of real
apt in a root, .debs installed). A pinning package "installed" here is its dpkg status entry
plus its pin file in preferences.d, as dpkg would leave them. DCGM 4 (<slug>/Packages.dcgm) gets
its own sandbox with a small Debian archive beside it (DEBIAN_ARCHIVE): its claims are the ones
e2e 59 asks of real apt in a root.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import apt_fixtures  # noqa: E402

# Packages whose version is the driver's: everything the fixtures build at a driver version.
NOT_DRIVER = re.compile(r"^nvidia-driver-pinning")


# The distribution's packages DCGM's core depends on or its plugins recommend, at Debian 12's
# versions (the e2e root's dpkg status; lshw and libnuma1 as mirror/distro_dcgm.sh records them).
# `installed` ones are in the sandbox's dpkg status from the start, as on a minbase root. Their own
# dependencies on libraries every root has (libgcc-s1, libstdc++6) are left out here.
DEBIAN_ARCHIVE = [
    ({"Package": "libc6", "Version": "2.36-9+deb12u14", "Architecture": "amd64"}, True),
    ({"Package": "passwd", "Version": "1:4.13+dfsg1-1+deb12u2", "Architecture": "amd64"}, True),
    ({"Package": "login", "Version": "1:4.13+dfsg1-1+deb12u2", "Architecture": "amd64"}, True),
    ({"Package": "lshw", "Version": "02.19.git.2021.06.19.996aaad9c7-2+b1", "Architecture": "amd64",
      "Depends": "libc6 (>= 2.34)"}, False),
    ({"Package": "libnuma1", "Version": "2.0.16-1", "Architecture": "amd64", "Depends": "libc6 (>= 2.34)"}, False),
]


class Sandbox:
    def __init__(self, root, slug_dir, part=""):
        self.root, self.slug_dir = root, slug_dir
        _, self.stanzas = apt_fixtures.load_slug(slug_dir, part)
        self.base = {}
        extra = ""
        if part == "dcgm":
            for st, installed in DEBIAN_ARCHIVE:
                self.stanzas.append((0, dict(st, **{"X-Payload": "none"})))
                extra += "\n" + apt_fixtures.control_text(st) + "Filename: ./%s.deb\nSize: 1\n" % st["Package"]
                if installed:
                    self.base[st["Package"]] = st["Version"]
        for d in ("repo", "state/lists/partial", "cache/archives/partial", "etc/preferences.d",
                  "etc/sources.list.d", "etc/apt.conf.d"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        with open(os.path.join(root, "repo", "Packages"), "w") as f:
            f.write(apt_fixtures.index(slug_dir, part) + extra)
        with open(os.path.join(root, "etc", "sources.list"), "w") as f:
            f.write("deb [trusted=yes] file:%s/repo ./\n" % root)
        with open(os.path.join(root, "apt.conf"), "w") as f:
            f.write("".join('%s "%s";\n' % kv for kv in [
                ("Dir::State", root + "/state"), ("Dir::State::status", root + "/status"),
                ("Dir::Cache", root + "/cache"), ("Dir::Etc", root + "/etc"),
                ("Dir::Etc::sourcelist", root + "/etc/sources.list"),
                ("Dir::Etc::sourceparts", root + "/etc/sources.list.d"),
                ("Dir::Etc::preferences", root + "/etc/preferences"),
                ("Dir::Etc::preferencesparts", root + "/etc/preferences.d"),
                ("Dir::Etc::parts", root + "/etc/apt.conf.d"), ("APT::Architecture", "amd64"),
                ("Debug::NoLocking", "true")]))
        self.env = dict(os.environ, APT_CONFIG=root + "/apt.conf", LC_ALL="C")
        self.installed = {}
        self.set_installed({})
        subprocess.run(["apt-get", "update", "-qq"], env=self.env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stanza(self, name, version):
        for _, st in self.stanzas:
            if st["Package"] == name and st["Version"] == version:
                return st
        raise KeyError("%s %s not in %s" % (name, version, self.slug_dir))

    def set_installed(self, packages):
        """packages: {name: version}; writes the dpkg status and the installed pin's file."""
        self.installed = dict(self.base, **packages)
        packages = self.installed
        entries, pin = [], None
        for name, version in sorted(packages.items()):
            st = self.stanza(name, version)
            entries.append(apt_fixtures.control_text(st) + "Maintainer: x\nStatus: install ok installed\n")
            for w in st["X-Payload"].split():
                if w.startswith("pin/"):
                    pin = os.path.join(self.slug_dir, w)
        with open(os.path.join(self.root, "status"), "w") as f:
            f.write("\n".join(entries))
        target = os.path.join(self.root, "etc", "preferences.d", "nvidia-driver-pin")
        if pin:
            shutil.copy(pin, target)
        elif os.path.exists(target):
            os.remove(target)

    def sim(self, *args):
        """(rc, output, {name: version} apt would install)"""
        r = subprocess.run(["apt-get", "-s", "-o", "APT::Get::Show-Versions=1"] + list(args), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        inst = dict(re.findall(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) ", r.stdout, re.M))
        return r.returncode, r.stdout, inst

    def install(self, *args):
        """Simulate, then record the result as installed (removals included)."""
        rc, out, inst = self.sim("install", *args)
        if rc != 0:
            raise AssertionError("apt-get -s install %s failed:\n%s" % (" ".join(args), out))
        now = dict(self.installed)
        for name in re.findall(r"^Remv (\S+)", out, re.M):
            now.pop(name, None)
        now.update(inst)
        self.set_installed(now)
        return inst


class Claims:
    def __init__(self):
        self.failures = 0

    def check(self, what, ok, detail=""):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            self.failures += 1
            if detail:
                print("  " + detail.strip().replace("\n", "\n  "))


def branch_of(version):
    return version.split(".", 1)[0]


def driver_versions(inst):
    return {n: v for n, v in inst.items() if not NOT_DRIVER.match(n)}


def all_at(inst, upstream):
    """Every driver component in inst is at that upstream (or branch, 'NNN.')."""
    bad = {n: v for n, v in driver_versions(inst).items() if not v.startswith(upstream)}
    return not bad and bool(inst), bad


def ubuntu2404(sb, c):
    rc, out, _ = sb.sim("install", "cuda-drivers-595")
    c.check("ubuntu2404: apt-get install cuda-drivers-595 fails: no such package",
            rc != 0 and "Unable to locate package cuda-drivers-595" in out, out)

    sb.install("nvidia-driver-pinning-595")
    inst = sb.install("nvidia-open")
    ok, bad = all_at(inst, "595.91.07-")
    c.check("ubuntu2404: pinning-595, then nvidia-open installs every driver component at 595.91.07 "
            "(%d packages, none 610/620)" % len(inst), ok and "nvidia-driver-open" in inst, repr(bad or inst))
    rc, out, inst = sb.sim("dist-upgrade")
    c.check("ubuntu2404: pinned 595 host: apt-get -s dist-upgrade moves nothing (610 and 620 published)",
            rc == 0 and not inst and "Remv" not in out, out)
    rc, out, inst = sb.sim("install", "nvidia-open")
    c.check("ubuntu2404: pinned 595 host: apt-get -s install nvidia-open moves nothing",
            rc == 0 and not inst, out)
    inst = sb.install("nvidia-fabricmanager", "libnvidia-nscq", "nvidia-imex")
    ok, bad = all_at(inst, "595.91.07-")
    c.check("ubuntu2404: pinned 595 host: fabric manager, NSCQ, IMEX (and IMEX's nvidia-modprobe) at 595.91.07",
            ok and set(inst) >= {"nvidia-fabricmanager", "libnvidia-nscq", "nvidia-imex"}, repr(bad or inst))

    sb.set_installed({"nvidia-driver-pinning-595.71.05": "595.71.05-1ubuntu1"})
    inst = sb.install("nvidia-open")
    ok, bad = all_at(inst, "595.71.05-")
    c.check("ubuntu2404: pinning-595.71.05, then nvidia-open installs exactly 595.71.05", ok, repr(bad or inst))

    sb.set_installed({})
    rc, out, inst = sb.sim("install", "nvidia-open=595.91.07-1ubuntu1")
    c.check("ubuntu2404: no pin: nvidia-open=595.91.07-1ubuntu1 pulls nvidia-driver-open 620.70.06 (the newest)",
            rc == 0 and inst.get("nvidia-driver-open") == "620.70.06-1ubuntu1"
            and inst.get("nvidia-open") == "595.91.07-1ubuntu1", out)
    rc, out, inst = sb.sim("install", "nvidia-driver-pinning-595", "nvidia-open")
    c.check("ubuntu2404: the pinning package and nvidia-open in one transaction land on 620 (the pin is not read yet)",
            rc == 0 and inst.get("nvidia-driver-open", "").startswith("620."), out)
    rc, out, _ = sb.sim("install", "nvidia-open-580", "cuda-drivers-580")
    c.check("ubuntu2404: nvidia-open-580 conflicts with cuda-drivers-580",
            rc != 0 and "nvidia-open-580 : Conflicts: cuda-drivers-580" in out, out)
    rc, out, _ = sb.sim("install", "nvidia-fabricmanager-580")
    c.check("ubuntu2404: no pin: nvidia-fabricmanager-580 has no installation candidate",
            rc != 0 and "has no installation candidate" in out, out)

    sb.install("nvidia-driver-pinning-580")
    rc, out, inst = sb.sim("install", "nvidia-fabricmanager-580")
    c.check("ubuntu2404: pinning-580: nvidia-fabricmanager-580 installs nvidia-fabricmanager 580.159.04-1",
            rc == 0 and inst == {"nvidia-fabricmanager": "580.159.04-1"}, out)
    inst = sb.install("nvidia-open")
    ok, bad = all_at(inst, "580.159.04-")
    c.check("ubuntu2404: pinning-580, then nvidia-open installs nvidia-open-580 and nvidia-driver-580-open at 580.159.04",
            ok and "nvidia-open-580" in inst and "nvidia-driver-580-open" in inst and "nvidia-dkms-580-open" in inst,
            repr(bad or inst))
    # The suffixed and unsuffixed sets exclude each other: apt alone does not move a 580 host to
    # 595; removing every -580 package in the same transaction does ([C40]'s recipe for 565 -> 610).
    sb.install("nvidia-driver-pinning-595")
    rc, out, _ = sb.sim("install", "nvidia-open")
    c.check("ubuntu2404: 580 open host, pin swapped to 595: apt-get install nvidia-open refuses "
            "(libnvidia-compute-580 Conflicts libnvidia-compute)",
            rc != 0 and "libnvidia-compute-580 : Conflicts: libnvidia-compute" in out, out)
    old = sorted(n + "-" for n in sb.installed if n.endswith("-580") or "-580-" in n)
    rc, out, inst = sb.sim("install", "nvidia-open", *old)
    removed = set(re.findall(r"^Remv (\S+)", out, re.M))
    ok, bad = all_at(inst, "595.91.07-")
    c.check("ubuntu2404: ... with every -580 package removed in the same transaction it installs 595.91.07 "
            "(%d removals)" % len(removed), rc == 0 and ok and {n[:-1] for n in old} <= removed, repr(bad) + "\n" + out)

    # And back: 595 -> 580. The 580 pin does not cover the unsuffixed names, which have no 580
    # build ([R11b]): a dist-upgrade under it moves them to the newest branch.
    sb.set_installed({})
    sb.install("nvidia-driver-pinning-595")
    sb.install("nvidia-open")
    sb.install("nvidia-driver-pinning-580")
    rc, out, inst = sb.sim("dist-upgrade")
    c.check("ubuntu2404: 595 open host, pin swapped to 580: dist-upgrade would move unsuffixed parts to 620 "
            "(the pin covers no unsuffixed name without a 580 build)",
            rc == 0 and any(v.startswith("620.") for v in inst.values()), out)
    unsuffixed = sorted(n + "-" for n in sb.installed
                        if not n.startswith("nvidia-driver-pinning") and n not in ("nvidia-open", "nvidia-persistenced", "nvidia-modprobe"))
    rc, out, inst = sb.sim("install", "nvidia-open", *unsuffixed)
    ok, bad = all_at(inst, "580.159.04-")
    c.check("ubuntu2404: ... with the unsuffixed driver packages removed in the same transaction, nvidia-open "
            "goes to 580.159.04 (nvidia-open-580, nvidia-driver-580-open)", rc == 0 and ok and "nvidia-driver-580-open" in inst,
            repr(bad) + "\n" + out)

    sb.set_installed({"nvidia-driver-pinning-580": "580-5ubuntu1"})
    inst = sb.install("cuda-drivers")
    ok, bad = all_at(inst, "580.159.04-")
    c.check("ubuntu2404: pinning-580, then cuda-drivers installs cuda-drivers-580 and nvidia-driver-580 at 580.159.04",
            ok and "cuda-drivers-580" in inst and "nvidia-driver-580" in inst, repr(bad or inst))
    sb.set_installed({})
    rc, out, inst = sb.sim("install", "cuda-drivers-580")
    crossed = {n: v for n, v in inst.items() if branch_of(v) != "580"}
    c.check("ubuntu2404: no pin: cuda-drivers-580 floor-only pulls nvidia-persistenced of the newest branch",
            rc == 0 and set(crossed) == {"nvidia-persistenced"}, repr(crossed) + "\n" + out)


def ubuntu2204(sb, c):
    for pin, want in (("580", "580.159.04-"), ("595", "595.91.07-")):
        sb.set_installed({})
        sb.install("nvidia-driver-pinning-" + pin)
        inst = sb.install("nvidia-open")
        ok, bad = all_at(inst, want)
        c.check("ubuntu2204: pinning-%s, then nvidia-open installs %s (610 published)" % (pin, want[:-1]),
                ok, repr(bad or inst))


def debian12(sb, c):
    rc, out, inst = sb.sim("install", "cuda-drivers-580")
    c.check("debian12: no pin: cuda-drivers-580 (floor-only, [F1]) pulls nvidia-driver 595.91.07-1",
            rc == 0 and inst.get("nvidia-driver") == "595.91.07-1" and inst.get("cuda-drivers-580", "").startswith("580."),
            out)
    sb.install("nvidia-driver-pinning-580")
    inst = sb.install("cuda-drivers-580")
    ok, bad = all_at(inst, "580.126.16-")
    c.check("debian12: pinning-580, then cuda-drivers-580 stays on 580 (580.126.16)", ok, repr(bad or inst))
    sb.set_installed({"nvidia-driver-pinning-595": "595-1"})
    inst = sb.install("nvidia-open")
    ok, bad = all_at(inst, "595.91.07-")
    c.check("debian12: pinning-595, then nvidia-open installs the open kernel module at 595.91.07",
            ok and "nvidia-kernel-open-dkms" in inst and "nvidia-kernel-dkms" not in inst, repr(bad or inst))
    # Debian's names carry no branch: swapping the pin and upgrading moves the whole stack.
    sb.install("nvidia-driver-pinning-580")
    rc, out, inst = sb.sim("dist-upgrade")
    ok, bad = all_at(inst, "580.126.16-")
    c.check("debian12: 595 open host, pin swapped to 580: dist-upgrade downgrades every component to 580.126.16",
            rc == 0 and ok and "nvidia-kernel-open-dkms" in inst, repr(bad) + "\n" + out)


DCGM = "datacenter-gpu-manager-4"


def dcgm(sb, c, slug):
    """DCGM 4's parts at one version, as plain apt resolves them (e2e 59 asks the same in a root)."""
    newest, older = "1:4.6.1-1", "1:4.4.2-1"
    parts12 = ["%s-%s" % (DCGM, p) for p in ("core", "cuda12", "proprietary", "proprietary-cuda12")]
    rc, out, inst = sb.sim("install", DCGM + "-cuda12")
    c.check("%s: DCGM -cuda12 pulls core, and (recommended) the proprietary pair, all at %s, and lshw" % (slug, newest),
            rc == 0 and all(inst.get(p) == newest for p in parts12) and "lshw" in inst
            and not any("cuda13" in n for n in inst), out)
    rc, out, inst = sb.sim("install", "%s-cuda12=%s" % (DCGM, older))
    c.check("%s: -cuda12=%s alone fails on core's exact version (the candidate is %s) or pulls core %s" % (
        slug, older, newest, older),
        (rc != 0 and "%s-core (= %s) but %s is to be installed" % (DCGM, older, newest) in out)
        or (rc == 0 and inst.get(DCGM + "-core") == older), out)
    inst = sb.install(*["%s=%s" % (p, older) for p in parts12])
    c.check("%s: the four parts named at %s (gpuprov's way) install at %s" % (slug, older, older),
            all(inst.get(p) == older for p in parts12), repr(inst))
    rc, out, inst = sb.sim("install", DCGM)
    c.check("%s: %s is a virtual package (Provides of -cuda12/-cuda13): no installation candidate" % (slug, DCGM),
            rc != 0 and "is a virtual package provided by" in out and "has no installation candidate" in out, out)
    sb.set_installed({})
    sb.install(DCGM + "-cuda12")
    rc, out, inst = sb.sim("install", "%s-cuda12=%s" % (DCGM, older))
    c.check("%s: core %s installed, -cuda12=%s fails or takes core down to %s with it" % (slug, newest, older, older),
            (rc != 0 and "(= %s)" % older in out) or (rc == 0 and inst.get(DCGM + "-core") == older), out)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not shutil.which("apt-get"):
        print("apt-get not found: skipped")
        return 77
    c = Claims()
    for slug, claims in (("ubuntu2404", ubuntu2404), ("ubuntu2204", ubuntu2204), ("debian12", debian12)):
        with tempfile.TemporaryDirectory() as tmp:
            try:
                claims(Sandbox(tmp, os.path.join(argv[1], slug)), c)
            except AssertionError as e:
                c.check("%s: a step of the claims" % slug, False, str(e))
        with tempfile.TemporaryDirectory() as tmp:
            try:
                dcgm(Sandbox(tmp, os.path.join(argv[1], slug), "dcgm"), c, slug)
            except AssertionError as e:
                c.check("%s: a step of the DCGM claims" % slug, False, str(e))
    print("%d claim(s) failed" % c.failures if c.failures else "all claims hold")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
