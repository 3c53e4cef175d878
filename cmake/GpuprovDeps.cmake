# Third-party libraries, all linked statically, so the binary needs no library soname that one
# distribution ships and another does not (issue 10). Debian 12 ships .a files for yaml-cpp,
# OpenSSL and zlib; fmt and spdlog ship only shared objects, so their implementation is compiled
# here from the headers their -dev packages install (src/deps). libcurl is not linked at all:
# src/system/curl_library.cpp loads libcurl.so.4 when a command first fetches.
#
# Debian 12 packages: libcli11-dev libyaml-cpp-dev libfmt-dev libspdlog-dev libcurl4-openssl-dev
# (headers only) libssl-dev zlib1g-dev nlohmann-json3-dev libgtest-dev.
find_package(nlohmann_json CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 CONFIG REQUIRED)

# A build directory configured before the static link cached the shared libraries' paths.
foreach(cached OPENSSL_CRYPTO_LIBRARY OPENSSL_SSL_LIBRARY ZLIB_LIBRARY_RELEASE ZLIB_LIBRARY_DEBUG)
    if(${cached} MATCHES "\\.so")
        unset(${cached} CACHE)
    endif()
endforeach()
set(OPENSSL_USE_STATIC_LIBS ON)
find_package(OpenSSL REQUIRED)
set(ZLIB_USE_STATIC_LIBS ON)
find_package(ZLIB REQUIRED)
# Debian puts OpenSSL's configuration.h in the multiarch include directory, which a native
# compiler searches by itself and the cross compiler (cmake/aarch64-linux-gnu.cmake) does not.
if(CMAKE_CROSSCOMPILING AND CMAKE_LIBRARY_ARCHITECTURE)
    set_property(TARGET OpenSSL::Crypto APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                 ${OPENSSL_INCLUDE_DIR}/${CMAKE_LIBRARY_ARCHITECTURE})
endif()

# yaml-cpp's CMake package names only the shared library.
find_path(GPUPROV_YAML_CPP_INCLUDE_DIR yaml-cpp/yaml.h REQUIRED)
find_library(GPUPROV_YAML_CPP_STATIC NAMES libyaml-cpp.a REQUIRED)
add_library(yaml-cpp STATIC IMPORTED)
set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${GPUPROV_YAML_CPP_STATIC}
                      INTERFACE_INCLUDE_DIRECTORIES ${GPUPROV_YAML_CPP_INCLUDE_DIR})

# libcurl: the header for the types and constants; the library is opened at run time.
find_path(GPUPROV_CURL_INCLUDE_DIR curl/curl.h REQUIRED)
add_library(gpuprov_curl_headers INTERFACE)
target_include_directories(gpuprov_curl_headers SYSTEM INTERFACE ${GPUPROV_CURL_INCLUDE_DIR})
target_link_libraries(gpuprov_curl_headers INTERFACE ${CMAKE_DL_LIBS})

add_subdirectory(src/deps)
