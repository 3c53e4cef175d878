#!/usr/bin/env python3
"""The apt fixtures of tests/fixtures/nvidia-repos (<slug>/Packages, <slug>/Packages.dcgm, <slug>/pin/*): one reader for
the checker (ctest nvidia_repo_fixtures_apt) and for the e2e mirror (mirror/apt_debs.py, which
build.sh calls), so the stand-in .debs carry exactly the recorded control fields. Format: tests/fixtures/nvidia-repos/README.md.

  apt_fixtures.py check FIXTURES-DIR          every stanza sourced, statused, well formed
  apt_fixtures.py self-test                   the checker refuses broken samples (a check that can fail)
  apt_fixtures.py index SLUG-DIR [PART]       the slug's Packages index (PART dcgm: Packages.dcgm) without
                                              X- fields, with made-up Filename/Size (for apt-get -s in a
                                              sandbox, no .debs)
Stdlib only: it runs on the e2e host's system python and under ctest.
"""
import os
import re
import sys

SLUGS = ("ubuntu2404", "ubuntu2204", "debian12")
# The files of a slug: the driver graph (served on the 2026 tree only) and DCGM 4 (served on both
# trees, so it is a file of its own; README.md "DCGM 4").
PARTS = {"": "Packages", "dcgm": "Packages.dcgm"}
# Names the distribution's own archive provides (Debian's and Ubuntu's, both): a Depends on them is
# NVIDIA's, satisfied by the host's archive, not by NVIDIA's repository. DCGM's core needs them
# (DCGM's packaging.cmake); the e2e mirror's `debian` repository carries stand-ins for the ones a
# minbase root lacks (mirror/distro_dcgm.sh).
DISTRO_PACKAGES = {"libc6", "lshw", "passwd", "login", "libnuma1"}
# DCGM 4's parts are published and installed at one version: each (= V) between them names the
# depending stanza's own version (README.md "DCGM 4").
DCGM_PREFIX = "datacenter-gpu-manager-4"
# Control fields a fixture stanza may carry, in the order the .deb's control file gets them.
CONTROL_FIELDS = ["Package", "Version", "Architecture", "Source", "Section", "Pre-Depends", "Depends",
                  "Recommends", "Provides", "Conflicts", "Replaces", "Breaks", "Description"]
RELATION_FIELDS = ["Pre-Depends", "Depends", "Recommends", "Provides", "Conflicts", "Replaces", "Breaks"]
X_FIELDS = ["X-Source", "X-Confirmed", "X-Status", "X-Payload"]
REQUIRED = ["Package", "Version", "Architecture", "X-Source", "X-Status", "X-Payload"]
ARCHES = {"amd64", "all"}
# Payload roles mirror/build.sh knows how to stage (README.md says what each installs).
ROLES = {"none", "dkms-proprietary", "dkms-open", "compute-libs", "nvidia-smi", "persistenced",
         "fabricmanager", "nscq", "imex", "nvlsm", "pin-file", "dcgm-hostengine", "dcgmi", "dcgm-unit",
         "dcgm-plugins"}
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9+.\-]+$")
VERSION_RE = re.compile(r"^([0-9]+:)?[0-9][A-Za-z0-9.+~]*(-[A-Za-z0-9.+~]+)?$")
ATOM_RE = re.compile(r"^([a-z0-9][a-z0-9+.\-]+)(:any)?( \((<<|<=|=|>=|>>) ([^ )]+)\))?$")
TAG_RE = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9\-]*)\]")
# The README's source list: lines "- [TAG] ...".
README_TAG_RE = re.compile(r"^- \[([A-Za-z0-9][A-Za-z0-9\-]*)\]", re.M)


class FixtureError(Exception):
    pass


