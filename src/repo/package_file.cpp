// One package file from a repository, for the plan's own reading (NVIDIA's pinning package): the
// trust comes from the signed index that lists its SHA-256, as when apt downloads it.
#include "internal.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>

namespace gpuprov {

namespace {

/// The file's own name, when it is a plain one (no directory climbing, no odd bytes).
std::string safe_basename(std::string_view filename) {
    const auto slash = filename.rfind('/');
    const auto base =
        std::string(slash == std::string_view::npos ? filename : filename.substr(slash + 1));
    const bool plain = !base.empty() && base != "." && base != ".." &&
                       std::all_of(base.begin(), base.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                                  std::string_view("._+~:%-").find(c) != std::string_view::npos;
                       });
    return plain ? base : std::string();
}

} // namespace

PackageFileResult fetch_package_file(System& sys, const ResolvedRepo& repo,
                                     const PackageRecord& record, const std::string& cache_dir) {
    const auto what = fmt::format("{} {}", record.name, record.version);
    auto filename = std::string_view(record.filename);
    while (starts_with(filename, "./")) {
        filename.remove_prefix(2);
    }
    const auto base = safe_basename(filename);
    if (base.empty() || record.sha256.size() != 64 || filename.find("..") != std::string::npos) {
        return {.path = {},
                .error = fmt::format("the index of {} gives no usable Filename and SHA256 for {}",
                                     repo.url, what)};
    }
    if (!repo.suite.empty()) {
        return {.path = {},
                .error = fmt::format("{}: package files of dists repositories are not read", what)};
    }
    const auto dir = std::filesystem::path(cache_dir) / repo_cache_subdir(repo) / "pool";
    const auto path = (dir / base).string();
    const auto expected_size = parse_int(record.size);
    if (const auto cached = sys.read_file(path);
        cached && repo_detail::sha256_hex(*cached) == record.sha256) {
        return {.path = path, .error = {}};
    }
    const auto url = repo.url + std::string(filename);
    FetchRequest req;
    req.url = url;
    const auto r = repo_detail::fetch_url(sys, req);
    if (!r.ok) {
        return {.path = {},
                .error = fmt::format("cannot fetch {}: {}", url,
                                     !r.error.empty() ? r.error
                                                      : fmt::format("HTTP {}", r.http_status))};
    }
    if (expected_size && static_cast<long long>(r.body.size()) != *expected_size) {
        return {.path = {},
                .error = fmt::format("{} is {} bytes; the signed index says {}", url, r.body.size(),
                                     *expected_size)};
    }
    if (const auto got = repo_detail::sha256_hex(r.body); got != record.sha256) {
        return {.path = {},
                .error = fmt::format("{} has SHA256 {}; the signed index says {}", url, got,
                                     record.sha256)};
    }
    sys.make_dirs(dir);
    sys.write_file_atomic(path, r.body, 0644);
    return {.path = path, .error = {}};
}

} // namespace gpuprov
