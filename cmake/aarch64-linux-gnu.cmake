# Cross build for aarch64 (GH200, GB200, GB300 hosts) with Debian 12's cross toolchain
# (g++-aarch64-linux-gnu). scripts/build-arm64.sh passes GPUPROV_TARGET_DEPS, the arm64 -dev
# packages scripts/sysroot.sh --arch arm64 --deps unpacks, and GPUPROV_GLIBC_SYSROOT, the
# Debian 11 arm64 glibc the release binary links against (as the x86_64 one does).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The multiarch directory the -dev packages install into (usr/lib/aarch64-linux-gnu); CMake
# does not derive it from a cross compiler's implicit link directories.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# try_compile projects read this file again: hand them the same variable.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GPUPROV_TARGET_DEPS)
if(NOT GPUPROV_TARGET_DEPS)
    message(FATAL_ERROR "GPUPROV_TARGET_DEPS is not set: configure with scripts/build-arm64.sh "
                        "(it runs scripts/sysroot.sh --arch arm64 --deps)")
endif()
# Headers, libraries and CMake packages only from the target's packages: the host's /usr/include
# holds x86_64 headers (and glibc's), never to be mixed in. Programs are the host's.
set(CMAKE_FIND_ROOT_PATH ${GPUPROV_TARGET_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs the unit tests under qemu-user; -L: the cross toolchain's arm64 glibc and
# libstdc++ (libc6-arm64-cross) that the test binaries are linked against. No binfmt_misc needed.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
