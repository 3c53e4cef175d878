#include "interrupt_detail.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <gpuprov/interrupt.hpp>
#include <unistd.h>

namespace gpuprov {

namespace {

// Everything the handler touches is a lock-free atomic or a plain fd: it may run in any thread,
// at any instant, and may call only async-signal-safe functions.
std::atomic<unsigned> g_count{0};
std::atomic<int> g_signal{0};
std::atomic<pid_t> g_child{0};
std::atomic<bool> g_child_finishing{false};
int g_wake[2] = {-1, -1};

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

void say(const char* text) {
    // Best effort: stderr may be closed or a full pipe; nothing here may block or fail loudly.
    const auto n = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)n;
}

void on_stop(int sig) {
    const int saved_errno = errno;
    const unsigned n = g_count.fetch_add(1) + 1;
    int none = 0;
    g_signal.compare_exchange_strong(none, sig);
    if (n == 1 || g_child_finishing.load()) {
        if (n == 1) {
            say("\ngpuprov: stop requested; stopping cleanly (signal again to quit at once)\n");
        }
        if (g_wake[1] >= 0) {
            const char byte = 1;
            const auto w = ::write(g_wake[1], &byte, 1); // full pipe: a wake-up is pending anyway
            (void)w;
        }
        errno = saved_errno;
        return;
    }
    // Asked again: quit now, as without a handler, but take the running command's group along
    // so no apt or dpkg is left writing into a pipe nobody reads.
    say("gpuprov: quitting at once\n");
    const pid_t child = g_child.load();
    if (child > 0) {
        ::kill(-child, SIGKILL);
    }
    ::signal(sig, SIG_DFL);
    ::raise(sig); // delivered when this handler returns: sig is blocked while it runs
    errno = saved_errno;
}

} // namespace

void install_stop_handlers() {
    static std::atomic<bool> installed{false};
    if (installed.exchange(true)) {
        return;
    }
    if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        g_wake[0] = g_wake[1] = -1; // the runner then notices stops on its next poll round
    }
    // gpuprov's own writes (libcurl with CURLOPT_NOSIGNAL over OpenSSL, stdout into `| head`)
    // must fail with EPIPE rather than kill it. Children get every signal back at its default
    // (POSIX_SPAWN_SETSIGDEF in the runner), so this never reaches apt or dpkg.
    ::signal(SIGPIPE, SIG_IGN);
    // An ignored SIGCHLD (inherited from whoever started us) makes the kernel reap children at
    // once, and the runner could never learn how apt or dpkg exited.
    ::signal(SIGCHLD, SIG_DFL);
    for (const int sig : kStopSignals) {
        struct sigaction old {};
        ::sigaction(sig, nullptr, &old);
        if (old.sa_handler == SIG_IGN) {
            continue; // nohup, or a background job: whoever started us chose to ignore it
        }
        struct sigaction sa {};
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        // SA_RESTART: the rest of gpuprov (file reads, libcurl) keeps going undisturbed; the
        // runner learns of a stop through the self-pipe, not through EINTR.
        sa.sa_flags = SA_RESTART;
        ::sigaction(sig, &sa, nullptr);
    }
}

bool stop_requested() noexcept {
    return g_count.load() > 0;
}

int stop_signal() noexcept {
    return g_signal.load();
}

std::string_view stop_signal_name() noexcept {
    switch (g_signal.load()) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    case 0:
        return "";
    default:
        return "a signal";
    }
}

int stop_exit_code() noexcept {
    const int sig = g_signal.load();
    return sig == 0 ? 0 : 128 + sig;
}

void clear_stop_request() noexcept {
    g_count.store(0);
    g_signal.store(0);
    detail::drain_stop_wakeups();
}

namespace detail {

unsigned stop_count() noexcept {
    return g_count.load();
}

int stop_wakeup_fd() noexcept {
    return g_wake[0];
}

void drain_stop_wakeups() noexcept {
    if (g_wake[0] < 0) {
        return;
    }
    char buf[64];
    while (::read(g_wake[0], buf, sizeof buf) > 0) {
    }
}

void set_running_child(pid_t pgid, bool finishing) noexcept {
    g_child_finishing.store(finishing);
    g_child.store(pgid);
}

} // namespace detail

} // namespace gpuprov
