#include "process.hpp"

#include "child_env.hpp"
#include "interrupt_detail.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gpuprov/interrupt.hpp>
#include <optional>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace gpuprov::detail {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What the child wrote before it exited is still drained for this long; anything later comes
// from a daemon it started that kept the pipes (a service a postinst forked), which is not ours
// to wait for.
constexpr milliseconds kDrainAfterExit{200};
// Between SIGTERM and SIGKILL: long enough for apt or dpkg to remove a lock and exit.
constexpr milliseconds kTermGrace{2000};
// After SIGKILL: a process in uninterruptible sleep (nvidia-smi inside a wedged driver) dies
// only when the kernel call returns, maybe never. gpuprov does not wait for that forever.
constexpr milliseconds kReapAfterKill{5000};
// While a finish_on_stop command runs, a further stop signal kills it only this long after the
// first, so a hurried double Ctrl-C does not abort a package transaction.
constexpr milliseconds kEscalateAfter{1000};

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    Fd(Fd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            reset();
            m_fd = std::exchange(o.m_fd, -1);
        }
        return *this;
    }
    [[nodiscard]] int get() const { return m_fd; }
    [[nodiscard]] bool open() const { return m_fd >= 0; }
    void reset() {
        if (m_fd >= 0) {
            ::close(m_fd);
            m_fd = -1;
        }
    }

private:
    int m_fd = -1;
};

struct Pipe {
    Fd read;
    Fd write;
};

// Nothing of gpuprov's but the three pipes reaches the child: a daemon a postinst starts must
// not inherit gpuprov's lock, log file or a library's descriptor that happens to lack O_CLOEXEC.
// glibc 2.34 has posix_spawn_file_actions_addclosefrom_np; it is looked up at run time, so the
// one binary also runs on older glibc (EL 8 has 2.28), where each descriptor above stderr open
// without FD_CLOEXEC gets a close action instead.
void close_inherited_fds(posix_spawn_file_actions_t* actions) {
    using Closefrom = int (*)(posix_spawn_file_actions_t*, int);
    static const auto closefrom = reinterpret_cast<Closefrom>(
        ::dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addclosefrom_np"));
    if (closefrom != nullptr && closefrom(actions, 3) == 0) {
        return;
    }
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) {
        return;
    }
    const int own = ::dirfd(dir);
    while (const dirent* entry = ::readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || fd < 3 || fd == own) {
            continue;
        }
        const int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
        if (flags >= 0 && (flags & FD_CLOEXEC) == 0) {
            posix_spawn_file_actions_addclose(actions, static_cast<int>(fd));
        }
    }
    ::closedir(dir);
}

bool g_force_chdir_fallback = false;

// The child starts in Command::cwd. glibc 2.29 has posix_spawn_file_actions_addchdir_np, looked
// up at run time as above; on older glibc (EL 8's 2.28) gpuprov moves itself there around
// posix_spawn and back (ParentCwd), which is safe since no other thread of gpuprov's runs
// anything meanwhile.
bool add_chdir(posix_spawn_file_actions_t* actions, const std::filesystem::path& dir) {
    using Chdir = int (*)(posix_spawn_file_actions_t*, const char*);
    static const auto addchdir =
        reinterpret_cast<Chdir>(::dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addchdir_np"));
    return !g_force_chdir_fallback && addchdir != nullptr && addchdir(actions, dir.c_str()) == 0;
}

/// gpuprov's own working directory moved to `dir` while alive, and back afterwards.
class ParentCwd {
public:
    ParentCwd() = default;
    ParentCwd(const ParentCwd&) = delete;
    ParentCwd& operator=(const ParentCwd&) = delete;
    ~ParentCwd() { leave(); }
    /// Back where gpuprov was (at once after the spawn: nothing else runs from there).
    void leave() {
        if (m_saved >= 0) {
            (void)::fchdir(m_saved);
            ::close(m_saved);
            m_saved = -1;
        }
    }
    /// false, with errno set and nothing changed, when gpuprov's own directory cannot be
    /// held open (to come back to) or `dir` cannot be entered.
    bool enter(const std::filesystem::path& dir) {
        m_saved = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (m_saved < 0) {
            return false;
        }
        if (::chdir(dir.c_str()) != 0) {
            const int e = errno;
            ::close(m_saved);
            m_saved = -1;
            errno = e;
            return false;
        }
        return true;
    }

private:
    int m_saved = -1;
};

// A pipe whose ends are both above stderr: when gpuprov itself runs with 0, 1 or 2 closed, a
// pipe end could otherwise be fd 0..2 and be overwritten by the child's dup2 of another.
std::optional<Pipe> make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return std::nullopt;
    }
    for (int& fd : fds) {
        if (fd < 3) {
            const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
            ::close(fd);
            fd = moved;
        }
    }
    if (fds[0] < 0 || fds[1] < 0) {
        for (int fd : fds) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
        return std::nullopt;
    }
    return Pipe{Fd(fds[0]), Fd(fds[1])};
}