def parse(text, where):
    """deb822 stanzas -> list of (line, {field: value}); '#' lines outside stanzas are comments."""
    stanzas, cur, cur_line, last = [], None, 0, None
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        if line.startswith("#"):
            if cur is not None:
                raise FixtureError("%s:%d: comment inside a stanza" % (where, n))
            continue
        if not line:
            if cur is not None:
                stanzas.append((cur_line, cur))
                cur, last = None, None
            continue
        if line[0] in " \t":
            if cur is None or last is None:
                raise FixtureError("%s:%d: continuation line outside a field" % (where, n))
            cur[last] += "\n" + line.strip()
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9\-]*):[ \t]*(.*)$", line)
        if not m:
            raise FixtureError("%s:%d: not a 'Field: value' line: %r" % (where, n, line))
        if cur is None:
            cur, cur_line = {}, n
        if m.group(1) in cur:
            raise FixtureError("%s:%d: field %s given twice" % (where, n, m.group(1)))
        last = m.group(1)
        cur[last] = m.group(2)
    if cur is not None:
        stanzas.append((cur_line, cur))
    return stanzas


def relation_groups(value):
    """'a (>= 1) | b, c' -> [[('a', '>=', '1'), ('b', None, None)], [('c', None, None)]]"""
    groups = []
    for group in value.replace("\n", " ").split(","):
        alts = []
        for atom in group.split("|"):
            atom = " ".join(atom.split())
            m = ATOM_RE.match(atom)
            if not m:
                raise ValueError("bad relation %r" % atom)
            alts.append((m.group(1), m.group(4), m.group(5)))
        groups.append(alts)
    return groups


def upstream(version):
    v = version.split(":", 1)[-1]
    return v.rsplit("-", 1)[0] if "-" in v else v


def payload_words(value):
    words = value.split()
    roles = [w for w in words if "=" not in w and not w.startswith("pin/")]
    return words, roles


def check_stanza(slug_dir, where, fields, tags):
    """Problems with one stanza (list of strings; empty when fine)."""
    errs = []
    for f in fields:
        if f not in CONTROL_FIELDS and f not in X_FIELDS:
            errs.append("unknown field %s (allowed: %s)" % (f, ", ".join(CONTROL_FIELDS + X_FIELDS)))
    for f in REQUIRED:
        if not fields.get(f, "").strip():
            errs.append("missing %s" % f)
    name, version = fields.get("Package", ""), fields.get("Version", "")
    if name and not NAME_RE.match(name):
        errs.append("bad package name %r" % name)
    if version and not VERSION_RE.match(version):
        errs.append("bad version %r" % version)
    if fields.get("Architecture") and fields["Architecture"] not in ARCHES:
        errs.append("Architecture %r is not one of %s" % (fields["Architecture"], sorted(ARCHES)))
    for f in RELATION_FIELDS:
        if f in fields:
            try:
                groups = relation_groups(fields[f])
            except ValueError as e:
                errs.append("%s: %s" % (f, e))
                continue
            if f in ("Provides",) and any(len(g) > 1 or (g[0][1] not in (None, "=")) for g in groups):
                errs.append("Provides takes plain names or (= version) only")
    src = fields.get("X-Source", "")
    if src:
        cited = TAG_RE.findall(src)
        if not cited and "://" not in src:
            errs.append("X-Source cites no [TAG] and no URL")
        for t in cited:
            if t not in tags:
                errs.append("X-Source cites [%s], which README.md's source list does not define" % t)
    status = fields.get("X-Status", "")
    if status:
        if status == "CONFIRMED":
            pass
        elif status.startswith("INFERRED"):
            reason = status[len("INFERRED"):].strip()
            if len(reason.split()) < 3:
                errs.append("X-Status INFERRED gives no reason (write why after INFERRED)")
        else:
            errs.append("X-Status must be CONFIRMED or 'INFERRED <why>', not %r" % status.split()[0])
    conf = fields.get("X-Confirmed", "")
    for f in conf.split():
        if f not in CONTROL_FIELDS:
            errs.append("X-Confirmed names %s, not a control field" % f)
        elif f not in fields:
            errs.append("X-Confirmed names %s, which the stanza does not carry" % f)
    pay = fields.get("X-Payload", "")
    if pay:
        words, roles = payload_words(pay)
        for r in roles:
            if r not in ROLES:
                errs.append("X-Payload role %r is not one of %s" % (r, sorted(ROLES)))
        if "nvidia-smi" in roles and not any(re.match(r"^cuda=[0-9]+\.[0-9]+$", w) for w in words):
            errs.append("X-Payload nvidia-smi needs cuda=X.Y (the CUDA version it reports)")
        if "dcgm-plugins" in roles and not any(re.match(r"^cuda=[0-9]+$", w) for w in words):
            errs.append("X-Payload dcgm-plugins needs cuda=N (the CUDA major the plugins are built for)")
        if "pin-file" in roles:
            pins = [w for w in words if w.startswith("pin/")]
            if len(pins) != 1:
                errs.append("X-Payload pin-file needs one pin/<file>")
            elif not os.path.isfile(os.path.join(slug_dir, pins[0])):
                errs.append("X-Payload %s: no such file in %s" % (pins[0], slug_dir))
        if "none" in roles and len(roles) > 1:
            errs.append("X-Payload none cannot be combined with other roles")
    return ["%s: %s" % (where, e) for e in errs]


