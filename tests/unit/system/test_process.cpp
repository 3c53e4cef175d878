// The process runner's contract: the deadline is the child's (not its pipes'), children start
// with every signal at its default, a stop request ends or finishes the running command, a
// silent command is killed after idle_timeout, and children get a fixed PATH and an
// allow-listed environment. The tests (not gpuprov) use sh for their stand-in children.
#include "child_env.hpp"
#include "process.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gpuprov/interrupt.hpp>
#include <gpuprov/local_system.hpp>
#include <gtest/gtest.h>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gpuprov;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Processes of process group `pgid` that have not exited (zombies waiting for a reaper that a
// container's PID 1 may never be do not count).
int live_members(int pgid) {
    int n = 0;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) {
        return -1;
    }
    while (const dirent* e = ::readdir(proc)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') {
            continue;
        }
        std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(f, line)) {
            continue;
        }
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so parse after the last ')'.
        std::istringstream rest(line.substr(line.rfind(')') + 1));
        char state = 0;
        int ppid = 0;
        int pgrp = 0;
        rest >> state >> ppid >> pgrp;
        if (pgrp == pgid && state != 'Z' && state != 'X') {
            ++n;
        }
    }
    ::closedir(proc);
    return n;
}

// Waits (up to 3 s) for a SIGKILLed group to be gone: the kernel finishes exits asynchronously.
bool group_gone(int pgid) {
    const auto until = Clock::now() + 3s;
    while (live_members(pgid) != 0) {
        if (Clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Bit N-1 of a /proc/PID/status mask (SigIgn, SigBlk) is signal N.
bool in_mask(const std::string& status, const std::string& field, int sig) {
    const auto at = status.find(field + ":\t");
    if (at == std::string::npos) {
        ADD_FAILURE() << "no " << field << " in " << status;
        return true;
    }
    const auto mask = std::stoull(status.substr(at + field.size() + 2, 16), nullptr, 16);
    return ((mask >> (sig - 1)) & 1u) != 0;
}

// Sends `sig` to this test process after `delay`, from another thread, as a terminal or
// systemd would while the runner is busy.
std::thread signal_later(std::chrono::milliseconds delay, int sig = SIGTERM) {
    return std::thread([delay, sig] {
        std::this_thread::sleep_for(delay);
        ::kill(::getpid(), sig);
    });
}

// Every signal test starts and ends with no stop pending, whatever ran before.
class StopTest : public ::testing::Test {
protected:
    void SetUp() override {
        install_stop_handlers();
        clear_stop_request();
    }
    void TearDown() override { clear_stop_request(); }
};

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name)) {
            m_old = old;
        }
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (m_old) {
            ::setenv(m_name.c_str(), m_old->c_str(), 1);
        } else {
            ::unsetenv(m_name.c_str());
        }
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

// ---- the deadline is the child's ----------------------------------------------------------

TEST(Process, ChildThatLeavesADaemonHoldingThePipesIsReportedWhenItExits) {
    const auto start = Clock::now();
    // The background sleep keeps stdout and stderr open, as a service a postinst forks does;
    // the child itself exits 3 at once.
    const auto r = detail::run_process(
        {.argv = {"sh", "-c", "echo before; echo warn >&2; sleep 30 & exit 3"}, .timeout = 10s});
    const double took = seconds_since(start);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(r.out, "before\n");
    EXPECT_EQ(r.err, "warn\n");
    EXPECT_LT(took, 3.0) << "waited for the daemon's pipes instead of the child";
    // The daemon is left alone: it is not ours to kill once the child has exited.
    ASSERT_GT(r.pid, 0);
    EXPECT_EQ(live_members(r.pid), 1);
    ::kill(-r.pid, SIGKILL); // the test's own clean-up, by process group
    EXPECT_TRUE(group_gone(r.pid));
}

TEST(Process, ChildThatClosesItsPipesAndRunsOnIsKilledAtTheDeadline) {
    const auto start = Clock::now();
    const auto r = detail::run_process(
        {.argv = {"sh", "-c", "echo early; exec >&- 2>&-; sleep 30"}, .timeout = 1s});
    const double took = seconds_since(start);
    EXPECT_TRUE(r.timed_out);
    EXPECT_FALSE(r.idle);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.out, "early\n");
    EXPECT_EQ(r.exit_code, 128 + SIGTERM);
    EXPECT_NE(r.err.find("timeout"), std::string::npos) << r.err;
    EXPECT_GE(took, 0.9);
    EXPECT_LT(took, 5.0);
    EXPECT_TRUE(group_gone(r.pid)) << "the sleep outlived the deadline";
}

