// Every command gpuprov runs reaches the log: argv, how it ended, how long it took, and its
// whole output line by line, so a failed apply can be read after the fact.
#include "command_log.hpp"

#include <gtest/gtest.h>
#include <memory>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>

using namespace gpuprov;
using namespace std::chrono_literals;

namespace {

class CommandLog : public ::testing::Test {
protected:
    void SetUp() override {
        m_previous = spdlog::default_logger();
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(m_out);
        sink->set_pattern("%l %v");
        auto logger = std::make_shared<spdlog::logger>("test", sink);
        logger->set_level(spdlog::level::debug);
        spdlog::set_default_logger(logger);
    }
    void TearDown() override { spdlog::set_default_logger(m_previous); }
    std::string text() const { return m_out.str(); }

private:
    std::ostringstream m_out;
    std::shared_ptr<spdlog::logger> m_previous;
};

TEST_F(CommandLog, ARunIsLoggedWithArgvOutcomeDurationAndEveryOutputLine) {
    const Command cmd{.argv = {"apt-get", "install", "--yes", "cuda-drivers-550=550.90.07-1"}};
    const CommandResult r{.exit_code = 100,
                          .out = "Reading package lists...\nBuilding dependency tree...\n",
                          .err = "E: Unable to locate package x"};
    detail::log_command(cmd, r, 1500ms, true);
    EXPECT_EQ(text(), "info run `apt-get install --yes cuda-drivers-550=550.90.07-1` -> exit 100 "
                      "in 1.500 s\n"
                      "debug   stdout| Reading package lists...\n"
                      "debug   stdout| Building dependency tree...\n"
                      "debug   stderr| E: Unable to locate package x\n");
}

TEST_F(CommandLog, AProbeIsDebugAndSaysHowItEnded) {
    detail::log_command({.argv = {"nvidia-smi", "-L"}}, {.exit_code = 127, .not_found = true}, 0ms,
                        false);
    EXPECT_EQ(text(),
              "debug query `nvidia-smi -L` -> could not be started (not found) in 0.000 s\n");
}

TEST_F(CommandLog, WithoutOutputLoggingOnlyTheSummaryAndTheSizesAreLogged) {
    // The metrics timer's probes: every minute, megabytes of kernel log otherwise.
    const Command cmd{.argv = {"journalctl", "-k", "-q", "--no-pager"}, .log_output = false};
    const CommandResult r{.out = std::string(3 * 1024 * 1024 + 512 * 1024, 'k') + "\nNVRM: Xid",
                          .err = "warn"};
    detail::log_command(cmd, r, 250ms, false);
    EXPECT_EQ(text(), "debug query `journalctl -k -q --no-pager` -> exit 0 in 0.250 s (stdout "
                      "3.5 MiB, stderr 4 B, not logged)\n");
}

TEST_F(CommandLog, AQueryLogsItsOutputOnlyWhenItFails) {
    // Issue 20 item 3: read-only probes' output only when they failed.
    const Command cmd{.argv = {"dpkg-query", "-W", "nvidia-driver-550"}};
    detail::log_command(cmd, {.out = "nvidia-driver-550\t550.90.07-1\n"}, 20ms, false);
    EXPECT_EQ(text(), "debug query `dpkg-query -W nvidia-driver-550` -> exit 0 in 0.020 s (stdout "
                      "30 B, stderr 0 B, not logged: a query that succeeded)\n");
    detail::log_command(cmd, {.exit_code = 1, .err = "dpkg-query: no packages found"}, 20ms, false);
    EXPECT_NE(text().find("debug   stderr| dpkg-query: no packages found\n"), std::string::npos)
        << text();
}

TEST_F(CommandLog, OutcomesAreNamed) {
    EXPECT_EQ(detail::describe_outcome({.exit_code = 137}), "exit 137 (signal 9)");
    EXPECT_EQ(detail::describe_outcome({.exit_code = 137, .timed_out = true}), "killed: timed out");
    EXPECT_EQ(detail::describe_outcome({.exit_code = 143, .timed_out = true, .idle = true}),
              "killed: no output for its idle timeout");
    EXPECT_EQ(detail::describe_outcome({.interrupted = true, .pid = 42}),
              "stopped: gpuprov is stopping");
    EXPECT_EQ(detail::describe_outcome({.interrupted = true}), "not started: gpuprov is stopping");
}

TEST_F(CommandLog, HugeOutputKeepsItsEndAndSaysWhatWasLeftOut) {
    std::string big(detail::kLoggedOutputBytes + 10, 'x');
    big += "\nE: the error at the end";
    detail::log_command({.argv = {"dpkg", "--configure", "-a"}}, {.exit_code = 1, .out = big}, 0ms,
                        true);
    const auto t = text();
    EXPECT_NE(t.find("stdout (first 34 bytes left out)"), std::string::npos) << t.substr(0, 200);
    EXPECT_NE(t.find("stdout| E: the error at the end\n"), std::string::npos);
}

} // namespace
