#pragma once
// The one door to the host. Facts, steps and checks touch files, processes and the network only
// through this interface; LocalSystem is the real host, tests use FakeSystem.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprov {

using namespace std::chrono_literals;

/// A process to run: an argv vector, never a shell string.
struct Command {
    std::vector<std::string> argv;
    std::chrono::milliseconds timeout{300s};
    /// Set on top of the child's environment, which is the same for every caller: PATH
    /// /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin, HOME (root's for root),
    /// and only the locale, terminal, time zone, proxy and SOURCE_DATE_EPOCH variables of
    /// gpuprov's own environment (src/system/child_env.cpp says why).
    std::map<std::string, std::string> env;
    std::optional<std::string> stdin_data; ///< fed to stdin; otherwise stdin is at EOF
    /// Killed (with its process group) when neither stdout nor stderr produced a byte for this
    /// long; 0 = never. `timeout` stays the outer bound. For long installs, whose total time
    /// nobody can predict but whose silence means a hang.
    std::chrono::milliseconds idle_timeout{0};
    /// On a stop request (SIGINT, SIGTERM, SIGHUP; gpuprov/interrupt.hpp) this command runs to
    /// completion instead of being stopped: set on dpkg/apt transactions, which must not be
    /// left half-configured.
    bool finish_on_stop = false;
    /// Called with each piece of stdout as it arrives, on gpuprov's thread, while the command
    /// runs (progress of a long install). The whole output is still in CommandResult::out.
    std::function<void(std::string_view)> on_stdout;
    /// The directory the command starts in; empty: gpuprov's own. Set where a program would
    /// otherwise read code from wherever the operator happened to be (python3 puts its cwd on
    /// sys.path), so it starts somewhere only root can write.
    std::filesystem::path cwd;
    /// false: the log gets the summary line with the size of stdout and stderr, never their
    /// text. For the probes the metrics timer runs every minute, whose output (the whole boot's
    /// kernel log) only feeds a parser and would fill /var/log.
    bool log_output = true;
};

struct CommandResult {
    int exit_code = 0;      ///< the exit status; 128+N when killed by signal N
    bool timed_out = false; ///< killed because it ran past Command::timeout
    bool not_found = false; ///< argv[0] could not be executed (missing, not executable)
    bool idle = false;      ///< timed out because it was silent past Command::idle_timeout
    /// Stopped (or never started) because gpuprov was asked to stop (gpuprov/interrupt.hpp).
    bool interrupted = false;
    int pid = 0; ///< the child's pid, also its process group; 0 when it never started
    std::string out;
    std::string err;
    [[nodiscard]] bool ok() const {
        return exit_code == 0 && !timed_out && !not_found && !interrupted;
    }
};

struct FetchRequest {
    std::string url;
    std::chrono::milliseconds connect_timeout{10s};
    std::chrono::milliseconds total_timeout{120s};
    int attempts = 4; ///< tries in all, with exponential backoff
    std::chrono::milliseconds first_backoff{500ms};
    std::size_t max_bytes = 64u << 20; ///< larger bodies are refused
};

struct FetchResult {
    bool ok = false;
    long http_status = 0; ///< 0 when no HTTP answer came (DNS, connect, TLS, timeout)
    std::string body;
    std::string error; ///< why it failed: "HTTP 500", the curl error text, "truncated", ...
    int attempts = 0;  ///< how many tries were made
};

struct DiskSpace {
    std::uint64_t total_bytes = 0;
    std::uint64_t free_bytes = 0; ///< available to unprivileged users (f_bavail)
};

/// Identifies one version of a file: any rewrite (dpkg renames a new status file into place)
/// changes it.
struct FileStamp {
    std::uint64_t size = 0;
    std::uint64_t inode = 0;
    std::int64_t mtime_ns = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

/// What lstat(2) says about a path itself (a symbolic link is not followed): enough to decide
/// whether anyone but root could have written it (gpuprov/local_trust.hpp).
struct FileInfo {
    unsigned uid = 0;
    unsigned gid = 0;
    unsigned mode = 0; ///< st_mode: the type bits (S_IFMT) and the permission bits
};

/// Held while alive; releasing the object releases the lock.
class FileLock {
public:
    virtual ~FileLock() = default;
};

class System {
public:
    virtual ~System() = default;

