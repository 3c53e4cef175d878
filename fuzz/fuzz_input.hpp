#pragma once
// Shared by the libFuzzer targets in this directory: the input as text, and a contract check
// that aborts (a libFuzzer finding) with the broken promise named.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gpuprov::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size}; // NOLINT: libFuzzer hands bytes
}

/// A documented property of a parser's result that fuzzed input broke.
inline void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz contract broken: %s\n", what);
        std::abort();
    }
}

} // namespace gpuprov::fuzz
