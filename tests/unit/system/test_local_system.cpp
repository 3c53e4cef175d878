#include "test_dir.hpp"

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gpuprov/error.hpp>
#include <gpuprov/local_system.hpp>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace gpuprov;

TEST(LocalSystem, RunsArgvWithoutShellAndCapturesBothStreams) {
    LocalSystem sys;
    // A word with shell metacharacters reaches the program unchanged.
    auto r = sys.run({.argv = {"printf", "%s|%s", "$(id) ; rm -rf /", "b"}});
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.out, "$(id) ; rm -rf /|b");
    r = sys.run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
}

TEST(LocalSystem, KillsOnTimeout) {
    LocalSystem sys;
    const auto start = std::chrono::steady_clock::now();
    auto r = sys.run({.argv = {"sleep", "30"}, .timeout = std::chrono::milliseconds(300)});
    EXPECT_TRUE(r.timed_out);
    EXPECT_FALSE(r.ok());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LocalSystem, MissingProgramIsNotFound) {
    LocalSystem sys;
    auto r = sys.run({.argv = {"/nonexistent/gpuprov-no-such-tool"}});
    EXPECT_TRUE(r.not_found);
    EXPECT_THROW(run_checked(sys, {.argv = {"false"}}), CommandError);
}

TEST(LocalSystem, FeedsStdinAndPassesEnv) {
    LocalSystem sys;
    auto r = sys.run({.argv = {"sh", "-c", "cat; printf %s \"$GPUPROV_T\""},
                      .env = {{"GPUPROV_T", "v"}},
                      .stdin_data = std::string("hello ")});
    EXPECT_EQ(r.out, "hello v");
}

TEST(LocalSystem, AtomicWriteUnderRootAndLock) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    sys.write_file_atomic("/etc/a/b.conf", "x=1\n", 0600);
    EXPECT_EQ(sys.read_file("/etc/a/b.conf").value_or(""), "x=1\n");
    EXPECT_EQ(fs::status(dir / "etc/a/b.conf").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    sys.write_file_atomic("/etc/a/b.conf", "x=2\n", 0644);
    EXPECT_EQ(sys.list_dir("/etc/a"), std::vector<std::string>{"b.conf"}); // no temp left over
    auto lock = sys.try_lock("/run/gpuprov.lock");
    ASSERT_TRUE(lock);
    EXPECT_FALSE(sys.try_lock("/run/gpuprov.lock")); // flock is per open file description
    lock.reset();
    EXPECT_TRUE(sys.try_lock("/run/gpuprov.lock"));
    sys.remove_file("/etc/a/b.conf");
    sys.remove_file("/etc/a/b.conf"); // missing is fine
    EXPECT_FALSE(sys.exists("/etc/a/b.conf"));
    fs::remove_all(dir);
}

TEST(LocalSystem, LockHolderSeesDnfsFlockedPidFile) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    sys.write_file_atomic("/var/lib/dnf/rpmdb_lock.pid", "4242", 0644);
    EXPECT_FALSE(sys.lock_holder("/var/lib/dnf/rpmdb_lock.pid"));
    // dnf/lock.py: os.open(O_CREAT|O_RDWR) then flock(LOCK_EX | LOCK_NB).
    const int fd = ::open((dir / "var/lib/dnf/rpmdb_lock.pid").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    EXPECT_EQ(sys.lock_holder("/var/lib/dnf/rpmdb_lock.pid"), 4242);
    ::flock(fd, LOCK_UN);
    EXPECT_FALSE(sys.lock_holder("/var/lib/dnf/rpmdb_lock.pid"));
    // The probe left no lock behind: dnf can take it exclusively again.
    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    ::close(fd);
    fs::remove_all(dir);
}

// `gpuprov status` tells a live run from a killed one by this probe, also without root: the run
// lock is readable by everyone whatever apply's umask, and held means held.
TEST(LocalSystem, TheRunLockIsReadableByAllAndItsHolderIsSeen) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    const auto old_umask = ::umask(077);
    auto lock = sys.try_lock("/run/gpuprov.lock");
    ::umask(old_umask);
    ASSERT_TRUE(lock);
    EXPECT_EQ(fs::status(dir / "run/gpuprov.lock").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::others_read);
    EXPECT_EQ(sys.lock_holder("/run/gpuprov.lock"), -1);       // held (a flock; no pid in the file)
    EXPECT_TRUE(sys.try_lock("/run/gpuprov.lock") == nullptr); // the probe took nothing
    lock.reset();
    EXPECT_FALSE(sys.lock_holder("/run/gpuprov.lock"));
    fs::remove_all(dir);
}

