// The process runner's contract: the deadline is the child's, children start with default
// signal dispositions, root children get a fixed PATH and an allow-listed environment.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <gpuprov/local_system.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace gpuprov;
using Clock = std::chrono::steady_clock;

namespace {

// Bit N-1 of /proc/PID/status's SigIgn mask is signal N.
bool ignores(const std::string& status, int sig) {
    const auto at = status.find("SigIgn:\t");
    const auto mask = std::stoull(status.substr(at + 8, 16), nullptr, 16);
    return (mask >> (sig - 1) & 1u) != 0;
}

TEST(Process, ChildThatLeavesADaemonHoldingThePipesIsReportedWhenItExits) {
    LocalSystem sys;
    const auto start = Clock::now();
    // The background sleep keeps stdout and stderr open, as a service started by a postinst
    // does; the child itself exits 3 at once.
    const auto r = sys.run({.argv = {"sh", "-c", "echo before; sleep 30 & exit 3"},
                            .timeout = std::chrono::seconds(20)});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.out, "before\n");
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
    (void)std::system("pkill -f '^sleep 30$' 2>/dev/null");
}

TEST(Process, ChildThatClosesItsPipesAndRunsOnIsStillKilledAtTheDeadline) {
    LocalSystem sys;
    const auto start = Clock::now();
    const auto r = sys.run({.argv = {"sh", "-c", "exec >&- 2>&-; sleep 30"},
                            .timeout = std::chrono::milliseconds(800)});
    EXPECT_TRUE(r.timed_out);
    EXPECT_FALSE(r.ok());
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
}

TEST(Process, ChildrenStartWithSigpipeAtItsDefault) {
    // gpuprov ignores SIGPIPE for itself; apt, dpkg and maintainer scripts must not inherit it.
    const auto old = std::signal(SIGPIPE, SIG_IGN);
    LocalSystem sys;
    const auto r = sys.run({.argv = {"cat", "/proc/self/status"}});
    std::signal(SIGPIPE, old);
    ASSERT_TRUE(r.ok()) << r.err;
    EXPECT_FALSE(ignores(r.out, SIGPIPE)) << r.out;
}

TEST(Process, RootChildrenGetAFixedPathAndOnlyAllowListedVariables) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root (CI runs as root)";
    }
    ::setenv("GPUPROV_TEST_SECRET", "leak", 1);
    ::setenv("LANG", "C.UTF-8", 1);
    const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", "/tmp/gpuprov-nowhere:/usr/bin:/bin", 1);
    LocalSystem sys;
    const auto r = sys.run({.argv = {"sh", "-c",
                                     "printf '%s|%s|%s' \"$PATH\" "
                                     "\"${GPUPROV_TEST_SECRET:-}\" \"$LANG\""},
                            .env = {{"DEBIAN_FRONTEND", "noninteractive"}}});
    ::setenv("PATH", old_path.c_str(), 1);
    ::unsetenv("GPUPROV_TEST_SECRET");
    EXPECT_EQ(r.out, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin||C.UTF-8");
}

} // namespace
