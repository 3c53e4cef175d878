#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <gpuprov/error.hpp>
#include <gpuprov/log_file.hpp>
#include <mutex>
#include <spdlog/sinks/base_sink.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuprov {

namespace {

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& why) {
    throw HostError(fmt::format("{}: {}", path.string(), why));
}

std::string type_name(mode_t mode) {
    switch (mode & S_IFMT) {
    case S_IFIFO:
        return "a FIFO";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    case S_IFDIR:
        return "a directory";
    default:
        return "not a regular file";
    }
}

class FdSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    explicit FdSink(int fd) : m_fd(fd) {}
    FdSink(const FdSink&) = delete;
    FdSink& operator=(const FdSink&) = delete;
    ~FdSink() override { ::close(m_fd); }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t buf;
        formatter_->format(msg, buf);
        const char* p = buf.data();
        auto left = buf.size();
        while (left > 0) {
            const auto n = ::write(m_fd, p, left);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return; // a full disk must not stop the run; the console still has it
            }
            p += n;
            left -= static_cast<std::size_t>(n);
        }
    }
    void flush_() override {}

private:
    int m_fd;
};

} // namespace

int open_log_file(const std::filesystem::path& path) {
    // O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader, forever; with
    // it, the open fails (ENXIO) or returns at once and fstat below refuses the FIFO.
    const int fd = ::open(
        path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0640);
    if (fd < 0) {
        const int e = errno;
        if (e == ELOOP) {
            refuse(path, "is a symbolic link; gpuprov appends only to a regular file it owns "
                         "(remove the link)");
        }
        if (e == ENXIO) {
            refuse(path, "is a FIFO with no reader; gpuprov appends only to a regular file "
                         "(remove it)");
        }
        refuse(path, std::strerror(e));
    }
    struct stat st {};
    std::string why;
    if (::fstat(fd, &st) != 0) {
        why = std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why =
            "is " + type_name(st.st_mode) + "; gpuprov appends only to a regular file (remove it)";
    } else if (st.st_nlink != 1) {
        why = fmt::format("has {} hard links, so appending to it would also change another "
                          "name's file (remove it)",
                          st.st_nlink);
    } else if (st.st_uid != ::geteuid()) {
        why = fmt::format("is owned by uid {}, not by gpuprov's uid {} (remove it, or chown it)",
                          st.st_uid, ::geteuid());
    } else if (const int flags = ::fcntl(fd, F_GETFL);
               flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        why = std::strerror(errno);
    }
    if (!why.empty()) {
        ::close(fd);
        refuse(path, why);
    }
    return fd;
}

std::shared_ptr<spdlog::sinks::sink> make_log_file_sink(const std::filesystem::path& path) {
    return std::make_shared<FdSink>(open_log_file(path));
}

} // namespace gpuprov
