#include "process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gpuprov::detail {

namespace {

struct Pipe {
    int fd[2] = {-1, -1};
    ~Pipe() {
        for (int f : fd) {
            if (f >= 0) {
                ::close(f);
            }
        }
    }
    void close_end(int i) {
        if (fd[i] >= 0) {
            ::close(fd[i]);
            fd[i] = -1;
        }
    }
};

// What root's children get: sudo's secure_path, so a PATH (or LD_PRELOAD, BASH_ENV, ...)
// from whoever started gpuprov never decides which apt or dpkg runs as root.
constexpr const char* kRootPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Variables a root child keeps: locale and terminal (for messages and progress), time zone,
// and the proxy settings apt and curl honour on networks that need them.
bool allowed_for_root(const std::string& name) {
    static const char* const kAllowed[] = {
        "LANG",        "LANGUAGE",         "TERM",       "TZ",          "NO_COLOR", "http_proxy",
        "https_proxy", "no_proxy",         "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ftp_proxy",
        "all_proxy",   "SOURCE_DATE_EPOCH"};
    if (name.rfind("LC_", 0) == 0) {
        return true;
    }
    for (const char* a : kAllowed) {
        if (name == a) {
            return true;
        }
    }
    return false;
}

bool as_root() {
    return ::geteuid() == 0;
}

std::vector<std::string> build_env(const Command& cmd) {
    std::vector<std::string> env;
    const bool root = as_root();
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        const auto name = entry.substr(0, entry.find('='));
        if (cmd.env.count(name) == 0 && (!root || allowed_for_root(name))) {
            env.push_back(std::move(entry));
        }
    }
    if (root && cmd.env.count("PATH") == 0) {
        env.push_back(std::string("PATH=") + kRootPath);
    }
    for (const auto& [k, v] : cmd.env) {
        env.push_back(k + "=" + v);
    }
    return env;
}

// argv[0] looked up in the PATH the child gets (posix_spawnp would use the caller's).
std::string executable_for(const std::string& name, const std::vector<std::string>& env) {
    if (name.find('/') != std::string::npos) {
        return name;
    }
    std::string path;
    for (const auto& e : env) {
        if (e.rfind("PATH=", 0) == 0) {
            path = e.substr(5);
        }
    }
    std::size_t start = 0;
    while (start <= path.size()) {
        auto end = path.find(':', start);
        if (end == std::string::npos) {
            end = path.size();
        }
        const auto dir = path.substr(start, end - start);
        const auto candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        start = end + 1;
    }
    return name; // not found: posix_spawn reports ENOENT, which the caller turns into not_found
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

} // namespace

CommandResult run_process(const Command& cmd) {
    CommandResult result;
    if (cmd.argv.empty()) {
        result.exit_code = 127;
        result.not_found = true;
        result.err = "empty argv";
        return result;
    }
    Pipe in;
    Pipe out;
    Pipe err;
    if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 ||
        ::pipe2(err.fd, O_CLOEXEC) != 0) {
        result.exit_code = 127;
        result.not_found = true;
        result.err = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Own process group, so a timeout kills the command and everything it started.
    // Children start with every signal at its default disposition: gpuprov ignores SIGPIPE
    // for itself, and apt, dpkg and maintainer scripts must not inherit that.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_setsigmask(&attr, &empty);
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigdefault(&attr, &all);

    auto argv_copy = cmd.argv;
    auto argv = c_strings(argv_copy);
    auto env_strings = build_env(cmd);
    auto envp = c_strings(env_strings);
    const auto exe = executable_for(cmd.argv[0], env_strings);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        result.exit_code = 127;
        result.not_found = true;
        result.err = cmd.argv[0] + ": " + std::strerror(rc);
        return result;
    }
    in.close_end(0);
    out.close_end(1);
    err.close_end(1);

    std::string input = cmd.stdin_data.value_or("");
    std::size_t written = 0;
    if (input.empty()) {
        in.close_end(1);
    } else {
        ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
    }
    const auto deadline = std::chrono::steady_clock::now() + cmd.timeout;
    ::signal(SIGPIPE, SIG_IGN);
    char buf[65536];
    // The deadline is the child's, not the pipes': a daemon it started may keep them open
    // after it exits (reported as soon as it exits), and a child may close them and run on
    // (still killed at the deadline).
    int status = 0;
    bool reaped = false;
    auto grace_end = std::chrono::steady_clock::time_point::max();
    while (out.fd[0] >= 0 || err.fd[0] >= 0) {
        if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            grace_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        }
        if (reaped && std::chrono::steady_clock::now() >= grace_end) {
            break; // what the child wrote is read; the daemon's output is not ours
        }
        pollfd fds[3];
        int n = 0;
        int idx_out = -1;
        int idx_err = -1;
        int idx_in = -1;
        if (out.fd[0] >= 0) {
            idx_out = n;
            fds[n++] = {out.fd[0], POLLIN, 0};
        }
        if (err.fd[0] >= 0) {
            idx_err = n;
            fds[n++] = {err.fd[0], POLLIN, 0};
        }
        if (in.fd[1] >= 0) {
            idx_in = n;
            fds[n++] = {in.fd[1], POLLOUT, 0};
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        const int ready = ::poll(fds, static_cast<nfds_t>(n),
                                 static_cast<int>(std::min<long long>(left.count(), 100)));
        if (ready < 0 && errno != EINTR) {
            break;
        }
        const auto drain = [&](int idx, Pipe& p, std::string& sink) {
            if (idx >= 0 && (fds[idx].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                const auto got = ::read(p.fd[0], buf, sizeof buf);
                if (got > 0) {
                    sink.append(buf, static_cast<std::size_t>(got));
                } else if (got == 0 || errno != EINTR) {
                    p.close_end(0);
                }
            }
        };
        drain(idx_out, out, result.out);
        drain(idx_err, err, result.err);
        if (idx_in >= 0 && (fds[idx_in].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
            const auto put = ::write(in.fd[1], input.data() + written, input.size() - written);
            if (put > 0) {
                written += static_cast<std::size_t>(put);
            }
            if (put < 0 || written >= input.size()) {
                in.close_end(1);
            }
        }
    }
    in.close_end(1);
    while (!reaped) {
        const auto got = ::waitpid(pid, &status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) {
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            result.timed_out = true;
            ::kill(-pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        ::usleep(10000);
    }
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.exit_code = 128 + WTERMSIG(status);
    }
    if (result.timed_out) {
        result.err += "\n(killed after " + std::to_string(cmd.timeout.count()) + " ms timeout)";
    }
    return result;
}

} // namespace gpuprov::detail
