// The one reader per package database: dpkg's status file and `rpm -qa --qf`, with one meaning
// of "installed", dependency closures through Provides, and caches keyed by the files' stamps.
#include "fake_system.hpp"

#include <gpuprov/package_db.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::FakeSystem;
using testing::read_fixture;

TEST(DpkgDb, OneMeaningOfInstalled) {
    const auto db = parse_dpkg_db("Package: a\nStatus: install ok half-installed\nVersion: 1\n\n"
                                  "Package: b\nStatus: install reinstreq installed\nVersion: 1\n\n"
                                  "Package: c\nStatus: deinstall ok config-files\nVersion: 1\n\n"
                                  "Package: d\nStatus: hold ok installed\nVersion: 4\n\n"
                                  "Package: e\nStatus: deinstall ok installed\nVersion: 5\n");
    EXPECT_FALSE(db.installed_version("a"));
    EXPECT_FALSE(db.installed_version("b"));
    EXPECT_FALSE(db.installed_version("c"));
    ASSERT_NE(db.find("c"), nullptr); // the config-files record is still known
    EXPECT_EQ(db.installed_version("d"), "4");
    EXPECT_TRUE(db.find("d")->hold);
    // Selected for removal but still on disk: installed until dpkg removes it.
    EXPECT_EQ(db.installed_version("e"), "5");
    EXPECT_FALSE(db.find("e")->hold);
}

TEST(DpkgDb, DependsPreDependsAndProvidesNames) {
    const auto db = parse_dpkg_db(
        "Package: nvidia-driver-550\nStatus: install ok installed\nVersion: 550.1-1\n"
        "Pre-Depends: debconf (>= 0.5) | debconf-2.0\n"
        "Depends: libnvidia-compute-550 (= 550.1-1), nvidia-kernel-550:any\n\n"
        "Package: nvidia-dkms-550\nStatus: install ok installed\nVersion: 550.1-1\n"
        "Provides: nvidia-kernel-550 (= 550.1-1)\n\n"
        "Package: libnvidia-compute-550\nStatus: install ok installed\nVersion: 550.1-1\n\n"
        "Package: debconf\nStatus: install ok installed\nVersion: 1.5\n");
    const auto* d = db.find("nvidia-driver-550");
    ASSERT_NE(d, nullptr);
    // In the file's order, every alternative, versions and arch qualifiers dropped.
    EXPECT_EQ(d->depends, (std::vector<std::string>{"debconf", "debconf-2.0",
                                                    "libnvidia-compute-550", "nvidia-kernel-550"}));
    // debconf-2.0 is neither installed nor provided; nvidia-kernel-550 is a virtual name.
    EXPECT_EQ(installed_requires(db, "nvidia-driver-550"),
              (std::vector<std::string>{"debconf", "libnvidia-compute-550", "nvidia-dkms-550"}));
    EXPECT_TRUE(installed_requires(db, "not-there").empty());
}

TEST(DpkgDb, SecondArchitectureKeepsTheInstalledOne) {
    const auto db = parse_dpkg_db("Package: libx\nArchitecture: i386\n"
                                  "Status: deinstall ok config-files\nVersion: 1\n\n"
                                  "Package: libx\nArchitecture: amd64\n"
                                  "Status: install ok installed\nVersion: 2\n");
    EXPECT_EQ(db.installed_version("libx"), "2");
    EXPECT_EQ(db.find("libx")->arch, "amd64");
}

// tests/fixtures/cmd/rpm/qa-el9-570-open.txt is real rpm 4.18 output of rpm_query_command()
// against a scratch root where real dnf 4.14 installed stand-in rpms with NVIDIA's names.
TEST(RpmDb, ParsesRealQueryOutput) {
    const auto db = parse_rpm_query(read_fixture("cmd/rpm/qa-el9-570-open.txt"));
    EXPECT_EQ(db.records().size(), 8u);
    EXPECT_EQ(db.installed_version("nvidia-driver"), "3:570.195.03-1.el9");
    EXPECT_EQ(db.installed_version("dkms"), "3.2.1-1.el9"); // "(none)" epoch left out
    EXPECT_EQ(db.installed_version("cuda-toolkit-12-8"), "12.8.1-1");
    EXPECT_EQ(db.installed_version("kernel-devel"), "5.14.0-503.14.1.el9_5");
    const auto* kmod = db.find("kmod-nvidia-open-dkms");
    ASSERT_NE(kmod, nullptr);
    EXPECT_EQ(kmod->arch, "x86_64");
    EXPECT_EQ(kmod->depends, (std::vector<std::string>{"dkms", "nvidia-kmod-common"}));
    EXPECT_EQ(db.providers("nvidia-kmod"), (std::vector<std::string>{"kmod-nvidia-open-dkms"}));
    // nvidia-driver requires the capability nvidia-kmod, provided by the kmod package.
    EXPECT_EQ(installed_requires(db, "nvidia-driver"),
              (std::vector<std::string>{"nvidia-driver-cuda-libs", "kmod-nvidia-open-dkms"}));
    EXPECT_EQ(db.providers("libcuda.so.1()(64bit)"),
              (std::vector<std::string>{"nvidia-driver-cuda-libs"}));
}

