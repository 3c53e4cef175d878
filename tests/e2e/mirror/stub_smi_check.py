#!/usr/bin/env python3
"""The e2e stand-in nvidia-smi (stubs/nvidia-smi) against real captures of the branches it
emulates (tests/fixtures/cmd/nvidia-smi, sources in tests/fixtures/cmd/README.md): for a GPU and
driver a capture shows, the stand-in's banner, GPU row, box rules and processes box must be the
capture's bytes, every row of its GPU box must have the capture's column layout, and its
`--query-gpu ... --format=csv` the capture's lines. Values that differ between two idle hosts
(temperature, power, memory in use) are not compared.

  stub_smi_check.py STUB FIXTURES-DIR     (ctest e2e_stub_nvidia_smi)

The stand-in reads NVIDIA_STUB_ROOT/{proc,sys,var} here instead of the e2e root's. Stdlib only.
"""
import os
import re
import subprocess
import sys
import tempfile

# driver, CUDA version the package builders substitute, PCI address, device id, capture,
# the capture's GPU index for that address, compute capability (B300: query-610-b300-compute-cap.csv;
# H200/H100: the exporter's query-all CSVs; GH200/GB200: src/data/nvidia-matrix.yaml).
CASES = [
    ("610.57.04", "13.3", "0000:1a:00.0", "0x3182", "table-610-b300-7gpu.txt", 0, "10.3"),
    ("590.48.01", "13.1", "0000:83:00.0", "0x2335", "table-590-h200-exporter.txt", 0, "9.0"),
    ("590.48.01", "13.1", "0000:00:09.0", "0x2330", "table-590-h100-exporter.txt", 0, "9.0"),
    ("580.95.05", "13.0", "0009:01:00.0", "0x2342", "table-580-gh200.txt", 0, "9.0"),
    ("580.126.09", "13.0", "0008:01:00.0", "0x2941", "table-580-gb200-4gpu.txt", 0, "10.0"),
]
DATE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d \d{4}       $")


def make_root(top, driver, address, device):
    os.makedirs(os.path.join(top, "proc/driver/nvidia"))
    with open(os.path.join(top, "proc/driver/nvidia/version"), "w") as f:
        f.write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build  "
                "(dvs-builder@U22-I3-AE18-09-1)  Wed Jun  3 12:00:00 UTC 2026\n" % driver)
    dev = os.path.join(top, "sys/bus/pci/devices", address)
    os.makedirs(dev)
    for name, value in (("vendor", "0x10de"), ("device", device), ("class", "0x030200"), ("numa_node", "0")):
        with open(os.path.join(dev, name), "w") as f:
            f.write(value + "\n")
    os.makedirs(os.path.join(top, "var/lib/nvidia-stub"))
    open(os.path.join(top, "var/lib/nvidia-stub/persistence"), "w").close()


def run(stub_text, top, *args):
    env = {"PATH": "/usr/bin:/bin", "NVIDIA_STUB_ROOT": top, "LC_ALL": "C"}
    return subprocess.run(["sh", "-c", stub_text, "nvidia-smi"] + list(args), env=env,
                          capture_output=True, text=True, check=True).stdout.split("\n")


def layout(line):
    """Where the column rules are: what a real table row keeps whatever its values."""
    return [i for i, ch in enumerate(line) if ch in "|+"]


def gpu_rows(lines, index):
    """The capture's rows of GPU `index`: from its first row to the rule after it."""
    start = next(i for i, l in enumerate(lines) if re.match(r"^\|\s+%d\s+\S" % index, l))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("+"))
    return lines[start:end + 1]


def check(stub_text, fixtures, case, errors):
    driver, cuda, address, device, capture, index, cc = case
    text = re.sub(r"^CUDA_VERSION=.*$", "CUDA_VERSION=" + cuda, stub_text, count=1, flags=re.M)
    with open(os.path.join(fixtures, capture)) as f:
        real = f.read().split("\n")
    with tempfile.TemporaryDirectory() as top:
        make_root(top, driver, address, device)
        got = run(text, top)
        query = run(text, top, "--query-gpu=driver_version,name,compute_cap", "--format=csv")

    def fail(what, want, have):
        errors.append("%s (%s): %s\n  real:  %r\n  stand-in: %r" % (capture, driver, what, want, have))

    if not DATE.match(got[0]):
        fail("date line", "Www Mmm dd hh:mm:ss yyyy + 7 spaces", got[0])
    # Banner box and column headings: the capture's bytes.
    for i in range(1, 8):
        if got[i] != real[i]:
            fail("line %d" % (i + 1), real[i], got[i])
    # The GPU's rows: the first one byte for byte (name, persistence, bus id, display, ECC),
    # the others with the capture's column layout.
    want, have = gpu_rows(real, index), gpu_rows(got, 0)
    if len(want) != len(have):
        fail("rows per GPU", len(want), len(have))
    elif have[0] != want[0]:
        fail("first GPU row", want[0], have[0])
    for w, h in zip(want, have):
        if layout(w) != layout(h):
            fail("column layout", w, h)
    # Memory total and power cap: what the capture shows for this model.
    cap = re.compile(r"/\s*(\d+W) \|\s+\d+MiB /\s*(\d+MiB)")
    if cap.search(want[1]) and (not cap.search(have[1]) or cap.search(want[1]).groups() != cap.search(have[1]).groups()):
        fail("power cap and memory total", want[1], have[1])
    # The processes box (no processes on an idle stand-in): the capture's bytes.
    if "Processes:" in "\n".join(real):
        p_real = real[real.index(next(l for l in real if "Processes:" in l)) - 1:]
        p_got = got[got.index(next(l for l in got if "Processes:" in l)) - 1:]
        if [l for l in p_real if l] != [l for l in p_got if l]:
            fail("processes box", p_real, p_got)
    # --format=csv: header with the canonical names, then the capture's values.
    model = re.search(r"\|\s+\d+\s+(.*?)\s+(On|Off)\s+\|", want[0]).group(1)
    expected = ["driver_version, name, compute_cap"]
    if query[0] != expected[0]:
        fail("csv header", expected[0], query[0])
    if query[1] != "%s, %s, %s" % (driver, model, cc):
        fail("csv row", "%s, %s, %s" % (driver, model, cc), query[1])


def self_test(stub_text, fixtures):
    """A stand-in that prints R580's banner on R610 must fail this check."""
    kinder = stub_text.replace("-ge 610", "-ge 999")
    errors = []
    check(kinder, fixtures, CASES[0], errors)
    return any("line 3" in e for e in errors)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        stub_text = f.read()
    errors = []
    for case in CASES:
        check(stub_text, sys.argv[2], case, errors)
    if not self_test(stub_text, sys.argv[2]):
        errors.append("self-test: an R610 stand-in with R580's banner passed")
    for e in errors:
        print("FAIL " + e)
    print("%d cases, %d failures" % (len(CASES), len(errors)))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
