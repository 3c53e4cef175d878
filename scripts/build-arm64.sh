#!/usr/bin/env bash
# Cross-builds build-arm64/gpuprov, the aarch64 release binary (GH200, GB200, GB300 hosts), and
# the unit tests for aarch64, with Debian 12's cross toolchain (scripts/deps.sh --test installs
# g++-aarch64-linux-gnu and qemu-user-static). Linked as the x86_64 release binary is
# (cmake/GpuprovPortable.cmake): libstdc++ static, Debian 11's arm64 glibc as the link sysroot,
# held to glibc 2.28 by scripts/check-portable.sh. The arm64 -dev packages come from
# scripts/sysroot.sh --deps (fetched and unpacked, nothing installed on the host).
#   scripts/build-arm64.sh [cmake --build args...]
#   scripts/build-arm64.sh --test   build, then run the unit tests under qemu-user (ctest)
# GPUPROV_BUILD_TESTS=OFF builds the binary alone (scripts/package.sh --arch arm64).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-arm64
run_tests=0
if [[ "${1:-}" == "--test" ]]; then
    run_tests=1
    shift
fi
for tool in aarch64-linux-gnu-g++ qemu-aarch64-static; do
    command -v "$tool" >/dev/null || { echo "build-arm64.sh: $tool missing (scripts/deps.sh --test)" >&2; exit 2; }
done
deps=$(scripts/sysroot.sh --arch arm64 --deps)
sysroot=$(scripts/sysroot.sh --arch arm64)
launcher=()
if command -v ccache >/dev/null && [[ "${CCACHE_DISABLE:-0}" != "1" ]]; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
options=()
for opt in GPUPROV_WARNINGS_AS_ERRORS GPUPROV_BUILD_TESTS; do
    if [[ -n "${!opt:-}" ]]; then
        options+=("-D$opt=${!opt}")
    elif [[ ! -f $dir/CMakeCache.txt ]]; then
        options+=("-D$opt=ON")
    fi
done
# -O2 -DNDEBUG as the x86_64 release build (RelWithDebInfo) but without -g: nobody debugs the
# cross build on this machine, and debug info is about a third of the compile time and most of
# the objects' size (ccache, link). The shipped binary is stripped either way.
cmake -S . -B "$dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
    -DGPUPROV_TARGET_DEPS="$deps" -DGPUPROV_GLIBC_SYSROOT="$sysroot" "${launcher[@]}" \
    "${options[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "$@"
if [[ -f $dir/gpuprov ]]; then scripts/check-portable.sh "$dir/gpuprov" aarch64; fi
if ((run_tests)); then
    # Left to the native run, each for a reason of the emulation, not of aarch64:
    #  - LocalSystem.MissingProgramIsNotFound: qemu-user runs glibc's posix_spawn (clone with
    #    CLONE_VM|CLONE_VFORK) as a plain fork, so exec's ENOENT never reaches the parent: the
    #    child just exits 127;
    #  - CurlLibrary.TheNextCandidateLoadsWhenTheFirstIsMissing: no arm64 libcurl.so.4 is
    #    installed here (the cross toolchain's arm64 libraries are glibc and libstdc++ only);
    #  - the three HostileInput tests that bound a refusal by one second of wall time, which an
    #    emulated CPU on a shared machine does not keep.
    skip='^(LocalSystem\.MissingProgramIsNotFound|CurlLibrary\.TheNextCandidateLoadsWhenTheFirstIsMissing'
    skip+='|HostileInput\.(AnAliasBombIsRefusedAtItsFirstAnchor|AStrayTopLevelCommaIsRefusedNotLoopedOn'
    skip+='|ANonRegularFileIsRefusedWithoutReadingIt))$'
    ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" -E "$skip"
fi