TEST(RpmDb, SkipsKeysCutLinesAndForeignText) {
    const auto db = parse_rpm_query("@@\tgpg-pubkey\t(none)\td42d0685\t62589a51\t(none)\n"
                                    "P\tgpg(cudatools <cudatools@nvidia.com>)\n"
                                    "@@\tbroken\t(none)\t1.0\n"
                                    "P\tbroken\n"
                                    "warning: something odd\n"
                                    "@@\tnvidia-open\t3\t580.95.05\t1.el9\tnoarch\r\n"
                                    "R\tnvidia-driver\r\n"
                                    "R\trpmlib(PayloadIsZstd)\n"
                                    "R\t/bin/sh\n");
    ASSERT_EQ(db.records().size(), 1u);
    EXPECT_EQ(db.records()[0].name, "nvidia-open");
    EXPECT_EQ(db.records()[0].version, "3:580.95.05-1.el9");
    EXPECT_EQ(db.records()[0].depends, (std::vector<std::string>{"nvidia-driver", "/bin/sh"}));
    EXPECT_TRUE(parse_rpm_query("").empty());
}

TEST(RpmDb, SplitEvr) {
    const auto a = split_evr("3:580.95.05-1.el9");
    EXPECT_EQ(a.epoch, "3");
    EXPECT_EQ(a.version, "580.95.05");
    EXPECT_EQ(a.release, "1.el9");
    const auto b = split_evr("12.8.1-1");
    EXPECT_EQ(b.epoch, "0");
    EXPECT_EQ(b.version, "12.8.1");
    EXPECT_EQ(b.release, "1");
}

TEST(RpmDb, QueriedOnlyWhenTheDatabaseExistsAndChanged) {
    FakeSystem sys;
    EXPECT_TRUE(rpm_database(sys).empty());
    EXPECT_TRUE(sys.queries.empty()); // no rpm database: rpm is not started

    sys.add_file("/var/lib/rpm/rpmdb.sqlite", "db v1");
    int runs = 0;
    sys.on_command_prefix({"rpm", "-qa", "--qf"}, [&](const Command&) {
        ++runs;
        return CommandResult{.out = runs == 1 ? read_fixture("cmd/rpm/qa-el9-570-open.txt")
                                              : read_fixture("cmd/rpm/qa-el9-580-open.txt")};
    });
    EXPECT_EQ(rpm_database(sys).installed_version("nvidia-open"), "3:570.195.03-1.el9");
    EXPECT_EQ(package_database(sys, "rhel").installed_version("nvidia-open"), "3:570.195.03-1.el9");
    EXPECT_EQ(runs, 1); // cached while the files are unchanged

    sys.add_file("/var/lib/rpm/rpmdb.sqlite-wal", "a write");
    EXPECT_EQ(rpm_database(sys).installed_version("nvidia-open"), "3:580.95.05-1.el9");
    EXPECT_EQ(runs, 2);
    EXPECT_EQ(sys.queries.back(), rpm_query_command().argv);
}

TEST(RpmDb, FailedQueryIsNotCachedAsEmpty) {
    FakeSystem sys;
    sys.add_file("/var/lib/rpm/Packages", "bdb");
    int runs = 0;
    sys.on_command_prefix({"rpm", "-qa"}, [&](const Command&) {
        ++runs;
        return runs == 1 ? CommandResult{.exit_code = 1, .err = "error: rpmdb open failed"}
                         : CommandResult{.out = read_fixture("cmd/rpm/qa-el9-570-open.txt")};
    });
    EXPECT_TRUE(rpm_database(sys).empty());
    EXPECT_EQ(rpm_database(sys).installed_version("dkms"), "3.2.1-1.el9");
    EXPECT_EQ(runs, 2);
}

TEST(DpkgDb, CachedByStamp) {
    FakeSystem sys;
    sys.add_file("/var/lib/dpkg/status", "Package: a\nStatus: install ok installed\nVersion: 1\n");
    EXPECT_EQ(dpkg_database(sys).installed_version("a"), "1");
    sys.add_file("/var/lib/dpkg/status", "Package: a\nStatus: install ok installed\nVersion: 2\n");
    EXPECT_EQ(package_database(sys, "debian").installed_version("a"), "2");
    EXPECT_TRUE(package_database(sys, "suse").empty());
}

} // namespace
} // namespace gpuprov
