#!/usr/bin/env bash
# e2e-timeout: 300
# (55) Secure Boot with NVIDIA's DKMS driver on Debian 12 (issue 23): the machine owner key path.
# The host boots through shim with Secure Boot on (efivars), its kernel enforces module
# signatures, and mokutil, MokManager, sign-file, dkms, modinfo and modprobe stand-ins behave
# like the real ones (lib/rootfs.sh rootfs_simulate_secure_boot, rootfs_simulate_mok): an import only requests the
# enrolment, the next boot's MokManager enrols the key when the console types the password, and
# the kernel refuses a module not signed by an enrolled key ("Key was rejected by service").
# The plan shows the secure-boot step and the reboot; apply generates the key pair, points DKMS
# at it (the module the transaction builds is signed), imports it, shows the one-time password
# once (never the log or the journal), and stops for exactly one reboot (exit 3) with the module
# not loaded. The reboot enrols the key (the password as apply showed it), the module loads, the
# resumed run converges, verify proves the signer, and nothing asks for a second reboot. A module
# re-signed by another key fails verify with the fix, and the fix works.
set -euo pipefail
# shellcheck source=lib/scenario.sh
source "$(dirname "$0")/../lib/scenario.sh"
scenario_begin clean
rootfs_simulate_secure_boot "$ROOT"
rootfs_simulate_mok "$ROOT"

MOK=/var/lib/gpuprov/mok
KEY=$MOK/mok.key
CERT=$MOK/mok.der
PASSWORD_FILE=$MOK/enrol-password
UNIT=/etc/systemd/system/gpuprov-resume.service
KERNEL=$(cat "$ROOT/proc/sys/kernel/osrelease")
KO=/lib/modules/$KERNEL/updates/dkms/nvidia.ko
mokutil_says() { in_root "$ROOT" 30 mokutil "$@" 2>&1 || true; }

gp facts --json
check "facts read Secure Boot from the efivar" "$E2E_PYTHON" -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1])).get("secure_boot") is True else 1)' "$GP_STDOUT"

# --- the plan: the secure-boot step, its import and the reboot ---------------------------------
gp plan "$PROFILE_IN_ROOT"
expect_rc "plan" 0
assert_grep "the plan has the secure-boot step" 'secure-boot' "$GP_STDOUT"
assert_grep "the plan imports the key with mokutil" "mokutil --import $CERT" "$GP_STDOUT"
assert_grep "the plan says a reboot follows for MokManager" 'a reboot follows: .*MokManager' "$GP_STDOUT"
assert_no_file "plan changes nothing: no key yet" "$ROOT$KEY"

# --- apply: key, DKMS signs, import pending, one reboot ----------------------------------------
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply stops for the enrolment reboot" 3
APPLY_OUT=$OUT/apply-1.out
cat "$GP_STDOUT" "$GP_STDERR" >"$APPLY_OUT"
check "the signing key is root-only (0600 root)" test "$(stat -c '%a %u' "$ROOT$KEY")" = "600 0"
check "the certificate is DER openssl reads" in_root "$ROOT" 10 openssl x509 -inform DER -in "$CERT" -noout
assert_grep "framework.conf: DKMS signs with gpuprov's key" "^mok_signing_key=\"$KEY\"$" "$ROOT/etc/dkms/framework.conf"
assert_grep "framework.conf: and its certificate" "^mok_certificate=\"$CERT\"$" "$ROOT/etc/dkms/framework.conf"
check "the password file is root-only (0600 root)" test "$(stat -c '%a %u' "$ROOT$PASSWORD_FILE")" = "600 0"
PASSWORD=$(tr -d '\n' <"$ROOT$PASSWORD_FILE")
check "a password was written" test -n "$PASSWORD"
assert_eq "the password is shown exactly once in apply's output" 1 "$(grep -oF -- "$PASSWORD" "$APPLY_OUT" | wc -l)"
assert_grep "shown with the file that keeps it" "$PASSWORD_FILE.*$PASSWORD" "$GP_STDOUT"
check "never in /var/log/gpuprov.log" bash -c "! grep -qF -- '$PASSWORD' '$ROOT/var/log/gpuprov.log'"
check "never in the journal" bash -c "! grep -qF -- '$PASSWORD' '$ROOT/var/lib/gpuprov/state.json'"
assert_grep "the log has the import" "mokutil --import $CERT" "$ROOT/var/log/gpuprov.log"
assert_eq "mokutil: pending until the reboot" "$CERT is already in the enrollment request" "$(mokutil_says --test-key "$CERT")"
assert_eq "nothing enrolled yet" "MokListRT is empty" "$(mokutil_says --list-enrolled)"
# Both sides as normalized_serial() compares them: hex without leading zeros. openssl prints
# whole bytes ("0EEA61..."), so a serial whose first nibble is 0 (one certificate in 16) keeps a
# leading 0 here that gpuprov's findings do not show.
SERIAL=$(in_root "$ROOT" 10 openssl x509 -inform DER -in "$CERT" -noout -serial | sed 's/^serial=0*//')
SIG_KEY=$(in_root "$ROOT" 10 modinfo -F sig_key nvidia)
assert_eq "DKMS signed the module with that key (modinfo sig_key = the certificate's serial)" \
    "$SERIAL" "$(printf '%s' "$SIG_KEY" | tr -d ':' | sed 's/^0*//')"
