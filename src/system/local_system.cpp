#include "command_log.hpp"
#include "http.hpp"
#include "interrupt_detail.hpp"
#include "process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/local_system.hpp>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace gpuprov {

namespace fs = std::filesystem;

namespace {

class FlockLock : public FileLock {
public:
    explicit FlockLock(int fd) : m_fd(fd) {}
    ~FlockLock() override {
        ::flock(m_fd, LOCK_UN);
        ::close(m_fd);
    }
    FlockLock(const FlockLock&) = delete;
    FlockLock& operator=(const FlockLock&) = delete;

private:
    int m_fd;
};

[[noreturn]] void fail(const std::string& what, const fs::path& p) {
    throw HostError(fmt::format("{} {}: {}", what, p.string(), std::strerror(errno)));
}

void fsync_dir(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

/// mkdir -p with mode 0755 whatever the umask, each new directory's entry synced to disk (its
/// parent fsynced), so a file renamed into a new directory survives a crash with its path.
/// Returns false with errno set when a directory could not be made.
bool make_dirs_durable(const fs::path& dir) {
    std::vector<fs::path> missing;
    for (auto p = dir; !p.empty() && p != p.root_path(); p = p.parent_path()) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0) {
            break;
        }
        missing.push_back(p);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (::mkdir(it->c_str(), 0755) != 0) {
            if (errno == EEXIST) {
                continue; // made by someone else meanwhile: theirs, mode and all
            }
            return false;
        }
        ::chmod(it->c_str(), 0755); // the umask may have taken bits away
        fsync_dir(it->parent_path());
    }
    return true;
}

} // namespace

LocalSystem::LocalSystem(fs::path root) : m_root(std::move(root)) {}

fs::path LocalSystem::resolve(const fs::path& p) const {
    if (m_root.empty() || m_root == "/") {
        return p;
    }
    return m_root / p.relative_path();
}

