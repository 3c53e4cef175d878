// A runfile-installed driver: its installer in /usr/bin or a libnvidia-ml.so.<version> no
// package carries. A packaged driver's libraries are not evidence; the log alone is not either.
#include "fake_system.hpp"

#include <gpuprov/facts.hpp>
#include <gpuprov/matrix.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;

const std::string kLog = "nvidia-installer log file '/var/log/nvidia-installer.log'\n"
                         "creation time: Tue Jun 18 10:12:03 2024\n"
                         "installer version: 550.90.07\n"
                         "\n"
                         "PATH: /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n";

TEST(RunfileDriver, InstallerLogVersion) {
    EXPECT_EQ(parse_installer_log_version(kLog), "550.90.07");
    EXPECT_FALSE(parse_installer_log_version("creation time: now\ninstaller version: \n"));
    EXPECT_FALSE(parse_installer_log_version(""));
}

TEST(RunfileDriver, UnownedLibraryWithNoPackagesAtAll) {
    FakeSystem sys;
    sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07", "");
    sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", ""); // the soname link: no version
    sys.add_file("/var/log/nvidia-installer.log", kLog);
    const auto run = detect_runfile_driver(sys, {});
    ASSERT_TRUE(run);
    EXPECT_EQ(run->version, "550.90.07");
    EXPECT_EQ(run->evidence,
              (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07 "
                                        "belongs to no installed package",
                                        "/var/log/nvidia-installer.log: installer version "
                                        "550.90.07"}));
}

TEST(RunfileDriver, PackagedLibrariesAreNotEvidence) {
    FakeSystem sys;
    sys.add_file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07", "");
    sys.add_file("/usr/lib64/libnvidia-ml.so.580.126.09", "");
    EXPECT_FALSE(detect_runfile_driver(sys, {{"libnvidia-compute-550", "550.90.07-0ubuntu1"},
                                             {"nvidia-driver-libs", "3:580.126.09-1.el9"}}));
    // A package at another version does not own these files.
    const auto run = detect_runfile_driver(sys, {{"libnvidia-compute-550", "550.54.15-1"},
                                                 {"nvidia-driver-libs", "3:580.126.09-1.el9"}});
    ASSERT_TRUE(run);
    EXPECT_EQ(run->version, "550.90.07");
    EXPECT_EQ(run->evidence.size(), 1U);
}

TEST(RunfileDriver, InstallerBinaryAloneCountsButTheLogAloneDoesNot) {
    FakeSystem sys;
    sys.add_file("/var/log/nvidia-installer.log", kLog); // outlives an uninstall
    EXPECT_FALSE(detect_runfile_driver(sys, {}));
    sys.add_file("/usr/bin/nvidia-uninstall", "");
    const auto run = detect_runfile_driver(sys, {});
    ASSERT_TRUE(run);
    EXPECT_EQ(run->version, "550.90.07"); // from the log, now that there is other evidence
    EXPECT_EQ(run->evidence.front(), "/usr/bin/nvidia-uninstall (the runfile's installer) exists");
}

TEST(RunfileDriver, DetectFactsFillsIt) {
    FakeSystem sys;
    sys.add_file("/usr/bin/nvidia-installer", "");
    const auto facts = detect_facts(sys, Matrix::builtin());
    ASSERT_TRUE(facts.runfile_driver);
    EXPECT_TRUE(facts.runfile_driver->version.empty());
    EXPECT_TRUE(sys.queries.empty());
}

} // namespace
} // namespace gpuprov
