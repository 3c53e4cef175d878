#include "internal.hpp"

#include <array>
#include <gpuprov/digest.hpp>
#include <memory>
#include <openssl/evp.h>
#include <stdexcept>

namespace gpuprov::repo_detail {

namespace {

std::string digest_hex(const EVP_MD* md, std::string_view data) {
    const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                      &EVP_MD_CTX_free);
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned len = 0;
    if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1 ||
        EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
        EVP_DigestFinal_ex(ctx.get(), out.data(), &len) != 1) {
        // Only happens when OpenSSL itself is broken (FIPS policy, out of memory).
        throw std::runtime_error("OpenSSL digest failed");
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string s;
    s.reserve(std::size_t{2} * len);
    for (unsigned i = 0; i < len; ++i) {
        s += hex[out[i] >> 4];
        s += hex[out[i] & 0xf];
    }
    return s;
}

} // namespace

std::string sha1_hex(std::string_view data) {
    return digest_hex(EVP_sha1(), data);
}
std::string sha256_hex(std::string_view data) {
    return digest_hex(EVP_sha256(), data);
}

} // namespace gpuprov::repo_detail

namespace gpuprov {
std::string content_digest(std::string_view data) {
    return "sha256:" + repo_detail::sha256_hex(data);
}
std::string sha256_hex(std::string_view data) {
    return repo_detail::sha256_hex(data);
}
} // namespace gpuprov