TEST(Process, GroupThatIgnoresSigtermIsKilledAfterTheGrace) {
    const auto start = Clock::now();
    // trap '' TERM is inherited by the sleep: only SIGKILL ends this group.
    const auto r = detail::run_process(
        {.argv = {"sh", "-c", "trap '' TERM; sleep 30 & wait"}, .timeout = 500ms});
    const double took = seconds_since(start);
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.exit_code, 128 + SIGKILL);
    EXPECT_GE(took, 2.0) << "SIGKILL before the SIGTERM grace";
    EXPECT_LT(took, 8.0);
    EXPECT_TRUE(group_gone(r.pid));
}

TEST(Process, ExitCodesAndLargeOutputSurviveTheExitDrain) {
    // More than a pipe buffer, written right before exit: nothing may be cut by the 200 ms
    // drain that only bounds a daemon's share.
    auto r = detail::run_process({.argv = {"head", "-c", "1000000", "/dev/zero"}});
    EXPECT_TRUE(r.ok()) << r.err;
    EXPECT_EQ(r.out.size(), 1000000u);
    r = detail::run_process({.argv = {"sh", "-c", "kill -KILL $$"}});
    EXPECT_EQ(r.exit_code, 128 + SIGKILL);
    EXPECT_FALSE(r.timed_out);
}

TEST(Process, StdinClosedByTheChildNeitherKillsNorHangsGpuprov) {
    // SIGPIPE at its default in the test process: a write to the closed stdin must not kill it.
    const auto old = std::signal(SIGPIPE, SIG_DFL);
    const auto r = detail::run_process({.argv = {"sh", "-c", "exec 0<&-; sleep 0.2; echo ok"},
                                        .stdin_data = std::string(4u << 20, 'x')});
    std::signal(SIGPIPE, old);
    EXPECT_TRUE(r.ok()) << r.err;
    EXPECT_EQ(r.out, "ok\n");
    // And fed input still arrives whole.
    const auto cat =
        detail::run_process({.argv = {"wc", "-c"}, .stdin_data = std::string(3u << 20, 'y')});
    EXPECT_EQ(cat.out, std::to_string(3u << 20) + "\n");
}

// ---- signals at their default in children ---------------------------------------------------

TEST(Process, ChildrenInheritNoDescriptorButTheThreePipes) {
    // A descriptor opened without O_CLOEXEC (as a library might) stays gpuprov's: the child
    // (and a daemon a postinst starts) sees only stdin, stdout and stderr.
    // Far above stderr: at 3 it would share its number with the descriptor ls opens on
    // /proc/self/fd, and the test could not tell the two apart.
    const int first = ::open("/dev/null", O_RDONLY);
    ASSERT_GE(first, 3);
    const int leaked = ::fcntl(first, F_DUPFD, 100);
    ::close(first);
    ASSERT_GE(leaked, 100);
    const auto r = detail::run_process({.argv = {"ls", "/proc/self/fd"}});
    ::close(leaked);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream fds(r.out);
    std::string fd;
    std::vector<std::string> seen;
    while (fds >> fd) {
        seen.push_back(fd);
    }
    // ls's own directory descriptor is the one above stderr.
    EXPECT_EQ(std::count(seen.begin(), seen.end(), std::to_string(leaked)), 0) << r.out;
    EXPECT_LE(seen.size(), 4u) << r.out;
}