def load_tags(fixtures_dir):
    readme = os.path.join(fixtures_dir, "README.md")
    try:
        with open(readme) as f:
            return set(README_TAG_RE.findall(f.read()))
    except OSError:
        return set()


def load_slug(slug_dir, part=""):
    path = os.path.join(slug_dir, PARTS[part])
    with open(path) as f:
        return path, parse(f.read(), path)


def load_parts(slug_dir):
    """[(part, path, stanzas)] for each part file the slug has (Packages is required)."""
    out = []
    for part in PARTS:
        if part and not os.path.exists(os.path.join(slug_dir, PARTS[part])):
            continue
        path, stanzas = load_slug(slug_dir, part)
        out.append((part, path, stanzas))
    return out


def check_slug(slug_dir, tags):
    errs = []
    try:
        parts = load_parts(slug_dir)
    except (OSError, FixtureError) as e:
        return [str(e)]
    seen, names, used_pins, versions = {}, set(), set(), {}
    for _, path, stanzas in parts:
        for line, st in stanzas:
            where = "%s:%d" % (path, line)
            errs += check_stanza(slug_dir, where, st, tags)
            key = (st.get("Package"), st.get("Version"), st.get("Architecture"))
            if key in seen:
                errs.append("%s: %s %s %s already at %s" % (where, key[0], key[1], key[2], seen[key]))
            seen[key] = where
            names.add(st.get("Package"))
            versions.setdefault(st.get("Package"), set()).add(st.get("Version"))
            for g in relation_groups_safe(st.get("Provides", "")):
                names.add(g[0][0])
                if g[0][2]:
                    versions.setdefault(g[0][0], set()).add(g[0][2])
            for w in st.get("X-Payload", "").split():
                if w.startswith("pin/"):
                    used_pins.add(w)
    # Every dependency names something this repository carries (a typo is an error), or one of
    # the distribution's own packages; Recommends may name packages from elsewhere (apt ignores a
    # missing recommendation). An exact (= V) dependency on a package of this repository names a
    # version it publishes: otherwise apt could never install the depending stanza.
    for _, path, stanzas in parts:
        for line, st in stanzas:
            for f in ("Pre-Depends", "Depends"):
                for g in relation_groups_safe(st.get(f, "")):
                    if not any(a[0] in names or a[0] in DISTRO_PACKAGES for a in g):
                        errs.append("%s:%d: %s %s: no stanza is or provides any of it" %
                                    (path, line, f, " | ".join(a[0] for a in g)))
                    for name, op, ver in g:
                        if op == "=" and name in versions and ver not in versions[name]:
                            errs.append("%s:%d: %s %s (= %s): no stanza is or provides that version" %
                                        (path, line, f, name, ver))
    for part, path, stanzas in parts:
        if part == "dcgm":
            errs += check_dcgm(path, stanzas)
    pin_dir = os.path.join(slug_dir, "pin")
    if os.path.isdir(pin_dir):
        for fn in sorted(os.listdir(pin_dir)):
            if "pin/" + fn not in used_pins:
                errs.append("%s: no stanza installs it (X-Payload pin-file pin/%s)" % (os.path.join(pin_dir, fn), fn))
            else:
                errs += check_pin_file(os.path.join(pin_dir, fn))
    return errs


