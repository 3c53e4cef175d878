#include "http.hpp"

#include "http_curl.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

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

/// A live line on a terminal while a download takes long (a proxy that never answers, a slow
/// mirror): the URL, the bytes so far, the time, the attempt. Nothing for the quick ones, nothing
/// off a terminal (logs and pipes get the one line per request instead).
struct Progress {
    const FetchRequest* req;
    int attempt;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point drawn{};
    bool shown = false;
};

constexpr auto kProgressAfter = std::chrono::seconds(1);
constexpr auto kProgressEvery = std::chrono::milliseconds(500);

std::string mib(curl_off_t bytes) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

int on_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
    auto* p = static_cast<Progress*>(user);
    const auto t = std::chrono::steady_clock::now();
    if (t - p->started < kProgressAfter || t - p->drawn < kProgressEvery) {
        return 0;
    }
    p->drawn = t;
    p->shown = true;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(t - p->started).count();
    const auto got = now == 0 && total == 0 ? std::string("waiting for an answer")
                     : total > 0            ? mib(now) + " of " + mib(total)
                                            : mib(now);
    std::fprintf(stderr, "\r\033[K  GET %s  %s  (%lld s, attempt %d of %d)", p->req->url.c_str(),
                 got.c_str(), static_cast<long long>(secs), p->attempt, p->req->attempts);
    std::fflush(stderr);
    return 0;
}

struct Attempt {
    bool ok = false;
    bool retryable = false;
    long status = 0;
    std::string error;
};

Attempt attempt(const CurlApi& api, const FetchRequest& req, std::string& body, int number) {
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
    Progress progress{&req, number};
    static const bool terminal = ::isatty(STDERR_FILENO) == 1;
    if (terminal) {
        api.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        api.easy_setopt(curl, CURLOPT_XFERINFODATA, &progress);
        api.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    }
    const CURLcode rc = api.easy_perform(curl);
    if (progress.shown) {
        std::fputs("\r\033[K", stderr); // the line goes; the log keeps the request
        std::fflush(stderr);
    }
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
        const auto t0 = std::chrono::steady_clock::now();
        const auto a = attempt(curl.api, req, result.body, i);
        const auto secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        result.http_status = a.status;
        // One log line per request: URL, status, bytes, time, attempt, and whether it is retried.
        if (a.ok) {
            spdlog::debug("GET {} -> HTTP {}, {} bytes in {:.3f} s (attempt {} of {})", req.url,
                          a.status, result.body.size(), secs, i, req.attempts);
            result.ok = true;
            result.error.clear();
            return result;
        }
        result.error = a.error;
        const bool retry = a.retryable && i < req.attempts;
        spdlog::info("GET {} -> {} after {:.3f} s (attempt {} of {}){}", req.url, a.error, secs, i,
                     req.attempts,
                     retry ? fmt::format("; retrying in {:.1f} s",
                                         std::chrono::duration<double>(backoff).count())
                           : "; giving up");
        if (!retry) {
            break;
        }
        sys.sleep(backoff);
        backoff *= 2;
    }
    result.body.clear();
    return result;
}

} // namespace gpuprov::detail
