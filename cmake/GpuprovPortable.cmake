# The release binary: one build/gpuprov for every supported distro (issue 10). The areas compile
# as always; only the executable's link differs:
#  - libstdc++ linked statically (the third-party libraries are static already: GpuprovDeps);
#    libgcc_s stays shared (every glibc system has it; its static twin needs _dl_find_object,
#    glibc 2.35);
#  - glibc resolved against GPUPROV_GLIBC_SYSROOT (scripts/sysroot.sh: Debian 11's libc6-dev),
#    so no symbol binds to a version newer than that libc has, and the start files are the
#    pre-2.34 ones;
#  - src/portable supplies what the static libstdc++ (built against glibc 2.36) expects of
#    glibc and the sysroot's does not have.
# scripts/check-portable.sh verifies the result: glibc symbol versions <= 2.28 and only glibc's
# own libraries (and libgcc_s) as NEEDED.
set(GPUPROV_GLIBC_SYSROOT "" CACHE PATH
    "Link build/gpuprov against this glibc sysroot (scripts/sysroot.sh) for the release binary")

# Every symbol bound at start (the binary has few dynamic symbols left) and read-only after.
target_link_options(gpuprov PRIVATE -static-libstdc++ LINKER:-z,relro,-z,now)
if(GPUPROV_GLIBC_SYSROOT)
    # Debian's multiarch directory of the target (x86_64-linux-gnu, or aarch64-linux-gnu in the
    # cross build: cmake/aarch64-linux-gnu.cmake).
    set(GPUPROV_MULTIARCH ${CMAKE_LIBRARY_ARCHITECTURE})
    if(NOT GPUPROV_MULTIARCH)
        set(GPUPROV_MULTIARCH x86_64-linux-gnu)
    endif()
    if(NOT EXISTS "${GPUPROV_GLIBC_SYSROOT}/usr/lib/${GPUPROV_MULTIARCH}/libc_nonshared.a")
        message(FATAL_ERROR "GPUPROV_GLIBC_SYSROOT=${GPUPROV_GLIBC_SYSROOT} holds no libc6-dev "
                            "(run scripts/sysroot.sh and pass the path it prints)")
    endif()
    add_subdirectory(src/portable)
    target_link_libraries(gpuprov PRIVATE gpuprov_glibc_compat)
    # --sysroot alone is not enough: Debian's gcc searches its own multiarch directory (the
    # host's crt files and libc.so) first; -B and -L put the sysroot's ahead of it.
    set(libdir ${GPUPROV_GLIBC_SYSROOT}/usr/lib/${GPUPROV_MULTIARCH})
    target_link_options(gpuprov PRIVATE --sysroot=${GPUPROV_GLIBC_SYSROOT} -B${libdir}/
                        -L${libdir} -L${GPUPROV_GLIBC_SYSROOT}/lib/${GPUPROV_MULTIARCH}
                        # Before glibc 2.34 threads and dlopen live in their own libraries.
                        LINKER:--push-state,--no-as-needed -lpthread -ldl LINKER:--pop-state
                        # The host's libgcc_s.so.1 wants glibc 2.35; the one on the target
                        # distro matches that distro's glibc.
                        LINKER:--allow-shlib-undefined)
    # Relink when the sysroot changes.
    set_property(TARGET gpuprov APPEND PROPERTY LINK_DEPENDS
                 ${GPUPROV_GLIBC_SYSROOT}/usr/lib/${GPUPROV_MULTIARCH}/libc_nonshared.a)
endif()
