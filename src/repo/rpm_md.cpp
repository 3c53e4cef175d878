// An rpm repository's metadata (createrepo_c's repodata/): repomd.xml names each metadata file
// with its checksum and size; primary.xml(.gz) lists every package with its NEVRA, requires and
// provides. Only the elements gpuprov needs are read, with a small scanner over the well-formed
// XML createrepo_c writes (tests/fixtures/repo/rpm/ is real output), never a DTD or entities
// beyond XML's five.
#include "internal.hpp"

#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <zlib.h>

namespace gpuprov {

namespace {

std::string unescape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out += s[i];
            continue;
        }
        static constexpr std::pair<std::string_view, char> kEntities[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        bool done = false;
        for (const auto& [entity, ch] : kEntities) {
            if (s.substr(i, entity.size()) == entity) {
                out += ch;
                i += entity.size() - 1;
                done = true;
                break;
            }
        }
        if (!done) {
            out += '&';
        }
    }
    return out;
}

/// The value of attribute `name` inside the start tag `tag` ("<version epoch=\"3\" .../>").
std::string attr(std::string_view tag, std::string_view name) {
    const std::string key = " " + std::string(name) + "=\"";
    const auto at = tag.find(key);
    if (at == std::string_view::npos) {
        return {};
    }
    const auto start = at + key.size();
    const auto end = tag.find('"', start);
    return end == std::string_view::npos ? std::string() : unescape(tag.substr(start, end - start));
}

/// The text of the first <name>...</name> (or <name attr="...">...</name>) inside `block`.
std::string element_text(std::string_view block, std::string_view name) {
    const std::string open = "<" + std::string(name);
    const std::string close = "</" + std::string(name) + ">";
    for (auto a = block.find(open); a != std::string_view::npos; a = block.find(open, a + 1)) {
        const auto next = a + open.size();
        if (next >= block.size() || (block[next] != '>' && block[next] != ' ')) {
            continue; // <name> must not match <namespace>
        }
        const auto body = block.find('>', next);
        const auto b = body == std::string_view::npos ? body : block.find(close, body);
        if (b == std::string_view::npos || block[body - 1] == '/') {
            return {};
        }
        return unescape(trim(block.substr(body + 1, b - body - 1)));
    }
    return {};
}

/// The start tag "<name ...>" (or "<name .../>") at its first occurrence in `block`.
std::string_view start_tag(std::string_view block, std::string_view name) {
    const std::string open = "<" + std::string(name) + " ";
    const auto a = block.find(open);
    if (a == std::string_view::npos) {
        return {};
    }
    const auto b = block.find('>', a);
    return b == std::string_view::npos ? std::string_view() : block.substr(a, b - a + 1);
}

/// Names of every <rpm:entry> inside <rpm:{list}>...</rpm:{list}>, joined with ", " as a
/// Debian-style field so dependency_names() and the closure code read both formats alike.
std::string entries(std::string_view block, std::string_view list) {
    const std::string open = "<rpm:" + std::string(list) + ">";
    const std::string close = "</rpm:" + std::string(list) + ">";
    const auto a = block.find(open);
    if (a == std::string_view::npos) {
        return {};
    }
    const auto b = block.find(close, a);
    const auto section =
        block.substr(a, b == std::string_view::npos ? std::string_view::npos : b - a);
    std::vector<std::string> names;
    for (std::size_t pos = section.find("<rpm:entry "); pos != std::string_view::npos;
         pos = section.find("<rpm:entry ", pos + 1)) {
        const auto end = section.find('>', pos);
        auto name = attr(section.substr(pos, end - pos + 1), "name");
        // rpmlib(...) are rpm's own features; ',' cannot appear in a joined field.
        if (!name.empty() && !starts_with(name, "rpmlib(") && name.find(',') == std::string::npos) {
            names.push_back(std::move(name));
        }
    }
    return join(names, ", ");
}

} // namespace