std::vector<std::string> parent_environment() {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        env.emplace_back(*e);
    }
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    out.reserve(v.size() + 1);
    for (auto& s : v) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

// A write to the child's stdin after it closed it must fail with EPIPE, not kill gpuprov. The
// signal is blocked in this thread for the write, and a SIGPIPE it raised is consumed, so
// gpuprov's own disposition (and so its children's) is never touched for this.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
    sigset_t pipe_only;
    sigset_t old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    sigset_t pending;
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    const auto put = ::write(fd, data, size);
    const int saved_errno = errno;
    if (put < 0 && saved_errno == EPIPE && !was_pending) {
        const timespec now{};
        ::sigtimedwait(&pipe_only, nullptr, &now);
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = saved_errno;
    return put;
}

// Readable once the process has exited, so poll() wakes at its exit; -1 where the kernel (< 5.3)
// or a seccomp filter refuses, and the runner then checks every 50 ms instead.
Fd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
    (void)pid;
    return Fd();
#endif
}

std::string seconds_text(milliseconds ms) {
    if (ms.count() % 1000 == 0) {
        return fmt::format("{} s", ms.count() / 1000);
    }
    return fmt::format("{:.1f} s", static_cast<double>(ms.count()) / 1000.0);
}

int ceil_ms(Clock::duration d) {
    const auto ms = std::chrono::ceil<milliseconds>(d).count();
    return static_cast<int>(std::clamp<long long>(ms, 0, 60'000));
}

enum class End { running, exited, deadline, idle, stopped };

class Runner {
public:
    Runner(const Command& cmd, pid_t pid, Fd in, Fd out, Fd err)
        : m_cmd(cmd), m_pid(pid), m_pidfd(open_pidfd(pid)), m_in(std::move(in)),
          m_out(std::move(out)), m_err(std::move(err)), m_input(cmd.stdin_data.value_or("")) {}

    CommandResult run() {
        const auto start = Clock::now();
        m_deadline = start + m_cmd.timeout;
        m_last_output = start;
        // 0, not stop_count(): run_process refused to start while a stop was pending, so any
        // stop counted by now arrived after that check and is this command's to handle.
        m_seen_stops = 0;
        if (m_input.empty()) {
            m_in.reset();
        } else {
            ::fcntl(m_in.get(), F_SETFL, O_NONBLOCK);
        }
        set_running_child(m_pid, m_cmd.finish_on_stop);
        End end = End::running;
        Clock::time_point exit_seen{};
        for (;;) {
            const auto now = Clock::now();
            if (!m_exited && child_exited()) {
                m_exited = true;
                exit_seen = now;
                m_in.reset();
            }
            if (m_exited) {
                if ((!m_out.open() && !m_err.open()) || now - exit_seen >= kDrainAfterExit) {
                    end = End::exited;
                    break;
                }
                pump(std::min(poll_cap(), exit_seen + kDrainAfterExit - now));
                continue;
            }
            end = watch(now);
            if (end != End::running) {
                break;
            }
            pump(next_wait(now));
        }
        if (end != End::exited) {
            end_group();
        }
        reap();
        set_running_child(0, false);
        return result(end);
    }

private:
    [[nodiscard]] Clock::duration poll_cap() const {
        return m_pidfd.open() ? milliseconds(1000) : milliseconds(50);
    }

    [[nodiscard]] Clock::duration next_wait(Clock::time_point now) const {
        auto wait = std::min(poll_cap(), m_deadline - now);
        if (m_cmd.idle_timeout.count() > 0) {
            wait = std::min(wait, m_last_output + m_cmd.idle_timeout - now);
        }
        return wait;
    }

    // Whether the child has exited, without reaping it: until it is reaped its pid, which is
    // also its process group's id, cannot be reused, so signalling the group stays safe.
    bool child_exited() {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
            return info.si_pid == m_pid;
        }
        return errno == ECHILD; // reaped behind our back: nothing left to wait for
    }

    // Why the still-running child must end now, if it must.
    End watch(Clock::time_point now) {
        if (now >= m_deadline) {
            return End::deadline;
        }
        if (m_cmd.idle_timeout.count() > 0 && now - m_last_output >= m_cmd.idle_timeout) {
            return End::idle;
        }
        const unsigned stops = stop_count();
        if (stops < m_seen_stops) {
            m_seen_stops = stops; // cleared (tests)
        }
        if (stops == m_seen_stops) {
            return End::running;
        }
        m_seen_stops = stops;
        if (!m_cmd.finish_on_stop) {
            return End::stopped;
        }
        if (!m_announced) {
            m_announced = now;
            spdlog::warn("{}: letting `{}` finish so dpkg is not left half-configured; gpuprov "
                         "stops after it (signal again, after a second, to kill it now)",
                         stop_signal_name(), display_argv(m_cmd.argv));
        } else if (now - *m_announced >= kEscalateAfter) {
            spdlog::warn("stopping `{}` now, as asked again: dpkg may be left half-configured; "
                         "the next `gpuprov apply` repairs it first (dpkg --configure -a)",
                         display_argv(m_cmd.argv));
            set_running_child(m_pid, false); // a further signal quits gpuprov at once
            return End::stopped;
        }
        return End::running;
    }

    // One poll round of at most `wait`: reads whatever the child wrote, feeds its stdin, and
    // wakes early for its exit or a stop request.
    void pump(Clock::duration wait) {
        pollfd fds[5];
        nfds_t n = 0;
        const auto add = [&](int fd, short events) {
            if (fd < 0) {
                return -1;
            }
            fds[n] = {fd, events, 0};
            return static_cast<int>(n++);
        };
        const int i_out = add(m_out.get(), POLLIN);
        const int i_err = add(m_err.get(), POLLIN);
        const int i_in = add(m_in.get(), POLLOUT);
        const int i_pid = m_exited ? -1 : add(m_pidfd.get(), POLLIN);
        const int i_stop = add(stop_wakeup_fd(), POLLIN);
        (void)i_pid; // its only job is to end the wait
        if (::poll(fds, n, ceil_ms(wait)) <= 0) {
            return; // timeout, or EINTR: the caller looks at the clock and the child again
        }
        if (i_stop >= 0 && fds[i_stop].revents != 0) {
            drain_stop_wakeups();
        }
        read_from(i_out >= 0 ? fds[i_out].revents : 0, m_out, m_text_out);
        read_from(i_err >= 0 ? fds[i_err].revents : 0, m_err, m_text_err);
        if (i_in >= 0 && (fds[i_in].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
            const auto put = write_without_sigpipe(m_in.get(), m_input.data() + m_written,
                                                   m_input.size() - m_written);
            if (put > 0) {
                m_written += static_cast<std::size_t>(put);
            }
            if ((put < 0 && errno != EAGAIN && errno != EINTR) || m_written >= m_input.size()) {
                m_in.reset(); // done, or the child closed its stdin
            }
        }
    }

    void read_from(short revents, Fd& fd, std::string& sink) {
        if ((revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
            return;
        }
        char buf[65536];
        const auto got = ::read(fd.get(), buf, sizeof buf);
        if (got > 0) {
            sink.append(buf, static_cast<std::size_t>(got));
            m_last_output = Clock::now();
            if (&sink == &m_text_out && m_cmd.on_stdout) {
                m_cmd.on_stdout(std::string_view(buf, static_cast<std::size_t>(got)));
            }
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            fd.reset();
        }
    }

    // SIGTERM to the whole group, pipes still read during the grace so nobody blocks writing
    // its last words, then SIGKILL to whatever of the group is left (the child is not reaped
    // yet, so the group id is still ours).
    void end_group() {
        ::kill(-m_pid, SIGTERM);
        const auto until = Clock::now() + kTermGrace;
        while (!m_exited) {
            const auto now = Clock::now();
            if (now >= until) {
                break;
            }
            pump(std::min(poll_cap(), until - now));
            m_exited = child_exited();
        }
        ::kill(-m_pid, SIGKILL);
    }

    void reap() {
        const auto until = Clock::now() + kReapAfterKill;
        for (;;) {
            int status = 0;
            const auto got = ::waitpid(m_pid, &status, WNOHANG);
            if (got == m_pid) {
                m_status = status;
                return;
            }
            if (got < 0 && errno != EINTR) {
                return; // ECHILD: someone reaped it (SIGCHLD ignored); its status is lost
            }
            if (Clock::now() >= until) {
                m_stuck = true;
                return;
            }
            // Keep reading: what is left of the group may still be flushing into the pipes.
            pump(milliseconds(20));
        }
    }

    CommandResult result(End end) {
        CommandResult r;
        r.pid = m_pid;
        r.out = std::move(m_text_out);
        r.err = std::move(m_text_err);
        if (m_status && WIFEXITED(*m_status)) {
            r.exit_code = WEXITSTATUS(*m_status);
        } else if (m_status && WIFSIGNALED(*m_status)) {
            r.exit_code = 128 + WTERMSIG(*m_status);
        } else if (m_stuck) {
            r.exit_code = 128 + SIGKILL;
            r.err +=
                fmt::format("\n(pid {} still running after SIGKILL: stuck in the kernel?)", m_pid);
        } else {
            r.exit_code = 255; // never report success for an exit status nobody saw
            r.err += "\n(exit status lost: the child was reaped elsewhere)";
        }
        switch (end) {
        case End::deadline:
            r.timed_out = true;
            r.err += fmt::format("\n(killed after {} ms timeout)", m_cmd.timeout.count());
            break;
        case End::idle:
            r.timed_out = true;
            r.idle = true;
            r.err += fmt::format("\n(killed: no output for {})", seconds_text(m_cmd.idle_timeout));
            break;
        case End::stopped:
            r.interrupted = true;
            r.err += fmt::format("\n(stopped: gpuprov received {})", stop_signal_name());
            break;
        case End::running:
        case End::exited:
            break;
        }
        return r;
    }

    const Command& m_cmd;
    pid_t m_pid;
    Fd m_pidfd;
    Fd m_in;
    Fd m_out;
    Fd m_err;
    std::string m_input;
    std::size_t m_written = 0;
    std::string m_text_out;
    std::string m_text_err;
    Clock::time_point m_deadline{};
    Clock::time_point m_last_output{};
    unsigned m_seen_stops = 0;
    std::optional<Clock::time_point> m_announced;
    bool m_exited = false;
    bool m_stuck = false;
    std::optional<int> m_status;
};

CommandResult not_started(std::string why, bool not_found) {
    CommandResult r;
    r.exit_code = 127;
    r.not_found = not_found;
    r.err = std::move(why);
    return r;
}

} // namespace

void force_chdir_fallback(bool on) {
    g_force_chdir_fallback = on;
}

CommandResult run_process(const Command& cmd) {
    if (cmd.argv.empty()) {
        return not_started("empty argv", true);
    }
    if (stop_requested()) {
        // Nothing new starts once gpuprov is stopping, a dpkg transaction least of all.
        auto r = not_started(
            fmt::format("not started: gpuprov is stopping ({} received)", stop_signal_name()),
            false);
        r.exit_code = stop_exit_code();
        r.interrupted = true;
        return r;
    }
    auto env_strings = child_environment(cmd, parent_environment(), ::geteuid());
    const auto exe = find_executable(cmd.argv[0], env_strings);
    if (exe.empty()) {
        const auto path =
            std::find_if(env_strings.begin(), env_strings.end(),
                         [](const std::string& e) { return e.rfind("PATH=", 0) == 0; });
        return not_started(cmd.argv[0] + ": command not found in " +
                               (path == env_strings.end() ? std::string("an empty PATH") : *path),
                           true);
    }
    if (!cmd.cwd.empty()) {
        struct stat st {};
        const bool found = ::stat(cmd.cwd.c_str(), &st) == 0;
        if (!found || !S_ISDIR(st.st_mode)) {
            return not_started(fmt::format("{}: cannot start in {}: {}", cmd.argv[0],
                                           cmd.cwd.string(),
                                           found ? "not a directory" : std::strerror(errno)),
                               false);
        }
    }
    auto in = make_pipe();
    auto out = make_pipe();
    auto err = make_pipe();
    if (!in || !out || !err) {
        return not_started(std::string("pipe: ") + std::strerror(errno), true);
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in->read.get(), 0);
    posix_spawn_file_actions_adddup2(&actions, out->write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err->write.get(), 2);
    close_inherited_fds(&actions);
    ParentCwd parent_cwd;
    if (!cmd.cwd.empty() && !add_chdir(&actions, cmd.cwd) && !parent_cwd.enter(cmd.cwd)) {
        const int e = errno;
        posix_spawn_file_actions_destroy(&actions);
        return not_started(fmt::format("{}: cannot start in {}: {}", cmd.argv[0], cmd.cwd.string(),
                                       std::strerror(e)),
                           false);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Own process group, so a deadline or a stop ends the command and everything it started.
    // Every signal starts at its default disposition and unblocked: gpuprov ignores SIGPIPE
    // for itself and may have inherited ignored signals (systemd's IgnoreSIGPIPE=yes, nohup),
    // and apt, dpkg and maintainer scripts must see none of that.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigdefault(&attr, &all);

    auto argv_copy = cmd.argv;
    auto argv = c_strings(argv_copy);
    auto envp = c_strings(env_strings);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
    parent_cwd.leave();
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        return not_started(cmd.argv[0] + ": " + std::strerror(rc), true);
    }
    in->read.reset();
    out->write.reset();
    err->write.reset();
    Runner runner(cmd, pid, std::move(in->write), std::move(out->read), std::move(err->read));
    return runner.run();
}

} // namespace gpuprov::detail
