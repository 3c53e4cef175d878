#!/usr/bin/env bash
# Installs what gpuprov needs to build (and, with --test, to run every test) from Debian 12
# packages. Only missing packages are installed, so a second run costs one dpkg-query.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(cmake ninja-build g++ pkg-config libcli11-dev libyaml-cpp-dev libfmt-dev libspdlog-dev
      libcurl4-openssl-dev libssl-dev zlib1g-dev nlohmann-json3-dev)
if [[ "${1:-}" == "--test" ]]; then
    pkgs+=(libgtest-dev googletest gpgv gpg prometheus cloud-init python3-yaml python3-jsonschema)
    # ccache: scripts/test.sh keeps its cache under /var/cache (as the e2e roots), so CI's three
    # builds (native, ASan+UBSan, aarch64) recompile only what a change touched.
    pkgs+=(ccache)
    # The ASan+UBSan build and libFuzzer targets (scripts/sanitize.sh, scripts/fuzz.sh) and
    # clang-tidy (scripts/tidy.sh); libclang-rt holds the sanitizer and libFuzzer runtimes.
    pkgs+=(clang libclang-rt-14-dev clang-tidy)
    # The aarch64 cross build and its unit tests under qemu-user (scripts/build-arm64.sh; the
    # arm64 libraries come from scripts/sysroot.sh --deps, not from multiarch packages).
    pkgs+=(g++-aarch64-linux-gnu qemu-user-static)
    while read -r p; do
        [[ -n "$p" && "$p" != \#* ]] && pkgs+=("$p")
    done < tests/e2e/DEPS
fi

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}" >&2
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