def check_dcgm(path, stanzas):
    """DCGM 4's parts at one version: every relation between them is (= the stanza's own version),
    every part is published at every version, and nothing else lives in Packages.dcgm."""
    errs, parts_at = [], {}
    for line, st in stanzas:
        name, version = st.get("Package", ""), st.get("Version", "")
        if not name.startswith(DCGM_PREFIX + "-"):
            errs.append("%s:%d: %s is not a DCGM 4 package (%s-*)" % (path, line, name, DCGM_PREFIX))
            continue
        parts_at.setdefault(version, set()).add(name)
        for f in ("Pre-Depends", "Depends", "Recommends", "Provides", "Conflicts", "Breaks"):
            for g in relation_groups_safe(st.get(f, "")):
                for dep, op, ver in g:
                    if dep.startswith(DCGM_PREFIX) and op is not None and (op != "=" or ver != version):
                        errs.append("%s:%d: %s %s (%s %s): DCGM's parts relate at their own version (= %s)"
                                    % (path, line, f, dep, op, ver, version))
    every = set().union(*parts_at.values()) if parts_at else set()
    for version, names in sorted(parts_at.items()):
        for missing in sorted(every - names):
            errs.append("%s: %s is not published at %s, the other DCGM parts are" % (path, missing, version))
    return errs


def relation_groups_safe(value):
    try:
        return relation_groups(value) if value.strip() else []
    except ValueError:
        return []


def check_pin_file(path):
    """An apt preferences file: stanzas of Package/Pin/Pin-Priority (+ Explanation)."""
    with open(path) as f:
        text = f.read()
    errs = []
    try:
        stanzas = parse(text, path)
    except FixtureError as e:
        return [str(e)]
    if not stanzas:
        errs.append("%s: no stanza" % path)
    for line, st in stanzas:
        for f in st:
            if f not in ("Explanation", "Package", "Pin", "Pin-Priority"):
                errs.append("%s:%d: field %s is not an apt preferences field" % (path, line, f))
        for f in ("Package", "Pin", "Pin-Priority"):
            if f not in st:
                errs.append("%s:%d: missing %s" % (path, line, f))
        if st.get("Pin-Priority", "1000") != "1000":
            errs.append("%s:%d: NVIDIA's pins are Pin-Priority 1000 (reference A4)" % (path, line))
        if "Pin" in st and not re.match(r"^version [0-9][0-9.]*(\.\*|-\*)$", st["Pin"]):
            errs.append("%s:%d: Pin %r is not 'version <branch>.*' or 'version <version>-*'" % (path, line, st["Pin"]))
    return errs


def check(fixtures_dir):
    tags = load_tags(fixtures_dir)
    errs = []
    if not tags:
        errs.append("%s: README.md lists no sources ('- [TAG] ...' lines)" % fixtures_dir)
    for slug in SLUGS:
        d = os.path.join(fixtures_dir, slug)
        if not os.path.isdir(d):
            errs.append("%s: missing" % d)
            continue
        if not os.path.isfile(os.path.join(d, PARTS["dcgm"])):
            errs.append("%s: missing (DCGM 4 is served from every slug)" % os.path.join(d, PARTS["dcgm"]))
        errs += check_slug(d, tags)
    return errs


def control_text(st):
    return "".join("%s: %s\n" % (f, st[f].replace("\n", "\n ")) for f in CONTROL_FIELDS if f in st)


def index(slug_dir, part=""):
    _, stanzas = load_slug(slug_dir, part)
    out = []
    for _, st in stanzas:
        fn = "%s_%s_%s.deb" % (st["Package"], st["Version"], st["Architecture"])
        out.append(control_text(st) + "Filename: ./%s\nSize: 1\n" % fn)
    return "\n".join(out)


