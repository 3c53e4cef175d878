#!/usr/bin/env bash
# EL package: scripts/package.sh's .rpm installs with dnf into the Rocky 9 root, its automatic
# requires met only by what EL 9's glibc/libgcc/libcurl provide (el_announce_libs); `rpm -V` is
# clean, the man page, completion and logrotate files are where EL's tools look; /usr/bin/gpuprov
# runs and plans the e2e profile against the rpm mirror, showing the key it trusts; `rpm -e`
# removes every file again.
set -euo pipefail
# shellcheck source=lib/scenario_el.sh
source "$(dirname "$0")/../lib/scenario_el.sh"
el_scenario_begin clean --no-gpuprov

build_package
[[ -n "$RPM" ]] || { fail "scripts/package.sh built no .rpm (see $OUT/package.log)"; scenario_end; }
el_announce_libs
cp "$RPM" "$ROOT/root/"
rpm_in_root=/root/$(basename "$RPM")
in_root "$ROOT" 30 rpm -qp --requires "$rpm_in_root" >"$OUT/rpm-requires.txt" 2>&1 || true
check "the .rpm requires glibc symbols by version (automatic requires)" grep -q '^libc.so.6(GLIBC_' "$OUT/rpm-requires.txt"
check "the .rpm requires libcurl.so.4 (opened with dlopen)" grep -q '^libcurl.so.4()(64bit)' "$OUT/rpm-requires.txt"
# Only the installed rpm database resolves it: nothing may come from the mirror's repositories.
if DNF_TIMEOUT=120 dnf_in_root -y --disablerepo='*' install "$rpm_in_root" >"$OUT/dnf-install.log" 2>&1; then
    pass "dnf installs the .rpm with its requires met by the EL host's libraries"
else
    fail "dnf install of the .rpm: $(grep -E '^(Error|  - |Problem)' "$OUT/dnf-install.log" | head -n 8 | tr '\n' ';')"
fi
assert_eq "rpm -V gpuprov: every file as packaged" "" "$(in_root "$ROOT" 30 rpm -V gpuprov 2>&1)"
assert_package_files
assert_eq "rpm owns the binary" gpuprov "$(in_root "$ROOT" 10 rpm -qf --qf '%{NAME}\n' /usr/bin/gpuprov 2>&1)"
out=$(in_root "$ROOT" 10 /usr/bin/gpuprov --version 2>&1 || true)
assert_grep "/usr/bin/gpuprov --version" '^gpuprov [0-9]+\.[0-9]+\.[0-9]+$' <(printf '%s\n' "$out")

# The installed binary plans on this EL host: the rhel9 repository, the profile's pinned key.
gp plan "$PROFILE_IN_ROOT"
expect_rc "plan from the packaged binary" 0
assert_grep "plan names the repository and its key" \
    "^  key $(mirror_fingerprint) from https://127\.0\.0\.1:$MIRROR_PORT/compute/cuda/repos/rhel9/x86_64/D42D0685\.pub \(pinned by the profile\)$" "$GP_STDOUT"
gp plan "$PROFILE_IN_ROOT" --json
expect_rc "plan --json from the packaged binary" 0
plan_facts=$("$E2E_PYTHON" -c 'import json, sys
doc = json.load(open(sys.argv[1]))
r = [x for x in doc["repositories"] if x["name"] == "cuda"][0]
print(r["url"], r["key_fingerprint"], r["key_source"])
d = [s for s in doc["steps"] if s["id"] == "driver"][0]
print(" ".join(i["name"] + "=" + i["version"] for i in d["installs"]))' "$GP_STDOUT" 2>&1 || true)
assert_eq "plan --json: cuda's key and where it comes from" \
    "https://127.0.0.1:$MIRROR_PORT/compute/cuda/repos/rhel9/x86_64/ $(mirror_fingerprint) pinned by the profile" \
    "$(sed -n 1p <<<"$plan_facts")"
check "plan --json resolves the driver from the rhel9 stream" grep -q 'nvidia-open=3:580.178.04-1.el9' <<<"$(sed -n 2p <<<"$plan_facts")"

check "rpm -e gpuprov" in_root "$ROOT" 60 rpm -e gpuprov
assert_no_file "rpm -e removed the binary" "$ROOT/usr/bin/gpuprov"
assert_no_file "rpm -e removed the man page" "$ROOT/usr/share/man/man1/gpuprov.1.gz"
scenario_end