assert_eq "modinfo signer: the certificate's CN" "gpuprov DKMS module signing key" "$(in_root "$ROOT" 10 modinfo -F signer nvidia)"
assert_eq "modinfo sig_hashalgo: the kernel's" sha256 "$(in_root "$ROOT" 10 modinfo -F sig_hashalgo nvidia)"
check "the module did not load before the enrolment" test ! -e "$ROOT/proc/driver/nvidia/version"
assert_grep "the kernel refused it: Key was rejected by service" "could not insert 'nvidia': Key was rejected by service" "$ROOT/var/lib/gpuprov/state.json"
assert_eq "journal result" reboot-required "$(journal_result)"
assert_file "resume unit written" "$ROOT$UNIT"

# The same plan before the reboot: waits for it, no second import.
gp plan "$PROFILE_IN_ROOT"
check "no second import is planned" bash -c "! grep -q 'mokutil --import' '$GP_STDOUT'"
assert_grep "the plan names the console step" 'awaits enrolment' "$GP_STDOUT"

# --- the reboot: MokManager with the password apply showed; the module loads ---------------------
TYPED=$(sed -n 's/^.*not shown again): //p' "$APPLY_OUT" | head -n 1)
assert_eq "the operator reads the password from apply's output" "$PASSWORD" "$TYPED"
MOK_CONSOLE_PASSWORD=$TYPED rootfs_reboot "$ROOT"
assert_eq "MokManager enrolled it" "$CERT is already enrolled" "$(mokutil_says --test-key "$CERT")"
mokutil_says --list-enrolled >"$OUT/list-enrolled.txt"
assert_grep "mokutil --list-enrolled prints the certificate (X509_print)" 'Serial Number:' "$OUT/list-enrolled.txt"
assert_grep "issued to gpuprov's key" 'Issuer: CN *= *gpuprov DKMS module signing key' "$OUT/list-enrolled.txt"
check "the signed module loads at boot" grep -q "Kernel Module  $E2E_DRIVER_VERSION " "$ROOT/proc/driver/nvidia/version"
run_resume_unit "$UNIT"
assert_eq "journal result after the resumed run" "done" "$(journal_result)"
assert_no_file "resume unit removed" "$ROOT$UNIT"
check "no second reboot: the resumed run printed no reboot request" bash -c "! grep -qi 'reboot required' '$GP_STDERR'"

gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify after the enrolment" 0
check "verify proves the signer and the enrolment" "$E2E_PYTHON" -c 'import json, sys
c = {x["id"]: x for x in json.load(open(sys.argv[1]))["checks"]}
s, e = c.get("secure-boot.module-signer"), c.get("secure-boot.mok-enrolled")
sys.exit(0 if s and e and s["passed"] and e["passed"] and sys.argv[2].upper() in s["found"] else 1)' "$GP_STDOUT" "$SERIAL"
gp verify "$PROFILE_IN_ROOT"
assert_grep "verify's output names the signer check" 'secure-boot\.module-signer' "$GP_STDOUT"
gp apply "$PROFILE_IN_ROOT" --yes
expect_rc "apply again: nothing to do, no reboot" 0
check "still one MokListRT entry, no new import" test "$(mokutil_says --list-enrolled | grep -c '^\[key ')" = 1

# --- revert: the module re-signed by another key --------------------------------------------------
in_root "$ROOT" 30 openssl req -new -x509 -nodes -newkey rsa:2048 -subj "/CN=someone else/" \
    -keyout /tmp/other.key -outform DER -out /tmp/other.der >/dev/null 2>&1
head -n 5 "$ROOT$KO" >"$ROOT/tmp/unsigned.ko"
in_root "$ROOT" 30 "/usr/lib/linux-kbuild-${KERNEL%.*}/scripts/sign-file" sha256 /tmp/other.key /tmp/other.der \
    /tmp/unsigned.ko "$KO"
assert_eq "modinfo now reports the other signer" "someone else" "$(in_root "$ROOT" 10 modinfo -F signer nvidia)"
gp verify "$PROFILE_IN_ROOT" --json
expect_rc "verify with a module signed by another key" 1
check "the signer check fails naming the key and the fix" "$E2E_PYTHON" -c 'import json, sys
c = {x["id"]: x for x in json.load(open(sys.argv[1]))["checks"]}["secure-boot.module-signer"]
sys.exit(0 if not c["passed"] and "not " + sys.argv[2].upper() in c["found"] and "dkms autoinstall" in c["fix"] else 1)' "$GP_STDOUT" "$SERIAL"
in_root "$ROOT" 120 dkms autoinstall --force >"$OUT/dkms-fix.log" 2>&1 || true
gp verify "$PROFILE_IN_ROOT"
expect_rc "the fix (dkms autoinstall --force re-signs with gpuprov's key) passes verify" 0
scenario_end
