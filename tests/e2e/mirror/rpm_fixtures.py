#!/usr/bin/env python3
"""The rpm fixtures of tests/fixtures/nvidia-repos (rhel*/, rpm-sources.txt): one reader for the
checker (ctest nvidia_repo_fixtures_rpm) and for the e2e mirror (mirror/build-rpm.sh), so the
stand-in rpms carry exactly the recorded fields. Format: tests/fixtures/nvidia-repos/RPM.md.

  rpm_fixtures.py check FIXTURES-DIR         every stanza sourced, statused, well formed
  rpm_fixtures.py self-test                  the checker refuses broken samples (a check that can fail)
  rpm_fixtures.py plan REPO-FILE             one line per rpm: KEY NAME EPOCH VERSION RELEASE ARCH PAYLOAD...
  rpm_fixtures.py specs REPO-FILE STAGE OUT  rpmbuild specs (one per group of distinct names) -> paths
  rpm_fixtures.py modules MODULES-FILE       modules.yaml (modulemd v2 + defaults) on stdout
  rpm_fixtures.py field REPO-FILE NAME FIELD one relation field of the newest NAME, one entry a line
  rpm_fixtures.py names REPO-FILE            every rpm file name the repository holds
Stdlib only: it runs on the e2e host's system python and under ctest.
"""
import hashlib
import os
import re
import sys

PACKAGE_FIELDS = ["Package", "Epoch", "Version", "Release", "Arch", "Requires", "Provides", "Conflicts",
                  "Obsoletes", "Recommends", "Supplements", "Payload", "Source", "Status", "Confirmed", "Reason"]
RELATION_FIELDS = ["Requires", "Provides", "Conflicts", "Obsoletes", "Recommends", "Supplements"]
KINDS = {
    "Source-Tag": (["Source-Tag", "Citation"], ["Source-Tag", "Citation"]),
    "Repository": (["Repository", "Dist", "Same-As", "Retarget", "Source", "Status", "Confirmed", "Reason"],
                   ["Repository", "Dist", "Source", "Status"]),
    "Package": (PACKAGE_FIELDS, ["Package", "Epoch", "Version", "Release", "Arch", "Payload", "Source", "Status"]),
    "Module": (["Module", "Stream", "Branch", "Artifacts", "Profile-default", "Profile-fm", "Profile-src",
                "Profile-ks", "Source", "Status", "Confirmed", "Reason"],
               ["Module", "Stream", "Branch", "Artifacts", "Profile-default", "Source", "Status"]),
    "Module-Defaults": (["Module-Defaults", "Default-Stream", "Default-Profiles", "Source", "Status", "Confirmed",
                         "Reason"], ["Module-Defaults", "Default-Stream", "Source", "Status"]),
}
# Payload roles mirror/build-rpm.sh knows how to stage (RPM.md lists what each installs).
PAYLOADS = {"none": 0, "driver-marker": 0, "library": -1, "nvidia-smi": 1, "persistenced": 0, "kmod-common": 0,
            "dkms-source": 1, "tool": 1, "fabricmanager": 0, "versionlock-plugin": 0, "dcgm-core": 0,
            "dcgm-plugins": 1}
# A repository whose rpms carry no dist tag in their Release (NVIDIA's DCGM rpms: "4.6.1-1").
NO_DIST = "none"
ARCHES = {"x86_64", "noarch"}
NAME_RE = r"[A-Za-z0-9_.+\-]+(\(\))?(\([A-Za-z0-9_.\-]+\))?"  # name, soname()(64bit), name(x86-64)
EVR_RE = r"([0-9]+:)?[A-Za-z0-9_.+^~]+(-[A-Za-z0-9_.+^~]+)?"
RELATION_RE = re.compile(r"^" + NAME_RE + r"( (=|<|>|<=|>=) " + EVR_RE + r")?$")
RICH_RE = re.compile(r"^\(.+\)$")
TAG_RE = re.compile(r"\[([A-Za-z0-9_.\-]+)\]")


