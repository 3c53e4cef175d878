#pragma once
#include <gpuprov/system.hpp>

namespace gpuprov::detail {

/// One libcurl download per attempt; retries on connection errors, timeouts, 5xx, 429 and short
/// bodies, with exponential backoff. Never retries a 4xx other than 408/429.
FetchResult http_fetch(const FetchRequest& req, const System& sys);

} // namespace gpuprov::detail
