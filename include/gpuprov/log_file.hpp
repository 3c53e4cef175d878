#pragma once
// gpuprov's log file (/var/log/gpuprov.log as root). /var/log is writable by more than root on
// some distros (Ubuntu: group syslog), so what is there when gpuprov opens it is not trusted: a
// link could point gpuprov's appends at /etc/shadow, a FIFO would block every root run forever.
#include <filesystem>
#include <memory>

namespace spdlog::sinks {
class sink;
} // namespace spdlog::sinks

namespace gpuprov {

/// Opens `path` for appending (created 0640 when missing) and returns its descriptor
/// (close-on-exec). Refused with HostError, saying why: a symbolic link (O_NOFOLLOW), anything
/// but a regular file (a FIFO or a device; the open does not wait for a FIFO's reader), a file
/// with more than one link (a hard link to another file), or one owned by another user than
/// gpuprov's.
[[nodiscard]] int open_log_file(const std::filesystem::path& path);

/// An spdlog sink appending to open_log_file(path); HostError when it is refused. A write that
/// fails (a full disk) is dropped: the log must not stop a run.
[[nodiscard]] std::shared_ptr<spdlog::sinks::sink>
make_log_file_sink(const std::filesystem::path& path);

} // namespace gpuprov