class Stanza:
    def __init__(self, path, line):
        self.path, self.line, self.fields, self.lines, self.order = path, line, {}, {}, []

    @property
    def kind(self):
        return self.order[0] if self.order else None

    def get(self, key, default=""):
        v = self.fields.get(key)
        return default if v is None else v[0]

    def list(self, key):
        return [x for x in self.fields.get(key, []) if x]

    def text(self, key):
        return " ".join(self.list(key))

    def where(self, key=None):
        return "%s:%d" % (self.path, self.lines.get(key, self.line) if key else self.line)


def parse(path, text=None):
    """Stanzas separated by blank lines; 'Key: value', continuation lines start with a space;
    lines starting with '#' are comments. Returns (stanzas, errors)."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    stanzas, errors, cur, key = [], [], None, None
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if not line:
            cur, key = None, None
            continue
        if line[0] in " \t":
            if cur is None or key is None:
                errors.append("%s:%d: continuation line outside a field" % (path, n))
            else:
                cur.fields[key].append(line.strip())
            continue
        if ":" not in line:
            errors.append("%s:%d: expected 'Field: value', got %r" % (path, n, line))
            continue
        k, v = line.split(":", 1)
        if cur is None:
            cur = Stanza(path, n)
            stanzas.append(cur)
        if k in cur.fields:
            errors.append("%s:%d: field %s given twice in one stanza" % (path, n, k))
        key = k
        cur.fields[k] = [v.strip()]
        cur.lines[k] = n
        cur.order.append(k)
    return stanzas, errors


def load_tags(root):
    path = os.path.join(root, "rpm-sources.txt")
    stanzas, errors = parse(path)
    tags = {}
    for s in stanzas:
        tag = s.get("Source-Tag")
        if s.kind != "Source-Tag" or not re.fullmatch(r"[A-Za-z0-9_.\-]+", tag):
            errors.append("%s: a 'Source-Tag: NAME' stanza expected" % s.where())
            continue
        if not s.text("Citation"):
            errors.append("%s: [%s] has no Citation" % (s.where(), tag))
        if tag in tags:
            errors.append("%s: [%s] defined twice" % (s.where(), tag))
        tags[tag] = s
    return tags, errors


def check_stanza(s, tags):
    """Everything every stanza owes: its fields, a source whose tags exist, a status, a reason."""
    errs = []
    kind = s.kind
    if kind not in KINDS:
        return ["%s: unknown stanza kind %r (first field must be one of %s)" % (s.where(), kind, ", ".join(KINDS))]
    allowed, required = KINDS[kind]
    for k in s.order:
        if k not in allowed:
            errs.append("%s: field %s is not allowed in a %s stanza (allowed: %s)" % (s.where(k), k, kind, ", ".join(allowed)))
    for k in required:
        if not s.text(k):
            errs.append("%s: %s stanza %r has no %s" % (s.where(), kind, s.get(kind), k))
    if kind == "Source-Tag":
        return errs
    src = s.text("Source")
    cited = TAG_RE.findall(src)
    if src and not cited:
        errs.append("%s: Source %r cites no [tag]" % (s.where("Source"), src))
    for t in cited:
        if t not in tags:
            errs.append("%s: Source cites [%s], which rpm-sources.txt does not define" % (s.where("Source"), t))
    status = s.get("Status")
    if status and status not in ("CONFIRMED", "INFERRED"):
        errs.append("%s: Status %r must be CONFIRMED or INFERRED" % (s.where("Status"), status))
    if status == "INFERRED" and not s.text("Reason"):
        errs.append("%s: %s %r is INFERRED without a Reason" % (s.where(), kind, s.get(kind)))
    for k in ("Reason", "Confirmed"):
        for t in sorted(set(TAG_RE.findall(s.text(k)))):
            if t not in tags:
                errs.append("%s: %s cites [%s], which rpm-sources.txt does not define" % (s.where(k), k, t))
    return errs


def check_package(s, dist):
    errs = []
    if not re.fullmatch(r"[0-9]+", s.get("Epoch")):
        errs.append("%s: Epoch %r is not a number (0: none)" % (s.where("Epoch"), s.get("Epoch")))
    if s.get("Arch") not in ARCHES:
        errs.append("%s: Arch %r must be one of %s" % (s.where("Arch"), s.get("Arch"), ", ".join(sorted(ARCHES))))
    if dist == NO_DIST and re.search(r"\.el[0-9]+$", s.get("Release")):
        errs.append("%s: Release %r carries a dist tag in a Dist: none repository" % (s.where("Release"), s.get("Release")))
    elif dist and dist != NO_DIST and not s.get("Release").endswith("." + dist):
        errs.append("%s: Release %r does not end in .%s (the repository's Dist)" % (s.where("Release"), s.get("Release"), dist))
    for k in RELATION_FIELDS:
        for e in s.list(k):
            if not (RELATION_RE.match(e) or (k == "Supplements" and RICH_RE.match(e))):
                errs.append("%s: %s entry %r is not 'name [op [epoch:]version[-release]]'" % (s.where(k), k, e))
    role, *args = s.get("Payload").split() or [""]
    if role not in PAYLOADS:
        errs.append("%s: Payload role %r unknown (known: %s)" % (s.where("Payload"), role, ", ".join(PAYLOADS)))
    elif PAYLOADS[role] >= 0 and len(args) != PAYLOADS[role] or PAYLOADS[role] < 0 and not args:
        errs.append("%s: Payload %r takes %s argument(s)" % (s.where("Payload"), role,
                                                            "one or more" if PAYLOADS[role] < 0 else PAYLOADS[role]))
    return errs


class Repo:
    """A repository file, following Same-As / Retarget (the rhel8 slug rebuilds rhel9's graph)."""

    def __init__(self, path):
        self.path = path
        self.stanzas, self.errors = parse(path)
        head = [s for s in self.stanzas if s.kind == "Repository"]
        self.head = head[0] if head else None
        self.dist = self.head.get("Dist") if self.head else ""
        self.packages = [s for s in self.stanzas if s.kind == "Package"]
        same = self.head.get("Same-As") if self.head else ""
        if same:
            target = os.path.normpath(os.path.join(os.path.dirname(path), same))
            if not os.path.isfile(target):
                self.errors.append("%s: Same-As %s does not exist" % (self.head.where("Same-As"), same))
                return
            frm, to = (self.head.get("Retarget").split() + ["", ""])[:2]
            with open(target, encoding="utf-8") as f:
                text = f.read()
            if frm:
                text = re.sub(r"\." + re.escape(frm) + r"\b", "." + to, text).replace("Dist: " + frm, "Dist: " + to)
            base, errs = parse(target, text)
            self.errors += errs
            self.packages = [s for s in base if s.kind == "Package"]
            self.same_as = target

    def modules_file(self):
        src = getattr(self, "same_as", self.path)
        m = src[:-len(".txt")] + ".modules.txt"
        return m if os.path.isfile(m) else None


def check_dir(root):
    tags, errors = load_tags(root)
    files = []
    for d in sorted(os.listdir(root)):
        sub = os.path.join(root, d)
        if os.path.isdir(sub) and d.startswith("rhel"):
            files += [os.path.join(sub, f) for f in sorted(os.listdir(sub)) if f.endswith(".txt")]
    if not files:
        errors.append("%s: no rpm fixture (rhel*/*.txt) found" % root)
    counts = {}
    for path in files:
        if path.endswith(".modules.txt"):
            continue
        repo = Repo(path)
        errors += repo.errors
        if repo.head is None:
            errors.append("%s: no Repository stanza" % path)
        for s in repo.stanzas:
            errors += check_stanza(s, tags)
            if s.kind == "Package":
                errors += check_package(s, repo.dist)
        seen = {}
        for s in repo.packages:
            nevra = (s.get("Package"), s.get("Epoch"), s.get("Version"), s.get("Release"), s.get("Arch"))
            if nevra in seen:
                errors.append("%s: %s duplicates the rpm of %s" % (s.where(), "-".join(nevra), seen[nevra]))
            seen[nevra] = s.where()
            if s in repo.stanzas:
                counts[s.get("Status")] = counts.get(s.get("Status"), 0) + 1
        mod = repo.modules_file()
        if mod and not getattr(repo, "same_as", None):
            stanzas, errs = parse(mod)
            errors += errs
            names = {s.get("Package") for s in repo.packages}
            branches = {s.get("Version").split(".")[0] for s in repo.packages}
            for s in stanzas:
                errors += check_stanza(s, tags)
                if s.kind == "Module":
                    for k in ("Artifacts", "Profile-default", "Profile-fm", "Profile-ks"):
                        for n in s.list(k):
                            if n not in names:
                                errors.append("%s: %s names %r, which %s does not carry" % (s.where(k), k, n, os.path.basename(path)))
                    if s.get("Branch") not in branches | {"newest"}:
                        errors.append("%s: Branch %r has no build in %s" % (s.where("Branch"), s.get("Branch"), os.path.basename(path)))
    return errors, counts


def cmd_check(root):
    errors, counts = check_dir(root)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print("rpm fixtures: %d problem(s)" % len(errors), file=sys.stderr)
        return 1
    print("rpm fixtures: %s rpm stanzas checked (%s)" % (sum(counts.values()),
          ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))))
    return 0