    // ---- reads (const: plan, facts and checks can only read) ----
    /// File contents, or nullopt when missing or unreadable.
    [[nodiscard]] virtual std::optional<std::string>
    read_file(const std::filesystem::path&) const = 0;
    /// Entry names in a directory, sorted; empty when missing.
    [[nodiscard]] virtual std::vector<std::string> list_dir(const std::filesystem::path&) const = 0;
    [[nodiscard]] virtual bool exists(const std::filesystem::path&) const = 0;
    [[nodiscard]] virtual bool is_dir(const std::filesystem::path&) const = 0;
    /// Target of a symbolic link, or nullopt when the path is not a link.
    [[nodiscard]] virtual std::optional<std::filesystem::path>
    read_link(const std::filesystem::path&) const = 0;
    [[nodiscard]] virtual std::optional<DiskSpace>
    disk_space(const std::filesystem::path&) const = 0;
    /// Size, inode and modification time, so parsed copies of big files can be reused safely.
    [[nodiscard]] virtual std::optional<FileStamp> stamp(const std::filesystem::path&) const = 0;
    /// Owner, group and mode of the path itself (links not followed); nullopt when missing.
    [[nodiscard]] virtual std::optional<FileInfo> lstat(const std::filesystem::path&) const = 0;
    /// Owner, group and mode of what the path resolves to (links followed); nullopt when it is
    /// missing or a link leads nowhere.
    [[nodiscard]] virtual std::optional<FileInfo> stat(const std::filesystem::path&) const = 0;
    /// Whether two files hold the same bytes, read side by side in small pieces (a 140 MB
    /// binary costs no more memory than a small one) and only when their sizes agree; nullopt
    /// when either cannot be read.
    [[nodiscard]] virtual std::optional<bool>
    same_content(const std::filesystem::path& a, const std::filesystem::path& b) const = 0;
    /// Runs a read-only probe (nvidia-smi, dpkg-query, gpgv). Never throws on non-zero exit.
    [[nodiscard]] virtual CommandResult query(const Command&) const = 0;
    /// Downloads a URL with retries and backoff (libcurl in LocalSystem).
    [[nodiscard]] virtual FetchResult fetch(const FetchRequest&) const = 0;
    [[nodiscard]] virtual std::optional<std::string> env(std::string_view name) const = 0;
    [[nodiscard]] virtual std::chrono::system_clock::time_point now() const = 0;
    [[nodiscard]] virtual unsigned effective_uid() const = 0;
    /// `uname -m`: x86_64, aarch64.
    [[nodiscard]] virtual std::string machine() const = 0;
    /// Whether stdin and stdout are a terminal (apply asks for confirmation only then).
    [[nodiscard]] virtual bool interactive() const = 0;
    /// PID of a process holding a POSIX (fcntl) write lock on `path`, as dpkg and apt take on
    /// /var/lib/dpkg/lock-frontend, or an exclusive flock, as dnf takes on its pid files (the
    /// pid is then the file's content; -1 when it holds none); nullopt when free or missing.
    [[nodiscard]] virtual std::optional<int> lock_holder(const std::filesystem::path&) const = 0;

    // ---- changes ----
    /// Runs a command that may change the host. Never throws on non-zero exit.
    virtual CommandResult run(const Command&) = 0;
    /// Writes via a temp file in the same directory, fsync, rename: readers see old or new,
    /// never half. Creates missing parent directories. Throws HostError on failure.
    virtual void write_file_atomic(const std::filesystem::path&, std::string_view content,
                                   unsigned mode = 0644) = 0;
    /// Removes a file; a missing file is not an error. Throws HostError on failure.
    virtual void remove_file(const std::filesystem::path&) = 0;
    virtual void make_dirs(const std::filesystem::path&) = 0;
    /// Makes `link` a symbolic link to `target`, replacing a link or file already there. Used
    /// for gpuprov's private scratch trees (apt's simulation view), never for host config.
    virtual void make_symlink(const std::filesystem::path& target,
                              const std::filesystem::path& link) = 0;
    /// Takes an exclusive flock on `path` (created if missing) without waiting; nullptr when
    /// another process holds it.
    virtual std::unique_ptr<FileLock> try_lock(const std::filesystem::path&) = 0;
    /// Waits (for backoff between retries and lock polls). FakeSystem only advances its clock.
    virtual void sleep(std::chrono::milliseconds) const = 0;
};

/// Runs `cmd` and throws CommandError (argv, exit code, stderr tail) unless it succeeded.
CommandResult run_checked(System& sys, const Command& cmd);
/// Formats argv for messages and plans, quoting words that need it. Display only: never executed.
[[nodiscard]] std::string display_argv(const std::vector<std::string>& argv);

} // namespace gpuprov