TEST(Process, ChildrenStartWithEverySignalAtItsDefault) {
    // As under systemd (IgnoreSIGPIPE=yes) or nohup, and with SIGTERM blocked in the caller.
    const auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
    const auto old_hup = std::signal(SIGHUP, SIG_IGN);
    sigset_t term;
    sigset_t old_mask;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &term, &old_mask);
    const auto status = detail::run_process({.argv = {"cat", "/proc/self/status"}});
    // yes dies of SIGPIPE (141) when head goes away, as long as SIGPIPE is at its default; an
    // ignored one makes it exit 1 with "write error" instead.
    const auto yes = detail::run_process(
        {.argv = {"sh", "-c", "(yes; echo \"yes-exit=$?\" >&2) | head -n1 >/dev/null"}});
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    std::signal(SIGHUP, old_hup);
    std::signal(SIGPIPE, old_pipe);
    ASSERT_TRUE(status.ok()) << status.err;
    EXPECT_FALSE(in_mask(status.out, "SigIgn", SIGPIPE)) << status.out;
    EXPECT_FALSE(in_mask(status.out, "SigIgn", SIGHUP)) << status.out;
    EXPECT_FALSE(in_mask(status.out, "SigBlk", SIGTERM)) << status.out;
    EXPECT_NE(yes.err.find("yes-exit=141"), std::string::npos) << yes.err;
}

TEST_F(StopTest, HandlersLeaveChildrenAtTheirDefaults) {
    // install_stop_handlers() ignores SIGPIPE in gpuprov itself...
    std::ifstream self("/proc/self/status");
    const std::string mine((std::istreambuf_iterator<char>(self)),
                           std::istreambuf_iterator<char>());
    ASSERT_TRUE(in_mask(mine, "SigIgn", SIGPIPE)) << mine;
    // ... and its children still start with SIGPIPE at the default.
    const auto r = detail::run_process({.argv = {"cat", "/proc/self/status"}});
    ASSERT_TRUE(r.ok()) << r.err;
    EXPECT_FALSE(in_mask(r.out, "SigIgn", SIGPIPE)) << r.out;
}

// ---- stop requests --------------------------------------------------------------------------

TEST_F(StopTest, StopEndsTheRunningCommandAndItsGroup) {
    const auto start = Clock::now();
    auto sender = signal_later(200ms);
    const auto r = detail::run_process(
        {.argv = {"sh", "-c", "echo started; sleep 30 & sleep 30"}, .timeout = 60s});
    sender.join();
    const double took = seconds_since(start);
    EXPECT_TRUE(stop_requested());
    EXPECT_EQ(stop_signal(), SIGTERM);
    EXPECT_EQ(stop_exit_code(), 143);
    EXPECT_TRUE(r.interrupted);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.out, "started\n") << "output read before the stop is kept";
    EXPECT_NE(r.err.find("SIGTERM"), std::string::npos) << r.err;
    EXPECT_LT(took, 5.0);
    EXPECT_TRUE(group_gone(r.pid));
}

TEST_F(StopTest, NothingStartsOnceAStopIsRequested) {
    ::kill(::getpid(), SIGINT);
    ASSERT_TRUE(stop_requested());
    const auto r = detail::run_process({.argv = {"sh", "-c", "echo ran"}, .finish_on_stop = true});
    EXPECT_TRUE(r.interrupted);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.pid, 0);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.exit_code, 130);
    EXPECT_NE(r.err.find("SIGINT"), std::string::npos) << r.err;
}

TEST_F(StopTest, FinishOnStopRunsTheTransactionToItsEnd) {
    auto sender = signal_later(200ms);
    // A second, hurried signal 100 ms later is the same Ctrl-C pressed twice: still finish.
    auto hurried = signal_later(300ms, SIGINT);
    const auto r = detail::run_process(
        {.argv = {"sh", "-c", "sleep 1; echo done"}, .timeout = 30s, .finish_on_stop = true});
    sender.join();
    hurried.join();
    EXPECT_TRUE(stop_requested());
    EXPECT_TRUE(r.ok()) << r.err;
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(r.out, "done\n");
}

TEST_F(StopTest, FinishOnStopYieldsToASecondDeliberateSignal) {
    const auto start = Clock::now();
    auto first = signal_later(200ms);
    auto second = signal_later(1500ms);
    const auto r =
        detail::run_process({.argv = {"sleep", "30"}, .timeout = 60s, .finish_on_stop = true});
    first.join();
    second.join();
    EXPECT_TRUE(r.interrupted);
    EXPECT_LT(seconds_since(start), 6.0);
    EXPECT_TRUE(group_gone(r.pid));
}

TEST_F(StopTest, ASecondSignalWithNothingToFinishQuitsAtOnce) {
    // In a forked child of the test: the second SIGTERM kills it as if no handler were there.
    EXPECT_EXIT(
        {
            ::kill(::getpid(), SIGTERM);
            ::kill(::getpid(), SIGTERM);
            std::this_thread::sleep_for(2s);
            std::_Exit(0);
        },
        ::testing::KilledBySignal(SIGTERM), "quitting at once");
}