# --- self-test: broken samples the checker must refuse -----------------------------------------------
GOOD = """Package: nvidia-open
Version: 595.91.07-1ubuntu1
Architecture: amd64
Depends: nvidia-driver-open (>= 595.91.07)
X-Source: [T1] a capture
X-Status: CONFIRMED
X-Payload: none

Package: nvidia-driver-open
Version: 595.91.07-1ubuntu1
Architecture: amd64
X-Source: [T1] a capture
X-Status: INFERRED the Depends list is not captured
X-Payload: compute-libs nvidia-smi cuda=13.2
"""
BROKEN = [
    ("no X-Source", lambda s: s.replace("X-Source: [T1] a capture\nX-Status: CONFIRMED", "X-Status: CONFIRMED"), "missing X-Source"),
    ("no X-Status", lambda s: s.replace("X-Status: CONFIRMED\n", ""), "missing X-Status"),
    ("INFERRED without a reason", lambda s: s.replace("INFERRED the Depends list is not captured", "INFERRED"), "gives no reason"),
    ("other status word", lambda s: s.replace("X-Status: CONFIRMED", "X-Status: PROBABLY"), "must be CONFIRMED"),
    ("undefined tag", lambda s: s.replace("[T1] a capture\nX-Status: CONFIRMED", "[T9] elsewhere\nX-Status: CONFIRMED"), "does not define"),
    ("no tag, no URL", lambda s: s.replace("[T1] a capture\nX-Status: CONFIRMED", "somebody said so\nX-Status: CONFIRMED"), "cites no [TAG]"),
    ("unknown payload role", lambda s: s.replace("X-Payload: none", "X-Payload: firmware"), "X-Payload role"),
    ("nvidia-smi without cuda", lambda s: s.replace(" cuda=13.2", ""), "needs cuda=X.Y"),
    ("missing pin file", lambda s: s.replace("X-Payload: none", "X-Payload: pin-file pin/absent"), "no such file"),
    ("bad relation", lambda s: s.replace("(>= 595.91.07)", "(>= 595.91.07"), "bad relation"),
    ("dangling Depends", lambda s: s.replace("Depends: nvidia-driver-open", "Depends: nvidia-driver-opne"), "no stanza is or provides"),
    ("duplicate version", lambda s: s + "\n" + s.split("\n\n")[0] + "\n", "already at "),
    ("unknown field", lambda s: s.replace("X-Payload: none", "X-Payload: none\nFilename: ./x.deb"), "unknown field"),
    ("X-Confirmed names an absent field", lambda s: s.replace("X-Status: CONFIRMED", "X-Confirmed: Conflicts\nX-Status: CONFIRMED"), "does not carry"),
]

# Core and -cuda12 at two versions (the index has both), the same stanzas but for the version.
GOOD_DCGM = "\n".join("""Package: datacenter-gpu-manager-4-core
Version: {v}
Architecture: amd64
Depends: libc6 (>= 2.27), lshw
X-Source: [T1] a capture
X-Status: INFERRED the Depends list is the build's
X-Payload: dcgm-hostengine dcgmi dcgm-unit

Package: datacenter-gpu-manager-4-cuda12
Version: {v}
Architecture: amd64
Depends: datacenter-gpu-manager-4-core (= {v})
Provides: datacenter-gpu-manager-4 (= {v})
X-Source: [T1] a capture
X-Status: CONFIRMED
X-Payload: dcgm-plugins cuda=12
""".format(v=v) for v in ("1:4.4.2-1", "1:4.6.1-1"))
# (what, mutate GOOD_DCGM, expected error); the driver sample stays GOOD.
BROKEN_DCGM = [
    ("a DCGM stanza without X-Source", lambda s: s.replace("X-Source: [T1] a capture\nX-Status: CONFIRMED\nX-Payload: dcgm-plugins cuda=12\n", "X-Status: CONFIRMED\nX-Payload: dcgm-plugins cuda=12\n", 1), "missing X-Source"),
    ("a DCGM stanza without X-Status", lambda s: s.replace("X-Status: CONFIRMED\n", "", 1), "missing X-Status"),
    ("-cuda12 on core at another published version",
     lambda s: s.replace("datacenter-gpu-manager-4-core (= 1:4.6.1-1)", "datacenter-gpu-manager-4-core (= 1:4.4.2-1)"), "at their own version"),
    ("-cuda12 on core with a floor", lambda s: s.replace("datacenter-gpu-manager-4-core (= 1:4.6.1-1)", "datacenter-gpu-manager-4-core (>= 1:4.6.1-1)"), "at their own version"),
    ("a part missing at one version", lambda s: s.split("\n\n", 1)[1], "is not published at 1:4.4.2-1"),
    ("a distro name nobody provides", lambda s: s.replace("lshw\n", "lshw, libdcgm-imagined\n", 1), "no stanza is or provides"),
    ("dcgm-plugins without its CUDA major", lambda s: s.replace("dcgm-plugins cuda=12", "dcgm-plugins", 1), "needs cuda=N"),
    ("a driver package in Packages.dcgm", lambda s: s + "\n" + GOOD.split("\n\n")[1], "is not a DCGM 4 package"),
]


