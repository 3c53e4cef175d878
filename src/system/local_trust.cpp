#include <deque>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/local_trust.hpp>
#include <sys/stat.h>

namespace gpuprov {

namespace {

namespace fs = std::filesystem;

// More hops than any sane path has; a loop of links ends here instead of spinning.
constexpr int kMaxLinks = 40;

std::string describe(const fs::path& p, const FileInfo& info) {
    return fmt::format("{} (owner uid {}, group gid {}, mode {:04o})", p.string(), info.uid,
                       info.gid, info.mode & 07777U);
}

/// What is wrong with one component, or empty. `last`: the file itself, not a directory above.
std::string component_problem(const fs::path& p, const FileInfo& info, bool last,
                              const fs::path& file, TrustedKind kind) {
    const auto type = info.mode & S_IFMT;
    const bool dir = type == S_IFDIR;
    const bool link = type == S_IFLNK;
    const char* role = link ? "link" : dir ? "directory" : "file";
    const auto where = p == file ? std::string() : fmt::format(" on the way to {}", file.string());
    if (info.uid != 0) {
        return fmt::format("{} {}{} is not owned by root, so its owner can change what root "
                           "runs; fix: chown root:root {}",
                           role, describe(p, info), where, p.string());
    }
    if (link) {
        return {}; // a link's own mode means nothing; its target is checked next
    }
    const bool writable = (info.mode & (S_IWGRP | S_IWOTH)) != 0;
    if (last && kind == TrustedKind::directory) {
        if (!dir) {
            return fmt::format("{} is not a directory", describe(p, info));
        }
        if (writable) {
            return fmt::format("directory {} is writable by group or others, who can add or "
                               "replace what root runs from it; fix: chmod go-w {}",
                               describe(p, info), p.string());
        }
        return {};
    }
    if (dir && writable && (info.mode & S_ISVTX) == 0) {
        return fmt::format("directory {}{} is writable by group or others, who can replace what "
                           "is in it; fix: chmod go-w {}, or keep the file in a root-only "
                           "directory such as /etc/gpuprov/",
                           describe(p, info), where, p.string());
    }
    if (last && type != S_IFREG) {
        return fmt::format("{} is not a regular file", describe(p, info));
    }
    if (last && writable) {
        return fmt::format("file {} is writable by group or others; fix: chmod go-w {}",
                           describe(p, info), p.string());
    }
    return {};
}

} // namespace

std::optional<std::string> untrusted_reason(const System& sys, const fs::path& path,
                                            TrustedKind kind) {
    if (!path.is_absolute()) {
        return fmt::format("{} is not an absolute path", path.string());
    }
    // Empty and "." parts (a trailing slash) are dropped up front, so the last part left is
    // the one checked as the file or directory itself.
    std::deque<fs::path> todo;
    for (const auto& part : path.relative_path()) {
        if (!part.empty() && part != ".") {
            todo.push_back(part);
        }
    }
    fs::path at = "/";
    const auto root = sys.lstat(at);
    if (!root) {
        return std::string("cannot stat /");
    }
    // "/" itself is the last component only when it is the directory asked about.
    const bool only_root = todo.empty() && kind == TrustedKind::directory;
    if (auto bad = component_problem(at, *root, only_root, path, kind); !bad.empty()) {
        return bad;
    }
    int links = 0;
    while (!todo.empty()) {
        const auto part = todo.front();
        todo.pop_front();
        if (part.empty() || part == ".") {
            continue;
        }
        if (part == "..") {
            at = at.parent_path(); // `at` is link-free, so ".." is its lexical parent
            continue;
        }
        const auto next = at / part;
        const auto info = sys.lstat(next);
        if (!info) {
            return fmt::format("cannot stat {} (missing or unreadable)", next.string());
        }
        if (auto bad = component_problem(next, *info, todo.empty(), path, kind); !bad.empty()) {
            return bad;
        }
        if ((info->mode & S_IFMT) != S_IFLNK) {
            at = next;
            continue;
        }
        if (++links > kMaxLinks) {
            return fmt::format("{}: too many levels of symbolic links", path.string());
        }
        const auto target = sys.read_link(next);
        if (!target) {
            return fmt::format("cannot read the link {}", next.string());
        }
        std::deque<fs::path> rest;
        for (const auto& t : target->relative_path()) {
            if (!t.empty() && t != ".") {
                rest.push_back(t);
            }
        }
        todo.insert(todo.begin(), rest.begin(), rest.end());
        if (target->is_absolute()) {
            at = "/";
        }
    }
    return std::nullopt;
}

void require_trusted(const System& sys, const fs::path& path, std::string_view what,
                     TrustedKind kind) {
    if (const auto why = untrusted_reason(sys, path, kind)) {
        throw HostError(fmt::format("refusing the {} {}: as root gpuprov only uses files no one "
                                    "but root can change. {}; or pass --allow-untrusted to use it "
                                    "anyway",
                                    what, path.string(), *why));
    }
}

} // namespace gpuprov