SELF_TEST_GOOD = """Package: foo
Epoch: 3
Version: 1.0
Release: 1.el9
Arch: x86_64
Requires: bar(x86-64) = 3:1.0-1.el9
Payload: none
Source: [T]
Status: INFERRED
Reason: because
"""
SELF_TEST_BAD = {
    "no Source": ("Source: [T]\n", "", "has no Source"),
    "no Status": ("Status: INFERRED\n", "", "has no Status"),
    "INFERRED without Reason": ("Reason: because\n", "", "INFERRED without a Reason"),
    "unknown Status": ("Status: INFERRED", "Status: GUESSED", "must be CONFIRMED or INFERRED"),
    "undefined tag": ("Source: [T]", "Source: [NOPE]", "does not define"),
    "Source without a tag": ("Source: [T]", "Source: a blog", "cites no [tag]"),
    "bad relation": ("= 3:1.0-1.el9", "== 3:1.0", "is not 'name"),
    "unknown payload": ("Payload: none", "Payload: magic", "Payload role"),
    "dcgm-plugins without its CUDA major": ("Payload: none", "Payload: dcgm-plugins", "takes 1 argument"),
    "a malformed soname dependency": ("bar(x86-64) = 3:1.0-1.el9", "libnuma.so.1)(64bit)", "is not 'name"),
}