def self_test():
    import tempfile
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "README.md"), "w") as f:
            f.write("- [T1] a test source\n")

        def run(text, dcgm=GOOD_DCGM):
            for slug in SLUGS:
                os.makedirs(os.path.join(tmp, slug), exist_ok=True)
                with open(os.path.join(tmp, slug, "Packages"), "w") as f:
                    f.write(text)
                path = os.path.join(tmp, slug, PARTS["dcgm"])
                if dcgm is None:
                    os.remove(path) if os.path.exists(path) else None
                else:
                    with open(path, "w") as f:
                        f.write(dcgm)
            return check(tmp)

        errs = run(GOOD)
        if errs:
            print("FAIL: the good sample is refused:\n  " + "\n  ".join(errs))
            failures += 1
        for what, mutate, expect in BROKEN:
            errs = run(mutate(GOOD))
            if not any(expect in e for e in errs):
                print("FAIL: %s: expected an error containing %r, got %r" % (what, expect, errs))
                failures += 1
            else:
                print("ok: refuses %s" % what)
        for what, mutate, expect in BROKEN_DCGM:
            errs = run(GOOD, mutate(GOOD_DCGM))
            if not any(expect in e for e in errs):
                print("FAIL: %s: expected an error containing %r, got %r" % (what, expect, errs))
                failures += 1
            else:
                print("ok: refuses %s" % what)
        exact = GOOD.replace("nvidia-driver-open (>= 595.91.07)", "nvidia-driver-open (= 595.91.06-1ubuntu1)")
        for what, text, dcgm, expect in [
                ("an exact Depends on an unpublished version", exact, GOOD_DCGM, "no stanza is or provides that version"),
                ("a slug without Packages.dcgm", GOOD, None, "DCGM 4 is served from every slug")]:
            errs = run(text, dcgm)
            if not any(expect in e for e in errs):
                print("FAIL: %s: expected an error containing %r, got %r" % (what, expect, errs))
                failures += 1
            else:
                print("ok: refuses %s" % what)
        # a pin file nobody installs, and one with a foreign field
        os.makedirs(os.path.join(tmp, "debian12", "pin"), exist_ok=True)
        with open(os.path.join(tmp, "debian12", "pin", "orphan"), "w") as f:
            f.write("Package: x\nPin: version 1.*\nPin-Priority: 1000\n")
        errs = run(GOOD)
        if not any("no stanza installs it" in e for e in errs):
            print("FAIL: an orphan pin file is accepted")
            failures += 1
        else:
            print("ok: refuses an orphan pin file")
        with open(os.path.join(tmp, "debian12", "pin", "orphan"), "w") as f:
            f.write("Package: x\nPin: version 1.*\nPin-Priority: 990\n")
        text = GOOD.replace("X-Payload: none", "X-Payload: pin-file pin/orphan")
        errs = run(text)
        if not any("Pin-Priority 1000" in e for e in errs):
            print("FAIL: a pin file at priority 990 is accepted: %r" % errs)
            failures += 1
        else:
            print("ok: refuses a pin file that is not at Pin-Priority 1000")
    return failures


def main(argv):
    if len(argv) >= 2 and argv[1] == "check" and len(argv) == 3:
        errs = check(argv[2])
        for e in errs:
            print(e)
        if not errs:
            n = sum(len(load_slug(os.path.join(argv[2], s))[1]) for s in SLUGS)
            d = sum(len(load_slug(os.path.join(argv[2], s), "dcgm")[1]) for s in SLUGS)
            print("ok: %d driver and %d DCGM stanzas in %s, each sourced and statused" % (n, d, ", ".join(SLUGS)))
        return 1 if errs else 0
    if len(argv) == 2 and argv[1] == "self-test":
        return 1 if self_test() else 0
    if len(argv) in (3, 4) and argv[1] == "index":
        sys.stdout.write(index(argv[2], argv[3] if len(argv) == 4 else ""))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
