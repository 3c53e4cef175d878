#include "http_curl.hpp"

#include <dlfcn.h>

namespace gpuprov::detail {

namespace {

template <typename Fn> bool resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
    void* sym = ::dlsym(handle, name);
    if (sym == nullptr) {
        missing = name;
        return false;
    }
    fn = reinterpret_cast<Fn>(sym);
    return true;
}

} // namespace

CurlLoad load_curl(const std::vector<std::string>& sonames) {
    CurlLoad load;
    std::string tried;
    for (const auto& soname : sonames) {
        void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = ::dlerror();
            tried += "\n  " + (why != nullptr ? std::string(why) : soname + ": not found");
            continue;
        }
        CurlApi api;
        std::string missing;
        if (resolve(handle, "curl_global_init", api.global_init, missing) &&
            resolve(handle, "curl_easy_init", api.easy_init, missing) &&
            resolve(handle, "curl_easy_setopt", api.easy_setopt, missing) &&
            resolve(handle, "curl_easy_perform", api.easy_perform, missing) &&
            resolve(handle, "curl_easy_getinfo", api.easy_getinfo, missing) &&
            resolve(handle, "curl_easy_cleanup", api.easy_cleanup, missing) &&
            resolve(handle, "curl_easy_strerror", api.easy_strerror, missing)) {
            load.api = api;
            load.ok = true;
            load.soname = soname;
            return load;
        }
        tried += "\n  " + soname + ": not libcurl (no " + missing + ")";
        ::dlclose(handle);
    }
    load.error = "libcurl is needed to download and could not be loaded:" + tried +
                 "\n  install it (Debian/Ubuntu: apt-get install libcurl4; EL/Fedora: dnf "
                 "install libcurl; SUSE: zypper install libcurl4)";
    return load;
}

const CurlLoad& curl_library() {
    static const CurlLoad load = [] {
        auto l = load_curl({"libcurl.so.4", "libcurl-gnutls.so.4"});
        if (l.ok && l.api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            l.ok = false;
            l.error = l.soname + ": curl_global_init failed";
        }
        return l;
    }();
    return load;
}

} // namespace gpuprov::detail