TEST(LocalSystem, NewDirectoriesAre0755WhateverTheUmask) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    const auto old = ::umask(077);
    sys.write_file_atomic("/etc/gpuprov/p.yaml", "name: x\n", 0644);
    sys.make_dirs("/var/lib/gpuprov/sub");
    ::umask(old);
    for (const char* d : {"etc", "etc/gpuprov", "var/lib/gpuprov", "var/lib/gpuprov/sub"}) {
        EXPECT_EQ(fs::status(dir / d).permissions() & fs::perms::all,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec)
            << d;
    }
    EXPECT_THROW(sys.make_dirs("/etc/gpuprov/p.yaml/x"), HostError);
    fs::remove_all(dir);
}

TEST(LocalSystem, LstatReportsTheLinkItselfWithOwnerAndMode) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    sys.write_file_atomic("/f", "x", 0640);
    fs::create_symlink("f", dir / "l");
    const auto f = sys.lstat("/f");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->mode & 07777U, 0640U);
    EXPECT_TRUE(S_ISREG(f->mode));
    EXPECT_EQ(f->uid, ::geteuid());
    const auto l = sys.lstat("/l");
    ASSERT_TRUE(l);
    EXPECT_TRUE(S_ISLNK(l->mode));
    EXPECT_FALSE(sys.lstat("/missing"));
    fs::remove_all(dir);
}

TEST(LocalSystem, ARewrittenFileKeepsItsOwnerAndGroup) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "only root can give a file to another owner";
    }
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    sys.write_file_atomic("/etc/x.conf", "a\n", 0640);
    ASSERT_EQ(::chown((dir / "etc/x.conf").c_str(), 65534, 44), 0);
    sys.write_file_atomic("/etc/x.conf", "b\n", 0640);
    const auto info = sys.lstat("/etc/x.conf");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->uid, 65534U);
    EXPECT_EQ(info->gid, 44U);
    EXPECT_EQ(sys.read_file("/etc/x.conf"), "b\n");
    sys.write_file_atomic("/etc/new.conf", "c\n", 0644); // a new file is the writer's
    EXPECT_EQ(sys.lstat("/etc/new.conf")->uid, 0U);
    fs::remove_all(dir);
}

// Item 7 of issue 26: a link's own mode (0777) is not the file's.
TEST(LocalSystem, StatFollowsLinksToTheFile) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    sys.write_file_atomic("/f", "x", 0640);
    fs::create_symlink("f", dir / "l");
    fs::create_symlink("missing", dir / "dangling");
    const auto l = sys.stat("/l");
    ASSERT_TRUE(l);
    EXPECT_TRUE(S_ISREG(l->mode));
    EXPECT_EQ(l->mode & 07777U, 0640U);
    EXPECT_FALSE(sys.stat("/dangling"));
    fs::remove_all(dir);
}

// Item 19: plan compares its binary with the installed copy without reading either whole.
TEST(LocalSystem, SameContentComparesSizesThenBytes) {
    const auto dir = gpuprov::testing::fresh_test_dir();
    LocalSystem sys(dir);
    std::string big(300 * 1024, 'a'); // several pieces
    sys.write_file_atomic("/a", big, 0644);
    sys.write_file_atomic("/b", big, 0644);
    EXPECT_EQ(sys.same_content("/a", "/b"), true);
    EXPECT_EQ(sys.same_content("/a", "/a"), true);
    big[200 * 1024] = 'b'; // same size, one byte differs in a later piece
    sys.write_file_atomic("/b", big, 0644);
    EXPECT_EQ(sys.same_content("/a", "/b"), false);
    sys.write_file_atomic("/b", big + "x", 0644);
    EXPECT_EQ(sys.same_content("/a", "/b"), false);
    fs::create_symlink("a", dir / "l");
    EXPECT_EQ(sys.same_content("/l", "/a"), true);
    EXPECT_FALSE(sys.same_content("/a", "/missing"));
    EXPECT_FALSE(sys.same_content("/a", "/")); // not a regular file
    fs::remove_all(dir);
}
