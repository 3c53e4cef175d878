#!/usr/bin/env python3
"""OpenPGP oracle: gpuprov's key parser (parse_openpgp_key, through openpgp_probe) against
`gpg --show-keys --with-colons` on the same files.

    check_with_gpg.py PROBE [--fixtures] [--report FILE] PATH...

PATH is a file or a directory. With --fixtures a directory contributes its *.asc, *.pub and
*.gpg files (ctest openpgp_oracle over tests/fixtures); without it every regular file (a fuzz
corpus, scripts/openpgp-oracle.sh).

Per file, gpuprov and gpg must agree:
  - gpuprov accepts: gpg shows exactly one primary key, with the same fingerprint and key id;
  - gpuprov refuses: gpg shows no key, or gpuprov's reason is one of its deliberate policies
    (POLICY below: several primary keys, secret key material, a packet a transferable public
    key never holds, key versions other than 4, damaged armor, a truncated packet, a key
    packet gpg would fingerprint otherwise, a key packet gpg skips), which gpg does not apply;
    or gpg stopped at the packet gpuprov refused as one gpg cannot read, and shows only the
    keys before it.
Anything else is a mismatch; the exit status is 1 when there is one (2: usage, 77: no gpg).
Python 3 standard library only.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

# gpuprov refuses these on purpose where gpg still shows a key (docs/security.md): a key file
# is pinned trust material, so anything but one intact public key is refused, not repaired.
POLICY = [
    # only the pinned key may reach the keyring
    ("several primary keys", re.compile(r"holds \d+ primary keys")),
    ("secret key material", re.compile(r"secret key material|private key block")),
    ("packet not in a public key", re.compile(r"unexpected OpenPGP packet type|does not start with a public-key packet")),
    ("key version other than 4", re.compile(r"OpenPGP keys are (obsolete|not supported)")),
    # gpg skips characters that are not base64, a missing END line or a bad CRC, takes a BEGIN
    # line with bytes after its dashes, and shows what it could read; a damaged download is
    # refused instead
    ("malformed armor", re.compile(r"armored block \d+|no '-----BEGIN PGP PUBLIC KEY BLOCK-----' line")),
    # a key packet with bytes after its key material or an MPI with leading zero bits: gpg
    # hashes its own re-encoding, so its fingerprint is not the file's; refused as ambiguous
    ("fingerprint gpg computes otherwise", re.compile(r"gpg's fingerprint for this key is not the one")),
    # gpg skips a key packet it cannot read (an empty one, an unknown version) and shows the
    # other keys; a damaged key file is refused instead
    ("damaged key packet", re.compile(r"empty public-key packet|malformed v4 public-key packet"
                                      r"|material ends (inside|before)"
                                      r"|(curve OID|KDF parameters) field is malformed")),
    # gpg keeps a signature packet under 16 bytes unread and shows the key; refused as damage
    ("damaged signature packet", re.compile(r"shorter than any signature can be")),
    # a user ID certification before any user ID certifies nothing (RFC 4880 section 11.1); gpg
    # refuses the key only when the key made it itself, which is in subpackets gpuprov leaves to
    # gpgv, so gpuprov refuses it whoever made it
    ("certification before any user ID", re.compile(r"comes before any user ID")),
    # gpg shows the packets before a cut-off one; a cut-off download is refused instead
    ("truncated packet", re.compile(r"the key is truncated|truncated packet header|partial body length|indeterminate length")),
]


# gpuprov's reasons that are gpg's own limits (src/repo/openpgp.cpp).
GPG_CANNOT_READ = re.compile(r"gpg cannot read|gpg reads none|too short for gpg|malformed v4 public-key packet"
                             r"|empty public-key packet|is not an OpenPGP packet header")


def usage():
    print(__doc__, file=sys.stderr)
    sys.exit(2)


def files_of(paths, fixtures_only):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                for n in sorted(names):
                    f = os.path.join(d, n)
                    if not os.path.isfile(f) or os.path.islink(f):
                        continue
                    if fixtures_only and not n.endswith((".asc", ".pub", ".gpg")):
                        continue
                    out.append(f)
        elif os.path.isfile(p):
            out.append(p)
        else:
            print(f"check_with_gpg: no such file or directory: {p}", file=sys.stderr)
            sys.exit(2)
    return sorted(out)


def ours(probe, files):
    """{path: ("key", fpr) | ("refused", why)} from openpgp_probe, in batches."""
    result = {}
    for i in range(0, len(files), 200):
        batch = files[i:i + 200]
        r = subprocess.run([probe] + batch, capture_output=True, timeout=300)
        if r.returncode != 0:
            sys.exit(f"check_with_gpg: {probe} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
        for line in r.stdout.decode(errors="replace").splitlines():
            path, verdict, rest = (line.split("\t") + ["", ""])[:3]
            result[path] = (verdict, rest)
    return result


def gpg_view(home, path):
    """(primary keys as [(fpr, keyid)], gpg's first error line, whether gpg stopped reading)."""
    env = dict(os.environ, GNUPGHOME=home, LC_ALL="C")
    r = subprocess.run(["gpg", "--batch", "--no-tty", "--with-colons", "--show-keys", path],
                       capture_output=True, env=env, timeout=60)
    keys = []
    pending = None
    for line in r.stdout.decode(errors="replace").splitlines():
        f = line.split(":")
        if f[0] == "pub":
            pending = f[4].upper() if len(f) > 4 else ""
        elif f[0] == "fpr" and pending is not None:
            keys.append((f[9].upper() if len(f) > 9 else "", pending))
            pending = None
        elif f[0] != "fpr":
            pending = None
    err = ""
    stderr = r.stderr.decode(errors="replace")
    for line in stderr.splitlines():
        if line.startswith("gpg: ") and "keybox" not in line and "trustdb" not in line:
            err = line[5:].strip()
            break
    return keys, err, "read error" in stderr


def verdict(mine, keys, gpg_stopped):
    """(category, detail); category "agree" or "policy" is fine, anything else a mismatch."""
    kind, rest = mine
    if kind == "key":
        if len(keys) == 1 and keys[0][0] == rest and keys[0][1] == rest[-16:]:
            return "agree", "same key"
        if not keys:
            return "mismatch: gpuprov accepts, gpg shows no key", rest
        if len(keys) > 1:
            return "mismatch: gpuprov accepts one key, gpg shows several", rest
        return "mismatch: different fingerprint or key id", f"gpuprov {rest}, gpg {keys[0][0]} ({keys[0][1]})"
    if not keys:
        return "agree", "both refuse"
    # gpg stops at a packet it cannot read and still shows the keys before it; gpuprov refused
    # the file at that packet, saying gpg cannot read it.
    if gpg_stopped and GPG_CANNOT_READ.search(rest):
        return "policy", "gpg stops at the same packet"
    for name, rx in POLICY:
        if rx.search(rest):
            return "policy", name
    return "mismatch: gpuprov refuses, gpg shows a key", rest


def main(argv):
    if len(argv) < 2:
        usage()
    probe, args = argv[1], argv[2:]
    fixtures_only = False
    report = None
    paths = []
    while args:
        a = args.pop(0)
        if a == "--fixtures":
            fixtures_only = True
        elif a == "--report":
            report = args.pop(0) if args else usage()
        else:
            paths.append(a)
    if not paths:
        usage()
    if shutil.which("gpg") is None:
        print("SKIP: gpg is not installed (apt-get install gpg)", file=sys.stderr)
        sys.exit(77)
    files = files_of(paths, fixtures_only)
    if not files:
        sys.exit("check_with_gpg: no key files found under " + " ".join(paths))
    mine = ours(probe, files)
    counts = collections.Counter()
    lines = []
    mismatches = 0
    with tempfile.TemporaryDirectory(prefix="gpuprov-oracle-") as home:
        os.chmod(home, 0o700)
        for f in files:
            if f not in mine:
                sys.exit(f"check_with_gpg: openpgp_probe printed nothing for {f}")
            keys, err, stopped = gpg_view(home, f)
            cat, detail = verdict(mine[f], keys, stopped)
            if cat.startswith("mismatch"):
                mismatches += 1
                detail += f" | gpg: {err or ', '.join(k for k, _ in keys) or 'nothing'}"
            counts[cat if cat != "policy" else f"policy ({detail})"] += 1
            lines.append(f"{cat}\t{f}\t{detail}")
    if report:
        with open(report, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
    for line in lines:
        if line.startswith("mismatch") or len(files) <= 50:
            print(line)
    print(f"{len(files)} files: " + ", ".join(f"{n} {c}" for c, n in sorted(counts.items())))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