TEST_F(StopTest, SleepEndsEarlyOnAStop) {
    LocalSystem sys;
    const auto start = Clock::now();
    auto sender = signal_later(200ms);
    sys.sleep(10s);
    sender.join();
    EXPECT_LT(seconds_since(start), 3.0);
    // With the stop already pending, a retry loop's sleep neither spins nor waits it out.
    const auto again = Clock::now();
    sys.sleep(10s);
    EXPECT_GE(seconds_since(again), 0.09);
    EXPECT_LT(seconds_since(again), 3.0);
}

// ---- inactivity timeout ---------------------------------------------------------------------

TEST(Process, SilentChildIsKilledAfterIdleTimeout) {
    const auto start = Clock::now();
    const auto r = detail::run_process(
        {.argv = {"sh", "-c", "echo a; sleep 30"}, .timeout = 60s, .idle_timeout = 500ms});
    const double took = seconds_since(start);
    EXPECT_TRUE(r.timed_out);
    EXPECT_TRUE(r.idle);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.out, "a\n");
    EXPECT_NE(r.err.find("no output for 0.5 s"), std::string::npos) << r.err;
    EXPECT_GE(took, 0.45);
    EXPECT_LT(took, 5.0);
    EXPECT_TRUE(group_gone(r.pid));
}

TEST(Process, ChattyChildOutlivesItsIdleTimeout) {
    // 1.5 s of output every 0.1 s, on stdout and then on stderr: each byte resets the clock.
    const auto r = detail::run_process(
        {.argv = {"sh", "-c",
                  "i=0; while [ $i -lt 8 ]; do echo x; sleep 0.1; i=$((i+1)); done; "
                  "while [ $i -lt 16 ]; do echo y >&2; sleep 0.1; i=$((i+1)); done"},
         .timeout = 30s,
         .idle_timeout = 700ms});
    EXPECT_TRUE(r.ok()) << r.err;
    EXPECT_FALSE(r.idle);
    EXPECT_EQ(r.out.size(), 16u);
    EXPECT_EQ(r.err.size(), 16u);
}

TEST(Process, TheHardTimeoutStillBoundsAChattyChild) {
    const auto r = detail::run_process({.argv = {"sh", "-c", "while :; do echo x; sleep 0.1; done"},
                                        .timeout = 800ms,
                                        .idle_timeout = 10s});
    EXPECT_TRUE(r.timed_out);
    EXPECT_FALSE(r.idle);
}

// ---- environment ----------------------------------------------------------------------------

TEST(Process, ChildrenGetAFixedPathAndOnlyAllowListedVariables) {
    // The same for every uid: plan (any user) must see the apt and environment apply (root)
    // sees.
    ScopedEnv secret("GPUPROV_TEST_SECRET", "leak");
    ScopedEnv apt_config("APT_CONFIG", "/tmp/evil.conf");
    ScopedEnv lang("LANG", "C.UTF-8");
    ScopedEnv lc("LC_MESSAGES", "C");
    ScopedEnv proxy("https_proxy", "http://proxy.example:3128");
    ScopedEnv path("PATH", "/tmp/gpuprov-nowhere:/usr/bin:/bin");
    const auto r = detail::run_process(
        {.argv = {"sh", "-c",
                  "printf '%s|%s|%s|%s|%s|%s|%s' \"$PATH\" \"${GPUPROV_TEST_SECRET:-}\" "
                  "\"${APT_CONFIG:-}\" \"$LANG\" \"$LC_MESSAGES\" \"$https_proxy\" "
                  "\"$DEBIAN_FRONTEND\""},
         .env = {{"DEBIAN_FRONTEND", "noninteractive"}, {"LC_MESSAGES", "fr_FR.UTF-8"}}});
    ASSERT_TRUE(r.ok()) << r.err;
    EXPECT_EQ(r.out, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|||C.UTF-8|"
                     "fr_FR.UTF-8|http://proxy.example:3128|noninteractive");
}

