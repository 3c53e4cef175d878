// A tar reader for `dpkg-deb --fsys-tarfile`: dpkg writes GNU tar (ustar headers, 'L' records for
// names over 100 bytes), other tools pax; gpuprov needs only regular files' names and bytes, so
// it reads exactly that and refuses anything cut short instead of guessing.
#include <algorithm>
#include <fmt/format.h>
#include <gpuprov/deb_file.hpp>
#include <gpuprov/error.hpp>
#include <gpuprov/strings.hpp>
#include <optional>

namespace gpuprov {

namespace {

constexpr std::size_t kBlock = 512;

/// A NUL-terminated (or full-width) header field.
std::string_view field(std::string_view header, std::size_t at, std::size_t width) {
    auto f = header.substr(at, width);
    return f.substr(0, f.find('\0'));
}

/// An octal number field as tar writes it (spaces or NULs around the digits).
std::optional<std::uint64_t> octal(std::string_view f) {
    f = trim(f);
    while (!f.empty() && f.back() == '\0') {
        f.remove_suffix(1);
    }
    if (f.empty() || f.size() > 21) {
        return f.empty() ? std::optional<std::uint64_t>(0) : std::nullopt;
    }
    std::uint64_t v = 0;
    for (const char c : f) {
        if (c < '0' || c > '7') {
            return std::nullopt;
        }
        v = v * 8 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
}

/// The header's checksum: the sum of its bytes with the checksum field read as spaces.
bool checksum_ok(std::string_view header) {
    const auto stored = octal(field(header, 148, 8));
    if (!stored) {
        return false;
    }
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) {
        sum += (i >= 148 && i < 156) ? static_cast<unsigned char>(' ')
                                     : static_cast<unsigned char>(header[i]);
    }
    return sum == *stored;
}

/// The `path` value of a pax extended header ("<len> path=<value>\n" records).
std::optional<std::string> pax_path(std::string_view data) {
    while (!data.empty()) {
        const auto space = data.find(' ');
        const auto len = space == std::string_view::npos
                             ? std::nullopt
                             : parse_int(std::string(data.substr(0, space)));
        if (!len || *len <= 0 || static_cast<std::size_t>(*len) > data.size()) {
            throw Error("tar: a pax header record has a bad length");
        }
        const auto record = data.substr(space + 1, static_cast<std::size_t>(*len) - space - 1);
        if (starts_with(record, "path=")) {
            auto value = record.substr(5);
            if (!value.empty() && value.back() == '\n') {
                value.remove_suffix(1);
            }
            return std::string(value);
        }
        data.remove_prefix(static_cast<std::size_t>(*len));
    }
    return std::nullopt;
}

std::string_view without_dot_slash(std::string_view path) {
    while (starts_with(path, "./")) {
        path.remove_prefix(2);
    }
    return path;
}

} // namespace

std::map<std::string, std::string> tar_files_under(std::string_view tar, std::string_view dir) {
    std::map<std::string, std::string> out;
    std::optional<std::string> long_name; // from a GNU 'L' or pax 'x' record, for the next entry
    std::size_t at = 0;
    while (true) {
        if (at + kBlock > tar.size()) {
            throw Error(fmt::format("tar: the stream ends inside a header at byte {}", at));
        }
        const auto header = tar.substr(at, kBlock);
        if (std::all_of(header.begin(), header.end(), [](char c) { return c == '\0'; })) {
            return out; // the end-of-archive marker
        }
        if (!checksum_ok(header)) {
            throw Error(fmt::format("tar: the header at byte {} is not a tar header", at));
        }
        const auto size = octal(field(header, 124, 12));
        if (!size || *size > tar.size()) {
            throw Error(fmt::format("tar: the header at byte {} has a bad size", at));
        }
        const auto data_at = at + kBlock;
        if (data_at + *size > tar.size()) {
            throw Error(
                fmt::format("tar: the stream ends inside the data of the entry at byte {}", at));
        }
        const auto data = tar.substr(data_at, *size);
        const char type = header[156];
        at = data_at + (*size + kBlock - 1) / kBlock * kBlock;
        if (type == 'L') {
            long_name = std::string(data.substr(0, data.find('\0')));
            continue;
        }
        if (type == 'x') {
            long_name = pax_path(data);
            continue;
        }
        if (type == 'g') {
            continue; // pax global header: nothing gpuprov reads
        }
        std::string name;
        if (long_name) {
            name = std::move(*long_name);
            long_name.reset();
        } else {
            const auto prefix = field(header, 345, 155);
            const auto base = field(header, 0, 100);
            const bool ustar = starts_with(field(header, 257, 6), "ustar");
            name = ustar && !prefix.empty() ? std::string(prefix) + "/" + std::string(base)
                                            : std::string(base);
        }
        if (type != '0' && type != '\0') {
            continue; // directories, links, devices: not file contents
        }
        const auto path = without_dot_slash(name);
        if (starts_with(path, dir)) {
            out[std::string(path)] = std::string(data);
        }
    }
}

Command deb_fsys_tarfile_command(const std::string& deb_path) {
    return {.argv = {"dpkg-deb", "--fsys-tarfile", deb_path}, .timeout = 120s};
}

std::map<std::string, std::string> deb_files_under(const System& sys, const std::string& deb_path,
                                                   std::string_view dir) {
    const auto cmd = deb_fsys_tarfile_command(deb_path);
    const auto r = sys.query(cmd);
    if (!r.ok()) {
        throw CommandError(fmt::format("`{}` failed (exit {}): {}", display_argv(cmd.argv),
                                       r.exit_code, std::string(trim(tail_lines(r.err, 4)))));
    }
    try {
        return tar_files_under(r.out, dir);
    } catch (Error& e) {
        e.add_context("reading " + deb_path);
        throw;
    }
}

} // namespace gpuprov
