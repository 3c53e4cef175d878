#include "fake_system.hpp"

#include <fstream>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>

namespace gpuprov::testing {

namespace fs = std::filesystem;

fs::path fixture_path(const std::string& rel) {
    return fs::path(GPUPROV_FIXTURES_DIR) / rel;
}

std::string read_fixture(const std::string& rel) {
    std::ifstream in(fixture_path(rel), std::ios::binary);
    if (!in) {
        ADD_FAILURE() << "missing fixture " << fixture_path(rel);
        return {};
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

namespace {

std::string norm(const fs::path& p) {
    auto s = p.lexically_normal().generic_string();
    while (s.size() > 1 && s.back() == '/') {
        s.pop_back();
    }
    return s;
}

class FakeLock : public FileLock {};

} // namespace

FakeSystem::FakeSystem() : m_start(std::chrono::sys_days{std::chrono::year{2026} / 12 / 1}) {
    m_dirs.insert("/");
}

void FakeSystem::add_file(const std::string& path, std::string content) {
    const auto p = norm(path);
    m_files[p] = std::move(content);
    // Unique across every FakeSystem, so a cache keyed by stamp never mixes two fakes.
    static std::uint64_t next_version = 0;
    m_versions[p] = ++next_version;
    // The fake clock, plus the write counter so writes within one instant still order.
    m_mtimes[p] =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now().time_since_epoch()).count() +
        static_cast<std::int64_t>(next_version);
    for (auto parent = fs::path(p).parent_path(); !parent.empty() && parent != "/";
         parent = parent.parent_path()) {
        m_dirs.insert(norm(parent));
    }
}

void FakeSystem::set_mtime(const std::string& path, std::chrono::system_clock::time_point when) {
    m_mtimes[norm(path)] =
        std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
}

void FakeSystem::load_tree(const std::string& rel) {
    const auto base = fixture_path(rel);
    if (!fs::is_directory(base)) {
        ADD_FAILURE() << "missing fixture tree " << base;
        return;
    }
    for (const auto& entry : fs::recursive_directory_iterator(base)) {
        // Lexically: fs::relative() canonicalizes, which follows the fixture's own symlinks
        // (etc/os-release -> ../usr/lib/os-release) and loses them.
        const auto target = "/" + entry.path().lexically_relative(base).generic_string();
        if (entry.is_symlink()) {
            add_link(target, fs::read_symlink(entry.path()).string());
        } else if (entry.is_directory()) {
            add_dir(target);
        } else if (entry.is_regular_file()) {
            std::ifstream in(entry.path(), std::ios::binary);
            std::ostringstream ss;
            ss << in.rdbuf();
            add_file(target, ss.str());
        }
    }
}

void FakeSystem::add_dir(const std::string& path) {
    for (fs::path p = norm(path); !p.empty() && p != "/"; p = p.parent_path()) {
        m_dirs.insert(norm(p));
    }
}

void FakeSystem::add_link(const std::string& path, const std::string& target) {
    m_links[norm(path)] = target;
    add_dir(fs::path(norm(path)).parent_path().string());
}

void FakeSystem::set_owner(const std::string& path, unsigned uid, unsigned gid) {
    m_owners[norm(path)] = {uid, gid};
}

void FakeSystem::set_mode(const std::string& path, unsigned mode) {
    m_modes[norm(path)] = mode;
}

void FakeSystem::on_command(std::vector<std::string> argv, CommandResult result) {
    m_commands[std::move(argv)] = std::move(result);
}

void FakeSystem::on_command_prefix(std::vector<std::string> prefix,
                                   std::function<CommandResult(const Command&)> handler) {
    m_prefix_handlers.emplace_back(std::move(prefix), std::move(handler));
}

void FakeSystem::on_url(const std::string& url, FetchResult result) {
    m_urls[url] = std::move(result);
}

void FakeSystem::set_env(const std::string& name, std::string value) {
    m_env[name] = std::move(value);
}

std::optional<std::string> FakeSystem::file(const std::string& path) const {
    const auto it = m_files.find(follow(path));
    if (it == m_files.end()) {
        return std::nullopt;
    }
    return it->second;
}

unsigned FakeSystem::mode_of(const std::string& path) const {
    const auto it = m_modes.find(norm(path));
    return it == m_modes.end() ? 0644 : it->second;
}

std::string FakeSystem::follow(const fs::path& path) const {
    auto p = norm(path);
    // Follow links the way the kernel would, so /etc/os-release -> ../usr/lib/os-release works.
    for (int hops = 0; hops < 8; ++hops) {
        const auto link = m_links.find(p);
        if (link == m_links.end()) {
            break;
        }
        const fs::path target(link->second);
        p = norm(target.is_absolute() ? target : fs::path(p).parent_path() / target);
    }
    return p;
}

std::optional<std::string> FakeSystem::read_file(const fs::path& path) const {
    files_read.push_back(norm(path));
    const auto it = m_files.find(follow(path));
    if (it == m_files.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::vector<std::string> FakeSystem::list_dir(const fs::path& path) const {
    const auto dir = norm(path);
    const auto prefix = dir == "/" ? std::string("/") : dir + "/";
    std::set<std::string> names;
    const auto add = [&](const std::string& p) {
        if (starts_with(p, prefix) && p.size() > prefix.size()) {
            const auto rest = p.substr(prefix.size());
            names.insert(rest.substr(0, rest.find('/')));
        }
    };
    for (const auto& [p, _] : m_files) {
        add(p);
    }
    for (const auto& p : m_dirs) {
        add(p);
    }
    for (const auto& [p, _] : m_links) {
        add(p);
    }
    return {names.begin(), names.end()};
}

bool FakeSystem::exists(const fs::path& path) const {
    const auto p = norm(path);
    return m_files.count(p) != 0 || m_dirs.count(p) != 0 || m_links.count(p) != 0;
}

bool FakeSystem::is_dir(const fs::path& path) const {
    return m_dirs.count(norm(path)) != 0;
}

std::optional<fs::path> FakeSystem::read_link(const fs::path& path) const {
    const auto it = m_links.find(norm(path));
    if (it == m_links.end()) {
        return std::nullopt;
    }
    return fs::path(it->second);
}

std::optional<DiskSpace> FakeSystem::disk_space(const fs::path& path) const {
    const auto p = norm(path);
    const std::pair<const std::string, DiskSpace>* best = nullptr;
    for (const auto& entry : m_disks) {
        const auto& mount = entry.first;
        const bool holds = mount == "/" || p == mount || starts_with(p, mount + "/");
        if (holds && (best == nullptr || mount.size() > best->first.size())) {
            best = &entry;
        }
    }
    if (best != nullptr) {
        return best->second;
    }
    return m_disk;
}

std::optional<FileStamp> FakeSystem::stamp(const fs::path& path) const {
    const auto it = m_files.find(norm(path));
    if (it == m_files.end()) {
        return std::nullopt;
    }
    return FileStamp{.size = it->second.size(),
                     .inode = m_versions.at(it->first),
                     .mtime_ns = m_mtimes.at(it->first)};
}

std::optional<FileInfo> FakeSystem::lstat(const fs::path& path) const {
    const auto p = norm(path);
    unsigned type = 0;
    unsigned perms = 0;
    if (m_links.count(p) != 0) {
        type = S_IFLNK;
        perms = 0777;
    } else if (m_files.count(p) != 0) {
        type = S_IFREG;
        perms = 0644;
    } else if (m_dirs.count(p) != 0) {
        type = S_IFDIR;
        perms = 0755;
    } else {
        return std::nullopt;
    }
    if (const auto mode = m_modes.find(p); mode != m_modes.end() && type != S_IFLNK) {
        perms = mode->second;
    }
    const auto owner = m_owners.find(p);
    return FileInfo{.uid = owner == m_owners.end() ? 0 : owner->second.first,
                    .gid = owner == m_owners.end() ? 0 : owner->second.second,
                    .mode = type | perms};
}

std::optional<FileInfo> FakeSystem::stat(const fs::path& path) const {
    const auto p = follow(path);
    if (m_links.count(p) != 0) {
        return std::nullopt; // a loop, or more hops than the fake follows
    }
    return lstat(p);
}

std::optional<bool> FakeSystem::same_content(const fs::path& a, const fs::path& b) const {
    compared.push_back(norm(a));
    compared.push_back(norm(b));
    // Not through read_file(): files_read records whole reads, which this is not.
    const auto ca = m_files.find(follow(a));
    const auto cb = m_files.find(follow(b));
    if (ca == m_files.end() || cb == m_files.end()) {
        return std::nullopt;
    }
    return ca->second == cb->second;
}

CommandResult FakeSystem::answer(const Command& cmd) const {
    if (const auto it = m_commands.find(cmd.argv); it != m_commands.end()) {
        return it->second;
    }
    for (auto it = m_prefix_handlers.rbegin(); it != m_prefix_handlers.rend(); ++it) {
        const auto& prefix = it->first;
        if (prefix.size() <= cmd.argv.size() &&
            std::equal(prefix.begin(), prefix.end(), cmd.argv.begin())) {
            return it->second(cmd);
        }
    }
    ADD_FAILURE() << "unscripted command: " << display_argv(cmd.argv);
    CommandResult r;
    r.exit_code = 127;
    r.not_found = true;
    r.err = "unscripted in FakeSystem";
    return r;
}

CommandResult FakeSystem::query(const Command& cmd) const {
    queries.push_back(cmd.argv);
    commands_seen.push_back(cmd);
    return answer(cmd);
}

CommandResult FakeSystem::run(const Command& cmd) {
    commands_ran.push_back(cmd.argv);
    commands_seen.push_back(cmd);
    return answer(cmd);
}

FetchResult FakeSystem::fetch(const FetchRequest& req) const {
    urls_fetched.push_back(req.url);
    if (const auto it = m_urls.find(req.url); it != m_urls.end()) {
        return it->second;
    }
    FetchResult r;
    r.error = "Could not resolve host (unscripted URL in FakeSystem)";
    r.attempts = 1;
    return r;
}

std::optional<std::string> FakeSystem::env(std::string_view name) const {
    const auto it = m_env.find(std::string(name));
    if (it == m_env.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::chrono::system_clock::time_point FakeSystem::now() const {
    return m_start + std::chrono::duration_cast<std::chrono::system_clock::duration>(slept);
}

void FakeSystem::write_file_atomic(const fs::path& path, std::string_view content, unsigned mode) {
    files_written.push_back(norm(path));
    // The rename replaces a link itself, never its target, as rename(2) does.
    m_links.erase(norm(path));
    add_file(path.string(), std::string(content));
    m_modes[norm(path)] = mode;
}

void FakeSystem::remove_file(const fs::path& path) {
    files_removed.push_back(norm(path));
    m_files.erase(norm(path));
    m_links.erase(norm(path));
}

void FakeSystem::make_dirs(const fs::path& path) {
    add_dir(path.string());
}

void FakeSystem::make_symlink(const fs::path& target, const fs::path& link) {
    m_files.erase(norm(link));
    add_link(link.string(), target.string());
}

std::unique_ptr<FileLock> FakeSystem::try_lock(const fs::path& path) {
    if (m_held_locks.count(norm(path)) != 0) {
        return nullptr;
    }
    return std::make_unique<FakeLock>();
}

std::optional<int> FakeSystem::lock_holder(const fs::path& path) const {
    const auto it = m_lock_holders.find(norm(path));
    if (it == m_lock_holders.end() || it->second.second <= 0) {
        return std::nullopt;
    }
    --it->second.second;
    return it->second.first;
}

void FakeSystem::sleep(std::chrono::milliseconds d) const {
    slept += d;
    if (on_sleep) {
        on_sleep();
    }
}

} // namespace gpuprov::testing
