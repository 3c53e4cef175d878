// Format: a header naming the Packages file's SHA-256 and stamp, then every record as eight
// length-prefixed fields ("<len>:<bytes>"), so loading is a bounds-checked copy, never a parse of
// deb822 text. Written atomically; read strictly (any surprise means "parse it again").
#include "parsed_index.hpp"

#include <charconv>
#include <fmt/format.h>
#include <gpuprov/error.hpp>

namespace gpuprov::repo_detail {

namespace {

constexpr std::string_view kMagic = "gpuprov parsed Packages v2\n";

std::string header(const std::string& sha256, const FileStamp& st, std::size_t count) {
    return fmt::format("{}sha256 {}\nstamp {} {} {}\nrecords {}\n", kMagic, sha256, st.size,
                       st.inode, st.mtime_ns, count);
}

std::array<std::string PackageRecord::*, 8> fields() {
    return {&PackageRecord::name,    &PackageRecord::version,  &PackageRecord::architecture,
            &PackageRecord::depends, &PackageRecord::provides, &PackageRecord::filename,
            &PackageRecord::sha256,  &PackageRecord::size};
}

/// Reads "<len>:<bytes>" at `pos`, advancing it; nullopt when cut short or malformed.
std::optional<std::string_view> take_field(std::string_view data, std::size_t& pos) {
    std::size_t len = 0;
    const auto* first = data.data() + pos;
    const auto* last = data.data() + data.size();
    const auto [end, ec] = std::from_chars(first, last, len);
    if (ec != std::errc() || end == first || end == last || *end != ':') {
        return std::nullopt;
    }
    const auto start = static_cast<std::size_t>(end - data.data()) + 1;
    if (len > data.size() - start) {
        return std::nullopt;
    }
    pos = start + len;
    return data.substr(start, len);
}

} // namespace

std::filesystem::path parsed_index_path(const std::filesystem::path& packages) {
    auto p = packages;
    p += ".parsed";
    return p;
}

std::optional<std::vector<PackageRecord>> load_parsed_index(const System& sys,
                                                            const std::filesystem::path& packages,
                                                            const std::string& signed_sha256) {
    const auto st = sys.stamp(packages);
    if (!st) {
        return std::nullopt;
    }
    const auto data = sys.read_file(parsed_index_path(packages));
    if (!data) {
        return std::nullopt;
    }
    // The header for the file as it is now; a record count that does not match is refused below.
    const auto records_at = data->find("records ");
    const auto eol = data->find('\n', records_at);
    if (records_at == std::string::npos || eol == std::string::npos) {
        return std::nullopt;
    }
    std::size_t count = 0;
    const auto* cfirst = data->data() + records_at + 8;
    const auto* clast = data->data() + eol;
    if (const auto [p, ec] = std::from_chars(cfirst, clast, count);
        ec != std::errc() || p != clast) {
        return std::nullopt;
    }
    const auto expected = header(signed_sha256, *st, count);
    if (data->compare(0, expected.size(), expected) != 0 || eol + 1 != expected.size()) {
        return std::nullopt;
    }
    const std::string_view body(*data);
    std::size_t pos = expected.size();
    std::vector<PackageRecord> out;
    // Every record takes at least 14 bytes ("0:" per field), so a lying count cannot make this
    // reserve more than the file could hold.
    if (count > body.size() / 14) {
        return std::nullopt;
    }
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        PackageRecord r;
        for (auto member : fields()) {
            const auto f = take_field(body, pos);
            if (!f) {
                return std::nullopt;
            }
            r.*member = std::string(*f);
        }
        out.push_back(std::move(r));
    }
    if (pos != body.size()) {
        return std::nullopt;
    }
    return out;
}

void save_parsed_index(System& sys, const std::filesystem::path& packages,
                       const std::string& signed_sha256,
                       const std::vector<PackageRecord>& records) {
    const auto st = sys.stamp(packages);
    if (!st) {
        return;
    }
    auto out = header(signed_sha256, *st, records.size());
    for (const auto& r : records) {
        for (auto member : fields()) {
            const auto& v = r.*member;
            out += fmt::format("{}:", v.size());
            out += v;
        }
    }
    try {
        sys.write_file_atomic(parsed_index_path(packages), out, 0644);
    } catch (const Error&) {
        // Only a cache: the next plan parses Packages again.
    }
}

} // namespace gpuprov::repo_detail
