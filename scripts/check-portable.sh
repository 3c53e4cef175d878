#!/usr/bin/env bash
# Fails unless BINARY runs on every supported distro as far as its ELF says: no glibc symbol
# version newer than the oldest supported glibc (EL 8: 2.28; Ubuntu 20.04: 2.31; Debian 11:
# 2.31), no libstdc++ symbol versions (it is linked in), no DT_NEEDED beyond glibc's own
# libraries and libgcc_s, no RPATH/RUNPATH, the standard program interpreter.
# ARCH (x86_64 or aarch64, default x86_64): the machine the binary must be built for, and the
# program interpreter that goes with it (scripts/build-arm64.sh checks the aarch64 binary).
# Usage: scripts/check-portable.sh [BINARY [ARCH]]   (default build/gpuprov x86_64)
set -euo pipefail
bin=${1:-$(dirname "$0")/../build/gpuprov}
arch=${2:-x86_64}
case $arch in
x86_64) machine='Advanced Micro Devices X86-64' interp_want='*lib64/ld-linux-x86-64so2' ;;
aarch64) machine='AArch64' interp_want='*lib/ld-linux-aarch64so1' ;;
*) echo "check-portable: unknown ARCH $arch (x86_64 or aarch64)" >&2; exit 2 ;;
esac
max_glibc=2.28
allowed_needed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
[[ -f "$bin" ]] || { echo "check-portable: no such file: $bin" >&2; exit 2; }
problems=()
got=$(readelf -h "$bin" | sed -n 's/^ *Machine: *//p')
[[ "$got" == "$machine" ]] || problems+=("is built for $got, not $arch")

# Every version a dynamic symbol asks for (GLIBC_2.2.5, GLIBCXX_3.4.30, ...), and the version
# needs of the ELF (objdump -p), which include versions no single symbol shows.
versions=$( {
    objdump -T "$bin" | grep -o '(\?\(GLIBC\|GLIBCXX\|CXXABI\)_[A-Z0-9_.]*' | tr -d '('
    objdump -p "$bin" | awk '/^Version References:/ {v = 1; next} v && NF == 4 {print $4}'
} | sort -u)
while read -r v; do
    [[ -n "$v" ]] || continue
    case $v in
    GLIBC_PRIVATE | GLIBC_ABI_*) problems+=("needs $v") ;;
    GLIBC_[0-9]*)
        if [[ $(printf '%s\n%s\n' "${v#GLIBC_}" "$max_glibc" | sort -V | tail -n 1) != "$max_glibc" ]]; then
            problems+=("needs $v > GLIBC_$max_glibc: $(objdump -T "$bin" | awk -v v="($v)" '$0 ~ v {print $NF}' | sort -u | tr '\n' ' ')")
        fi
        ;;
    GLIBCXX_* | CXXABI_*) problems+=("needs $v: libstdc++ is not linked statically") ;;
    esac
done <<<"$versions"

while read -r lib; do
    [[ "$lib" =~ $allowed_needed ]] || problems+=("NEEDED $lib is not on every supported distro (link it statically or dlopen it)")
done < <(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')

if objdump -p "$bin" | grep -qE '^ *(RPATH|RUNPATH) '; then
    problems+=("has an RPATH/RUNPATH: $(objdump -p "$bin" | awk '$1 ~ /RPATH|RUNPATH/ {print $2}')")
fi
interp=$(objdump -s -j .interp "$bin" 2>/dev/null | sed -n 's/^ [0-9a-f]* [0-9a-f ]*  //p' | tr -d '\n' | tr -d '.')
# shellcheck disable=SC2053 # a glob on purpose
[[ "$interp" == $interp_want* ]] ||
    problems+=("program interpreter is not glibc's standard one for $arch: $interp")

if ((${#problems[@]})); then
    echo "check-portable: $bin would not run on every supported distro:" >&2
    printf '  %s\n' "${problems[@]}" >&2
    exit 1
fi
newest=$(grep -o '^GLIBC_[0-9.]*$' <<<"$versions" | sort -V | tail -n 1)
echo "check-portable: $bin ok ($arch, newest ${newest:-no} glibc version, NEEDED: $(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}' | tr '\n' ' '))"