def cmd_self_test():
    tags = {"T": None}
    failed = 0
    st, errs = parse("<good>", SELF_TEST_GOOD)
    problems = errs + check_stanza(st[0], tags) + check_package(st[0], "el9")
    if problems:
        print("self-test: the good sample was refused: %s" % problems, file=sys.stderr)
        failed += 1
    for label, (old, new, want) in SELF_TEST_BAD.items():
        text = SELF_TEST_GOOD.replace(old, new)
        st, errs = parse("<%s>" % label, text)
        problems = errs + check_stanza(st[0], tags) + check_package(st[0], "el9")
        if not any(want in p for p in problems):
            print("self-test: %s was not refused (got %s)" % (label, problems), file=sys.stderr)
            failed += 1
    # A repository without a dist tag (NVIDIA's DCGM rpms): release "1" passes, ".el9" is refused.
    plain = SELF_TEST_GOOD.replace("Release: 1.el9", "Release: 1").replace(
        "bar(x86-64) = 3:1.0-1.el9", "bar(x86-64) = 3:1.0-1\nRecommends: libnuma.so.1()(64bit)")
    st, errs = parse("<no dist>", plain)
    if errs + check_package(st[0], NO_DIST):
        print("self-test: a release without dist tag was refused in a Dist: none repository", file=sys.stderr)
        failed += 1
    st, errs = parse("<no dist, el9>", SELF_TEST_GOOD)
    if not any("carries a dist tag" in p for p in check_package(st[0], NO_DIST)):
        print("self-test: a .el9 release was not refused in a Dist: none repository", file=sys.stderr)
        failed += 1
    print("self-test: %d of %d broken samples refused" % (len(SELF_TEST_BAD) - failed, len(SELF_TEST_BAD)))
    return 1 if failed else 0


