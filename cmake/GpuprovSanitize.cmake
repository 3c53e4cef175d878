# Sanitizer and fuzzing builds (clang). One build directory serves both: scripts/sanitize.sh
# configures build-san with GPUPROV_SANITIZE=address,undefined and GPUPROV_FUZZ=ON, so CI pays
# one extra build for the ASan+UBSan unit-test run and the short fuzz pass (scripts/fuzz.sh).
# Options are applied with add_compile_options before the areas are added, so every library,
# test and fuzz target is instrumented alike.
set(GPUPROV_SANITIZE "" CACHE STRING
    "Comma-separated -fsanitize= list for every target (e.g. address,undefined); empty: none")
option(GPUPROV_FUZZ "Build the libFuzzer targets under fuzz/ (clang only)" OFF)

if(GPUPROV_SANITIZE)
    add_compile_options(-fsanitize=${GPUPROV_SANITIZE} -fno-sanitize-recover=all
                        -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${GPUPROV_SANITIZE} -fno-sanitize-recover=all)
endif()

if(GPUPROV_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "GPUPROV_FUZZ=ON needs clang (libFuzzer): "
                            "configure with -DCMAKE_CXX_COMPILER=clang++")
    endif()
    # Coverage feedback for libFuzzer in every library the targets link; only the fuzz
    # executables link libFuzzer itself (-fsanitize=fuzzer, fuzz/CMakeLists.txt), so the unit
    # tests in the same build keep their own main().
    add_compile_options(-fsanitize=fuzzer-no-link)
endif()
