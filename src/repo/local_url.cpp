// file:// URLs for the repository loader: an offline bundle's repositories (docs/air-gapped.md)
// are read from disk and then checked exactly as a mirror's downloads are.
#include "internal.hpp"

#include <gpuprov/strings.hpp>

namespace gpuprov::repo_detail {

FetchResult fetch_url(const System& sys, const FetchRequest& req) {
    constexpr std::string_view kFile = "file://";
    if (!starts_with(req.url, kFile)) {
        return sys.fetch(req);
    }
    FetchResult r;
    r.attempts = 1;
    const auto path = req.url.substr(kFile.size());
    if (path.empty() || path.front() != '/') {
        r.error = "not an absolute file:// path";
        return r;
    }
    auto body = sys.read_file(path);
    if (!body) {
        r.error = "no such file";
        return r;
    }
    if (body->size() > req.max_bytes) {
        r.error = "larger than the limit";
        return r;
    }
    r.ok = true;
    r.body = std::move(*body);
    return r;
}

} // namespace gpuprov::repo_detail