def key(s):
    return "%s-%s-%s" % (s.get("Package"), s.get("Version"), s.get("Release"))


def filename(s):
    return "%s-%s-%s.%s.rpm" % (s.get("Package"), s.get("Version"), s.get("Release"), s.get("Arch"))


def load_repo(path):
    repo = Repo(path)
    if repo.errors:
        sys.exit("\n".join(repo.errors))
    return repo


def cmd_plan(path):
    for s in load_repo(path).packages:
        print("\t".join([key(s), s.get("Package"), s.get("Epoch"), s.get("Version"), s.get("Release"),
                         s.get("Arch"), s.get("Payload")]))
    return 0


def read_lines(path):
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def spec_for(group, stage, n):
    """One rpmbuild spec whose subpackages are the group's rpms (distinct names), each with its own
    epoch, version, release, arch and relation fields: one rpmbuild run for many stand-ins."""
    out = ["Name: e2e-fixture-bundle-%d" % n, "Version: 1", "Release: 1",
           "Summary: gpuprov e2e stand-in bundle", "License: gpuprov e2e stand-in", "AutoReqProv: no",
           "", "%description", "Not built: its subpackages are the stand-ins.", ""]
    for s in group:
        name = s.get("Package")
        out += ["%%package -n %s" % name, "Summary: gpuprov e2e stand-in of %s" % name,
                "License: gpuprov e2e stand-in", "URL: https://developer.nvidia.com/cuda-zone", "AutoReqProv: no"]
        if s.get("Epoch") != "0":
            out.append("Epoch: %s" % s.get("Epoch"))
        out += ["Version: %s" % s.get("Version"), "Release: %s" % s.get("Release")]
        if s.get("Arch") == "noarch":
            out.append("BuildArch: noarch")
        for k in RELATION_FIELDS:
            out += ["%s: %s" % (k, e) for e in s.list(k)]
        out += ["", "%%description -n %s" % name, "gpuprov e2e stand-in package (not NVIDIA software).", ""]
    out += ["%install", "mkdir -p %{buildroot}"]
    for s in group:
        root = os.path.join(stage, key(s), "root")
        if os.path.isdir(root) and os.listdir(root):
            out.append("cp -a '%s'/. %%{buildroot}/" % root)
    out.append("")
    for s in group:
        d = os.path.join(stage, key(s))
        root = os.path.join(d, "root")
        configs = set(read_lines(os.path.join(d, "configs")))
        out.append("%%files -n %s" % s.get("Package"))
        out += ["%%dir %s" % x for x in read_lines(os.path.join(d, "dirs"))]
        files = []
        for base, dirs, names in os.walk(root):
            for nm in names + [x for x in dirs if os.path.islink(os.path.join(base, x))]:
                files.append("/" + os.path.relpath(os.path.join(base, nm), root))
        for f in sorted(files):
            out.append(("%%config(noreplace) %s" if f in configs else "%s") % f)
        ldconfig = os.path.isfile(os.path.join(d, "ldconfig"))
        for phase in ("post", "preun", "postun"):
            body = read_lines(os.path.join(d, phase))
            if ldconfig and phase != "preun":
                body.append("/sbin/ldconfig")
            if body:
                out += ["", "%%%s -n %s" % (phase, s.get("Package"))] + body
        out.append("")
    return "\n".join(out) + "\n"


