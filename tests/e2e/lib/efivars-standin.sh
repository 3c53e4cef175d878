# shellcheck shell=bash
# gpuprov e2e: the UEFI variables shim and mokutil share, as the simulated host's efivarfs holds
# them (sourced by lib/mokutil-standin, lib/mokmanager-standin and lib/modprobe-standin inside
# the root). A variable is a file of 4 attribute bytes and its data, as efivarfs shows it.
# MokNew (the enrolment request mokutil --import writes), MokAuth (the password's hash) and
# MokListRT (what shim enrolled, as the kernel and mokutil read it) live under shim's GUID
# (lcp/mokutil src/mokutil.c: efi_guid_shim). Where shim stores each certificate in an
# EFI_SIGNATURE_LIST, the stand-in keeps the DER certificates back to back (each starts with
# its own SEQUENCE header, 30 82 LL LL, so the list can be split again).
EFIVARS=/sys/firmware/efi/efivars
SHIM_GUID=605dab50-e046-4300-abb6-3dd810dd8b23
GLOBAL_GUID=8be4df61-93ca-11d2-aa0d-00e098032b8c

hex_of() { od -An -v -tx1 "$1" | tr -d ' \n'; }
bytes_of_hex() { printf '%b' "$(printf '%s' "$1" | sed 's/../\\x&/g')"; }

# efivars_supported: efivarfs mounted (mokutil's efi_variables_supported).
efivars_supported() { [ -d "$EFIVARS" ] && [ -n "$(ls -A "$EFIVARS" 2>/dev/null)" ]; }

# secure_boot_on: SecureBoot's data byte is 1.
secure_boot_on() {
    local f=$EFIVARS/SecureBoot-$GLOBAL_GUID
    [ -f "$f" ] && [ "$(hex_of "$f" | cut -c9-10)" = 01 ]
}

# var_certs VAR: each DER certificate in shim's VAR, as lower-case hex, one a line.
var_certs() {
    local f=$EFIVARS/$1-$SHIM_GUID h len
    [ -f "$f" ] || return 0
    h=$(hex_of "$f")
    h=${h:8}
    while [ ${#h} -ge 8 ]; do
        [ "${h:0:4}" = 3082 ] || { echo "e2e efivars: $1 holds no DER certificate list" >&2; return 1; }
        len=$((16#${h:4:4} + 4))
        printf '%s\n' "${h:0:$((len * 2))}"
        h=${h:$((len * 2))}
    done
}

var_has_cert() { var_certs "$1" | grep -qx "$2"; } # VAR HEX

# var_append VAR HEX: the certificate added to VAR (created non-volatile, boot and runtime access).
var_append() {
    local f=$EFIVARS/$1-$SHIM_GUID
    [ -f "$f" ] || printf '\x07\x00\x00\x00' >"$f"
    bytes_of_hex "$2" >>"$f"
}