std::optional<std::string> LocalSystem::read_file(const fs::path& path) const {
    // One read sized by fstat: facts read /var/lib/dpkg/status (megabytes on a real server) on
    // every plan, and stream copies cost ten times as much.
    const int fd = ::open(resolve(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    struct stat st {};
    std::string out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        out.reserve(static_cast<std::size_t>(st.st_size));
    }
    // /proc and /sys files report size 0 or 4096 whatever they hold, so read until EOF.
    char buf[65536];
    for (;;) {
        const auto n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

std::vector<std::string> LocalSystem::list_dir(const fs::path& path) const {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(resolve(path), ec), end; !ec && it != end; it.increment(ec)) {
        names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

bool LocalSystem::exists(const fs::path& path) const {
    std::error_code ec;
    return fs::exists(fs::symlink_status(resolve(path), ec));
}

bool LocalSystem::is_dir(const fs::path& path) const {
    std::error_code ec;
    return fs::is_directory(resolve(path), ec);
}

std::optional<fs::path> LocalSystem::read_link(const fs::path& path) const {
    std::error_code ec;
    auto target = fs::read_symlink(resolve(path), ec);
    if (ec) {
        return std::nullopt;
    }
    return target;
}

std::optional<DiskSpace> LocalSystem::disk_space(const fs::path& path) const {
    struct statvfs st {};
    if (::statvfs(resolve(path).c_str(), &st) != 0) {
        return std::nullopt;
    }
    return DiskSpace{.total_bytes = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize,
                     .free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize};
}

std::optional<FileStamp> LocalSystem::stamp(const fs::path& path) const {
    struct stat st {};
    if (::stat(resolve(path).c_str(), &st) != 0) {
        return std::nullopt;
    }
    return FileStamp{.size = static_cast<std::uint64_t>(st.st_size),
                     .inode = static_cast<std::uint64_t>(st.st_ino),
                     .mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                                 st.st_mtim.tv_nsec};
}

std::optional<FileInfo> LocalSystem::lstat(const fs::path& path) const {
    struct stat st {};
    if (::lstat(resolve(path).c_str(), &st) != 0) {
        return std::nullopt;
    }
    return FileInfo{.uid = st.st_uid, .gid = st.st_gid, .mode = st.st_mode};
}

std::optional<FileInfo> LocalSystem::stat(const fs::path& path) const {
    struct stat st {};
    if (::stat(resolve(path).c_str(), &st) != 0) {
        return std::nullopt;
    }
    return FileInfo{.uid = st.st_uid, .gid = st.st_gid, .mode = st.st_mode};
}

namespace {

/// Reads up to `size` bytes, fewer only at end of file; -1 on error.
ssize_t read_full(int fd, char* buf, std::size_t size) {
    std::size_t got = 0;
    while (got < size) {
        const auto n = ::read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return -1;
        }
        if (n == 0) {
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(got);
}

} // namespace

std::optional<bool> LocalSystem::same_content(const fs::path& a, const fs::path& b) const {
    struct Closer {
        int fd;
        ~Closer() {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    };
    const Closer fa{::open(resolve(a).c_str(), O_RDONLY | O_CLOEXEC)};
    const Closer fb{::open(resolve(b).c_str(), O_RDONLY | O_CLOEXEC)};
    struct stat sa {};
    struct stat sb {};
    if (fa.fd < 0 || fb.fd < 0 || ::fstat(fa.fd, &sa) != 0 || ::fstat(fb.fd, &sb) != 0 ||
        !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode)) {
        return std::nullopt;
    }
    if (sa.st_size != sb.st_size) {
        return false; // the common case of a changed binary: no byte read
    }
    if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) {
        return true;
    }
    // Side by side, 64 KiB at a time, stopping at the first difference.
    std::vector<char> ba(65536);
    std::vector<char> bb(65536);
    for (;;) {
        const auto na = read_full(fa.fd, ba.data(), ba.size());
        const auto nb = read_full(fb.fd, bb.data(), bb.size());
        if (na < 0 || nb < 0) {
            return std::nullopt;
        }
        if (na != nb || std::memcmp(ba.data(), bb.data(), static_cast<std::size_t>(na)) != 0) {
            return false;
        }
        if (na == 0) {
            return true;
        }
    }
}

namespace {

CommandResult run_logged(const Command& cmd, bool changes) {
    const auto start = std::chrono::steady_clock::now();
    auto result = detail::run_process(cmd);
    detail::log_command(cmd, result, std::chrono::steady_clock::now() - start, changes);
    return result;
}

} // namespace

CommandResult LocalSystem::query(const Command& cmd) const {
    return run_logged(cmd, false);
}

CommandResult LocalSystem::run(const Command& cmd) {
    return run_logged(cmd, true);
}

FetchResult LocalSystem::fetch(const FetchRequest& req) const {
    return detail::http_fetch(req, *this);
}

std::optional<std::string> LocalSystem::env(std::string_view name) const {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) {
        return std::nullopt;
    }
    return std::string(v);
}

std::chrono::system_clock::time_point LocalSystem::now() const {
    return std::chrono::system_clock::now();
}

unsigned LocalSystem::effective_uid() const {
    return ::geteuid();
}

std::string LocalSystem::machine() const {
    struct utsname u {};
    ::uname(&u);
    return u.machine;
}

bool LocalSystem::interactive() const {
    return ::isatty(0) != 0 && ::isatty(1) != 0;
}

std::optional<int> LocalSystem::lock_holder(const fs::path& path) const {
    const int fd = ::open(resolve(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const int rc = ::fcntl(fd, F_GETLK, &fl);
    if (rc == 0 && fl.l_type != F_UNLCK) {
        ::close(fd);
        return static_cast<int>(fl.l_pid);
    }
    // dnf locks with flock(2) on a pid file (dnf/lock.py: /var/lib/dnf/rpmdb_lock.pid), which
    // F_GETLK cannot see. A shared flock that cannot be had means someone holds it exclusively;
    // the holder's pid is the file's content. The probe's own lock is dropped at once.
    std::optional<int> holder;
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            char buf[24] = {};
            const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
            const int pid = n > 0 ? std::atoi(buf) : 0; // NOLINT(cert-err34-c): garbage is 0 → -1
            holder = pid > 0 ? pid : -1;
        }
    } else {
        ::flock(fd, LOCK_UN);
    }
    ::close(fd);
    return holder;
}

void LocalSystem::write_file_atomic(const fs::path& path, std::string_view content, unsigned mode) {
    const auto target = resolve(path);
    (void)make_dirs_durable(target.parent_path()); // mkstemp below reports what went wrong
    auto tmp_name = target.string() + ".gpuprov-tmp-XXXXXX";
    const int fd = ::mkstemp(tmp_name.data());
    if (fd < 0) {
        fail("cannot create a temporary file beside", target);
    }
    std::size_t done = 0;
    while (done < content.size()) {
        const auto n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            ::close(fd);
            ::unlink(tmp_name.c_str());
            fail("cannot write", target);
        }
        done += static_cast<std::size_t>(n);
    }
    // A file replaced keeps its owner and group (a config file another package gave to a
    // service's group stays readable by it); a new one is the writer's. Only root can give a
    // file away, so for anyone else this is a no-op.
    struct stat old {};
    if (::lstat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode) &&
        (old.st_uid != ::geteuid() || old.st_gid != ::getegid())) {
        (void)::fchown(fd, old.st_uid, old.st_gid);
    }
    if (::fchmod(fd, static_cast<mode_t>(mode)) != 0 || ::fsync(fd) != 0) {
        ::close(fd);
        ::unlink(tmp_name.c_str());
        fail("cannot sync", target);
    }
    ::close(fd);
    if (::rename(tmp_name.c_str(), target.c_str()) != 0) {
        ::unlink(tmp_name.c_str());
        fail("cannot rename into place", target);
    }
    // The rename is durable only once the directory entry is on disk.
    fsync_dir(target.parent_path());
}

void LocalSystem::remove_file(const fs::path& path) {
    const auto target = resolve(path);
    if (::unlink(target.c_str()) != 0 && errno != ENOENT) {
        fail("cannot remove", target);
    }
}

void LocalSystem::make_dirs(const fs::path& path) {
    if (!make_dirs_durable(resolve(path))) {
        throw HostError(fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
    }
}

void LocalSystem::make_symlink(const fs::path& target, const fs::path& link) {
    // The target is kept as given: it names a path as the host sees it, which is also what the
    // process reading the link (apt, run on the host) sees.
    const auto where = resolve(link);
    if (::unlink(where.c_str()) != 0 && errno != ENOENT) {
        fail("cannot replace", where);
    }
    if (::symlink(target.c_str(), where.c_str()) != 0) {
        fail("cannot create symlink", where);
    }
}

std::unique_ptr<FileLock> LocalSystem::try_lock(const fs::path& path) {
    const auto target = resolve(path);
    (void)make_dirs_durable(target.parent_path()); // open below reports what went wrong
    const int fd = ::open(target.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fail("cannot open lock file", target);
    }
    // Readable by everyone whatever the umask: `gpuprov status` without root probes it to tell
    // a live run from a killed one (last_run_result).
    (void)::fchmod(fd, 0644);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return nullptr;
    }
    return std::make_unique<FlockLock>(fd);
}

void LocalSystem::sleep(std::chrono::milliseconds d) const {
    // A stop request cuts the wait short (the dpkg lock wait runs for minutes): the caller's
    // next command is refused and the engine ends the run. A wait that starts with a stop
    // already pending lasts at most 100 ms, so a retry loop that does not check
    // stop_requested() itself slows down to a crawl instead of spinning until its deadline.
    const bool stop_at_entry = stop_requested();
    if (stop_at_entry) {
        d = std::min(d, std::chrono::milliseconds(100));
    }
    const auto until = std::chrono::steady_clock::now() + d;
    for (;;) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0 || (!stop_at_entry && stop_requested())) {
            return;
        }
        // With no self-pipe (handlers not installed) poll ignores the negative fd and sleeps.
        pollfd wake{stop_at_entry ? -1 : detail::stop_wakeup_fd(), POLLIN, 0};
        ::poll(&wake, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    }
}

} // namespace gpuprov