def cmd_specs(path, stage, outdir):
    groups = []
    for s in load_repo(path).packages:
        for g in groups:
            if all(x.get("Package") != s.get("Package") for x in g):
                g.append(s)
                break
        else:
            groups.append([s])
    os.makedirs(outdir, exist_ok=True)
    tag = re.sub(r"[^A-Za-z0-9]+", "-", os.path.basename(path))
    for n, g in enumerate(groups):
        spec = os.path.join(outdir, "%s-%d.spec" % (tag, n))
        with open(spec, "w", encoding="utf-8") as f:
            f.write(spec_for(g, stage, n))
        print(spec)
    return 0


def cmd_modules(mod_path):
    repo_path = mod_path[:-len(".modules.txt")] + ".txt"
    repo = load_repo(repo_path)
    stanzas, errs = parse(mod_path)
    if errs:
        sys.exit("\n".join(errs))
    dist = repo.dist
    branches = sorted({s.get("Version").split(".")[0] for s in repo.packages}, key=int)
    docs = []
    for s in stanzas:
        if s.kind == "Module":
            br = branches[-1] if s.get("Branch") == "newest" else s.get("Branch")
            builds = [p for p in repo.packages if p.get("Version").split(".")[0] == br]
            version = "20261201000000"  # genmodules: the generation time stamp, %Y%m%d%H%M%S
            # genmodules' context: md5(name + stream + version + distro)[:10]
            context = hashlib.md5(("nvidia-driver" + s.get("Stream") + version + dist).encode()).hexdigest()[:10]
            doc = ["---", "document: modulemd", "version: 2", "data:", "    name: %s" % s.get("Module"),
                   "    stream: \"%s\"" % s.get("Stream"), "    version: %s" % version, "    context: %s" % context,
                   "    arch: x86_64", "    summary: Nvidia driver for %s branch" % s.get("Stream"),
                   "    description: >-", "        gpuprov e2e stand-in of NVIDIA's nvidia-driver module stream.",
                   "    license:", "        module:", "            - MIT", "    artifacts:", "        rpms:"]
            arts = set(s.list("Artifacts"))
            for p in sorted(builds, key=lambda p: (p.get("Package"), p.get("Version"))):
                if p.get("Package") in arts:
                    doc.append("            - %s-%s:%s-%s.%s" % (p.get("Package"), p.get("Epoch"), p.get("Version"),
                                                                p.get("Release"), p.get("Arch")))
            doc += ["    profiles:"]
            for prof in ("default", "src", "fm", "ks"):
                names = s.list("Profile-" + prof)
                if names:
                    doc += ["        %s:" % prof, "            rpms:"] + ["                - %s" % n for n in names]
            docs.append("\n".join(doc + ["..."]))
        elif s.kind == "Module-Defaults":
            doc = ["---", "document: modulemd-defaults", "version: 1", "data:",
                   "    module: %s" % s.get("Module-Defaults"), "    stream: \"%s\"" % s.get("Default-Stream"),
                   "    profiles:"]
            for e in s.list("Default-Profiles"):
                stream, prof = [x.strip() for x in e.split(":", 1)]
                doc.append("        \"%s\": [%s]" % (stream, prof))
            docs.append("\n".join(doc + ["..."]))
    print("\n".join(docs))
    return 0


def newest(repo, name):
    cands = [s for s in repo.packages if s.get("Package") == name]
    if not cands:
        sys.exit("%s: no package %s" % (repo.path, name))
    return max(cands, key=lambda s: [int(x) if x.isdigit() else x for x in re.split(r"[.\-]", s.get("Version"))])


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "check" and len(args) == 1:
        return cmd_check(args[0])
    if cmd == "self-test" and not args:
        return cmd_self_test()
    if cmd == "plan" and len(args) == 1:
        return cmd_plan(args[0])
    if cmd == "specs" and len(args) == 3:
        return cmd_specs(*args)
    if cmd == "modules" and len(args) == 1:
        return cmd_modules(args[0])
    if cmd == "field" and len(args) == 3:
        for e in newest(load_repo(args[0]), args[1]).list(args[2]):
            print(e)
        return 0
    if cmd == "names" and len(args) == 1:
        for s in load_repo(args[0]).packages:
            print(filename(s))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