TEST(Process, RootChildrenGetRootsHome) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root (CI runs as root)";
    }
    // As after `sudo -E`: root's children must not write into the invoking user's home.
    ScopedEnv home("HOME", "/home/someone");
    const auto r = detail::run_process({.argv = {"sh", "-c", "printf %s \"$HOME\""}});
    EXPECT_EQ(r.out, "/root");
}

TEST(ChildEnvironment, HomeIsRootsForRootAndTheCallersOtherwise) {
    const std::vector<std::string> parent{"HOME=/home/ann", "PATH=/home/ann/bin:/usr/bin",
                                          "LD_PRELOAD=/tmp/x.so", "TZ=UTC"};
    const auto as_root = detail::child_environment({}, parent, 0);
    const auto as_ann = detail::child_environment({}, parent, 1000);
    const auto has = [](const std::vector<std::string>& env, const std::string& entry) {
        return std::find(env.begin(), env.end(), entry) != env.end();
    };
    EXPECT_TRUE(has(as_root, "HOME=/root"));
    EXPECT_FALSE(has(as_root, "HOME=/home/ann"));
    EXPECT_TRUE(has(as_ann, "HOME=/home/ann"));
    for (const auto* env : {&as_root, &as_ann}) {
        EXPECT_TRUE(has(*env, std::string("PATH=") + detail::kChildPath));
        EXPECT_TRUE(has(*env, "TZ=UTC"));
        EXPECT_FALSE(has(*env, "LD_PRELOAD=/tmp/x.so"));
        EXPECT_EQ(env->size(), 3u);
    }
    // A caller's explicit PATH or HOME wins, once.
    const auto own = detail::child_environment(
        {.argv = {"x"}, .env = {{"PATH", "/opt/x"}, {"HOME", "/var/lib/x"}}}, parent, 0);
    EXPECT_TRUE(has(own, "PATH=/opt/x"));
    EXPECT_TRUE(has(own, "HOME=/var/lib/x"));
    EXPECT_EQ(own.size(), 3u);
}

TEST(Process, ProgramsAreLookedUpInTheChildsPathNotTheCallers) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuprov-test-lookup-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto tool = dir / "gpuprov-test-tool";
    std::ofstream(tool) << "#!/bin/sh\necho stand-in\n";
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    {
        ScopedEnv path("PATH", (dir.string() + ":/usr/bin:/bin").c_str());
        const auto r = detail::run_process({.argv = {"gpuprov-test-tool"}});
        EXPECT_TRUE(r.not_found) << "found through the caller's PATH: " << r.out;
        EXPECT_EQ(r.exit_code, 127);
    }
    const auto r = detail::run_process(
        {.argv = {"gpuprov-test-tool"}, .env = {{"PATH", dir.string() + ":/usr/bin:/bin"}}});
    EXPECT_TRUE(r.ok()) << r.err;
    EXPECT_EQ(r.out, "stand-in\n");
    std::filesystem::remove_all(dir);
}

// verify --smoke starts Python in / (issue 26 item 1): the child's working directory is the
// command's, not gpuprov's, with posix_spawn's chdir and with the pre-2.29 fallback alike.
TEST(Process, ACommandStartsInItsOwnDirectory) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("gpuprov-test-cwd-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto before = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    for (const bool fallback : {false, true}) {
        detail::force_chdir_fallback(fallback);
        auto r = detail::run_process({.argv = {"pwd", "-P"}, .cwd = "/"});
        EXPECT_TRUE(r.ok()) << r.err;
        EXPECT_EQ(r.out, "/\n") << "fallback " << fallback;
        // gpuprov's own directory is left as it was.
        EXPECT_EQ(std::filesystem::current_path(), dir);
        r = detail::run_process({.argv = {"pwd", "-P"}});
        EXPECT_EQ(r.out, std::filesystem::canonical(dir).string() + "\n");
    }
    detail::force_chdir_fallback(false);
    std::filesystem::current_path(before);
    std::filesystem::remove_all(dir);
}

TEST(Process, AMissingStartDirectoryIsACleanRefusal) {
    const auto r = detail::run_process({.argv = {"pwd"}, .cwd = "/nonexistent/gpuprov-cwd"});
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.pid, 0);
    EXPECT_FALSE(r.not_found); // the program is there; the directory is not
    EXPECT_NE(r.err.find("cannot start in /nonexistent/gpuprov-cwd"), std::string::npos) << r.err;
}

} // namespace