std::optional<RepomdEntry> repomd_entry(std::string_view repomd, std::string_view type) {
    const std::string open = "<data type=\"" + std::string(type) + "\">";
    const auto a = repomd.find(open);
    if (a == std::string_view::npos) {
        return std::nullopt;
    }
    const auto b = repomd.find("</data>", a);
    if (b == std::string_view::npos) {
        return std::nullopt;
    }
    const auto block = repomd.substr(a, b - a);
    RepomdEntry e;
    const auto checksum = start_tag(block, "checksum");
    if (attr(checksum, "type") != "sha256") {
        return std::nullopt; // only SHA-256 is trusted (createrepo_c's default)
    }
    e.sha256 = to_lower(element_text(block, "checksum"));
    e.location = attr(start_tag(block, "location"), "href");
    const auto size = parse_int(element_text(block, "size"));
    if (e.sha256.size() != 64 || e.location.empty() || !size || *size < 0 ||
        e.location.find("..") != std::string::npos || e.location.front() == '/') {
        return std::nullopt;
    }
    e.size = static_cast<std::uint64_t>(*size);
    return e;
}

std::vector<PackageRecord> parse_primary_xml(std::string_view xml) {
    std::vector<PackageRecord> out;
    for (std::size_t pos = xml.find("<package type=\"rpm\">"); pos != std::string_view::npos;
         pos = xml.find("<package type=\"rpm\">", pos + 1)) {
        const auto end = xml.find("</package>", pos);
        if (end == std::string_view::npos) {
            break; // cut short: the rest is not a package
        }
        const auto block = xml.substr(pos, end - pos);
        PackageRecord r;
        r.name = element_text(block, "name");
        r.architecture = element_text(block, "arch");
        const auto version = start_tag(block, "version");
        const auto epoch = attr(version, "epoch");
        const auto ver = attr(version, "ver");
        const auto rel = attr(version, "rel");
        if (r.name.empty() || ver.empty() || rel.empty() || r.architecture == "src") {
            continue;
        }
        // rpm's EVR as `rpm -q` and dnf print it: no "0:" for epoch 0.
        r.version = (epoch.empty() || epoch == "0" ? "" : epoch + ":") + ver + "-" + rel;
        r.filename = attr(start_tag(block, "location"), "href");
        const auto checksum = start_tag(block, "checksum");
        if (attr(checksum, "type") == "sha256") {
            r.sha256 = to_lower(element_text(block, "checksum"));
        }
        // <size package="N" .../>: the .rpm's size, which a downloaded file is checked against
        // with its SHA-256 (gpuprov bundle), as Packages' Size: on apt.
        r.size = std::string(attr(start_tag(block, "size"), "package"));
        r.depends = entries(block, "requires");
        r.provides = entries(block, "provides");
        out.push_back(std::move(r));
    }
    return out;
}

std::optional<std::string> gunzip(std::string_view data, std::size_t max_bytes) {
    z_stream z{};
    // 16 + MAX_WBITS: a gzip wrapper, as createrepo_c writes *.xml.gz.
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        return std::nullopt;
    }
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    char buf[65536];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            break;
        }
        out.append(buf, sizeof buf - z.avail_out);
        if (out.size() > max_bytes) {
            rc = Z_MEM_ERROR;
            break;
        }
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
            rc = Z_BUF_ERROR; // input ended before the gzip trailer: truncated
            break;
        }
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        return std::nullopt;
    }
    return out;
}

std::optional<std::uint64_t> repomd_revision(std::string_view repomd) {
    const auto open = repomd.find("<revision>");
    const auto close = repomd.find("</revision>");
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        return std::nullopt;
    }
    const auto v = parse_int(trim(repomd.substr(open + 10, close - open - 10)));
    return v && *v >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v))
                        : std::nullopt;
}

std::string dnf_cache_dir_name(std::string_view repo_id, std::string_view baseurl) {
    // libdnf Repo::Impl::getHash: SHA-256 over the baseurl as configured, first 16 hex digits
    // (checked with dnf 4.14: baseurl file:///tmp/lab/repo/ -> <id>-d4b14c84397bcb90).
    return std::string(repo_id) + "-" + repo_detail::sha256_hex(baseurl).substr(0, 16);
}

} // namespace gpuprov
