#pragma once
// The option and info names of curl < 7.85 (CURLOPT_PROTOCOLS) are the fallback for old
// libcurls; curl.h marks them deprecated.
#define CURL_DISABLE_DEPRECATION
#include <curl/curl.h>
#include <string>
#include <vector>

namespace gpuprov::detail {

/// The part of libcurl's easy interface gpuprov calls, resolved from a library opened with
/// dlopen: the binary links no libcurl, so commands that never fetch (facts, status, verify, a
/// converged apply) load neither it nor its TLS stack, and one binary runs on every distro,
/// whichever libcurl.so.4 flavour and version (7.61 on EL 8 and later) it ships.
struct CurlApi {
    CURLcode (*global_init)(long flags) = nullptr;
    CURL* (*easy_init)() = nullptr;
    CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
    CURLcode (*easy_perform)(CURL*) = nullptr;
    CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
    void (*easy_cleanup)(CURL*) = nullptr;
    const char* (*easy_strerror)(CURLcode) = nullptr;
};

struct CurlLoad {
    CurlApi api;
    bool ok = false;
    std::string soname; ///< the library that loaded
    std::string error;  ///< why none did: every name tried, and what to install
};

/// Opens the first of `sonames` that loads and exports every function of CurlApi. The handle
/// stays open for the life of the process.
CurlLoad load_curl(const std::vector<std::string>& sonames);

/// The process's libcurl, loaded and curl_global_init'ed on the first call: libcurl.so.4
/// (OpenSSL flavour on Debian/Ubuntu, the only one on EL and SUSE), else Debian's GnuTLS flavour.
const CurlLoad& curl_library();

} // namespace gpuprov::detail
