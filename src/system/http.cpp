#include "http.hpp"

#include "http_curl.hpp"

#include <fmt/format.h>

namespace gpuprov::detail {

namespace {

struct Sink {
    std::string* body;
    std::size_t max_bytes;
    bool too_big = false;
};

std::size_t on_data(char* ptr, std::size_t size, std::size_t nmemb, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const auto n = size * nmemb;
    if (sink->body->size() + n > sink->max_bytes) {
        sink->too_big = true;
        return 0;
    }
    sink->body->append(ptr, n);
    return n;
}

// The allowed protocols: the string options since curl 7.85, the bitmask before (EL 8 ships
// 7.61, Debian 11 7.74).
void allow_protocols(const CurlApi& curl, CURL* h, CURLoption str_opt, CURLoption mask_opt,
                     bool https_only) {
    if (curl.easy_setopt(h, str_opt, https_only ? "https" : "http,https") == CURLE_OK) {
        return;
    }
    const long mask = https_only ? CURLPROTO_HTTPS : (CURLPROTO_HTTP | CURLPROTO_HTTPS);
    curl.easy_setopt(h, mask_opt, mask);
}

struct Attempt {
    bool ok = false;
    bool retryable = false;
    long status = 0;
    std::string error;
};

Attempt attempt(const CurlApi& api, const FetchRequest& req, std::string& body) {
    Attempt a;
    CURL* curl = api.easy_init();
    if (curl == nullptr) {
        a.error = "curl_easy_init failed";
        return a;
    }
    Sink sink{&body, req.max_bytes};
    char errbuf[CURL_ERROR_SIZE] = {0};
    api.easy_setopt(curl, CURLOPT_URL, req.url.c_str());
    api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    api.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    api.easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
    // Redirects may not downgrade https to http.
    allow_protocols(api, curl, CURLOPT_REDIR_PROTOCOLS_STR, CURLOPT_REDIR_PROTOCOLS,
                    req.url.rfind("https://", 0) == 0);
    allow_protocols(api, curl, CURLOPT_PROTOCOLS_STR, CURLOPT_PROTOCOLS, false);
    api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                    static_cast<long>(req.connect_timeout.count()));
    api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(req.total_timeout.count()));
    // A stalled transfer (a mirror that hangs mid-body) is cut after 15 s below 1 byte/s.
    api.easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api.easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 15L);
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(curl, CURLOPT_USERAGENT, "gpuprov/" GPUPROV_VERSION);
    const CURLcode rc = api.easy_perform(curl);
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.status);
    curl_off_t expected = -1;
    api.easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
    api.easy_cleanup(curl);

    if (sink.too_big) {
        a.error = fmt::format("response larger than {} bytes", req.max_bytes);
        return a;
    }
    if (rc != CURLE_OK) {
        a.error = errbuf[0] != 0 ? std::string(errbuf) : std::string(api.easy_strerror(rc));
        // curl reports a body shorter than Content-Length as CURLE_PARTIAL_FILE.
        if (rc == CURLE_PARTIAL_FILE) {
            a.error = "truncated response: " + a.error;
        }
        // An unknown host name is a typo or a missing resolver, not a passing fault; waiting
        // for it only makes `plan` slow on an offline machine.
        a.retryable = rc != CURLE_COULDNT_RESOLVE_HOST && rc != CURLE_UNSUPPORTED_PROTOCOL &&
                      rc != CURLE_URL_MALFORMAT;
        return a;
    }
    if (a.status >= 400) {
        a.error = fmt::format("HTTP {}", a.status);
        a.retryable = a.status >= 500 || a.status == 408 || a.status == 429;
        return a;
    }
    if (expected >= 0 && static_cast<curl_off_t>(body.size()) != expected) {
        a.error = fmt::format("truncated response: got {} of {} bytes", body.size(), expected);
        a.retryable = true;
        return a;
    }
    a.ok = true;
    return a;
}

} // namespace

FetchResult http_fetch(const FetchRequest& req, const System& sys) {
    FetchResult result;
    const auto& curl = curl_library();
    if (!curl.ok) {
        result.attempts = 1;
        result.error = curl.error;
        return result;
    }
    auto backoff = req.first_backoff;
    for (int i = 1; i <= std::max(1, req.attempts); ++i) {
        result.attempts = i;
        result.body.clear();
        const auto a = attempt(curl.api, req, result.body);
        result.http_status = a.status;
        if (a.ok) {
            result.ok = true;
            result.error.clear();
            return result;
        }
        result.error = a.error;
        if (!a.retryable || i == req.attempts) {
            break;
        }
        sys.sleep(backoff);
        backoff *= 2;
    }
    result.body.clear();
    return result;
}

} // namespace gpuprov::detail
