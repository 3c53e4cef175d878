// gpuprov's log file as root sits in /var/log, which others may write (Ubuntu: group syslog):
// whatever they planted there is refused at once, never followed, written through or waited
// on (issue 26 item 8).
#include "test_dir.hpp"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gpuprov/error.hpp>
#include <gpuprov/log_file.hpp>
#include <gtest/gtest.h>
#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace gpuprov;

namespace {

std::string refusal(const fs::path& path) {
    // A regression would block in open(2) forever: SIGALRM ends the test binary instead.
    ::alarm(20);
    std::string why;
    try {
        const int fd = open_log_file(path);
        ::close(fd);
    } catch (const HostError& e) {
        why = e.what();
    }
    ::alarm(0);
    return why;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(LogFile, ARegularFileIsCreated0640AndAppendedTo) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    const auto log = dir / "gpuprov.log";
    std::ofstream(log) << "earlier run\n";
    ::chmod(log.c_str(), 0640);
    {
        auto sink = make_log_file_sink(log);
        sink->set_pattern("%v");
        sink->log(spdlog::details::log_msg("t", spdlog::level::info, "this run"));
    }
    EXPECT_EQ(slurp(log), "earlier run\nthis run\n");
    const auto fresh = dir / "new.log";
    ::umask(022);
    ::close(open_log_file(fresh));
    struct stat st {};
    ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777U, 0640U);
    fs::remove_all(dir);
}

TEST(LogFile, AFifoWithoutAReaderIsRefusedAtOnce) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    const auto log = dir / "gpuprov.log";
    ASSERT_EQ(::mkfifo(log.c_str(), 0666), 0);
    const auto why = refusal(log);
    EXPECT_NE(why.find("is a FIFO"), std::string::npos) << why;
    fs::remove_all(dir);
}

TEST(LogFile, AFifoWithAReaderIsRefusedToo) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    const auto log = dir / "gpuprov.log";
    ASSERT_EQ(::mkfifo(log.c_str(), 0666), 0);
    const int reader = ::open(log.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    const auto why = refusal(log);
    EXPECT_NE(why.find("is a FIFO; gpuprov appends only to a regular file"), std::string::npos)
        << why;
    ::close(reader);
    fs::remove_all(dir);
}

TEST(LogFile, ALinkIsNeverFollowed) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    std::ofstream(dir / "shadow") << "root:x:0:\n";
    fs::create_symlink(dir / "shadow", dir / "gpuprov.log");
    const auto why = refusal(dir / "gpuprov.log");
    EXPECT_NE(why.find("is a symbolic link"), std::string::npos) << why;
    EXPECT_EQ(slurp(dir / "shadow"), "root:x:0:\n");
    fs::remove_all(dir);
}

TEST(LogFile, AHardLinkToAnotherFileIsRefused) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    std::ofstream(dir / "shadow") << "root:x:0:\n";
    fs::create_hard_link(dir / "shadow", dir / "gpuprov.log");
    const auto why = refusal(dir / "gpuprov.log");
    EXPECT_NE(why.find("has 2 hard links"), std::string::npos) << why;
    EXPECT_EQ(slurp(dir / "shadow"), "root:x:0:\n");
    fs::remove_all(dir);
}

TEST(LogFile, ADirectoryIsRefused) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    fs::create_directories(dir / "gpuprov.log");
    EXPECT_FALSE(refusal(dir / "gpuprov.log").empty());
    fs::remove_all(dir);
}

TEST(LogFile, AFileSomeoneElseOwnsIsRefused) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "only root can give a file to another owner";
    }
    const auto dir = gpuprov::testing::fresh_test_dir();
    const auto log = dir / "gpuprov.log";
    std::ofstream(log) << "";
    ASSERT_EQ(::chown(log.c_str(), 65534, 65534), 0);
    const auto why = refusal(log);
    EXPECT_NE(why.find("is owned by uid 65534"), std::string::npos) << why;
    fs::remove_all(dir);
}

} // namespace
