// Managed files keep their mode through backup and restore; the resume unit runs only
// installed, root-only files.
#include "common.hpp"
#include "fake_system.hpp"
#include "resume.hpp"

#include <gpuprov/error.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;

namespace {
constexpr const char* kConf = "/etc/modprobe.d/blacklist-nouveau.conf";
}

TEST(ManagedFiles, RestoreGivesBackTheModeTheFileHad) {
    FakeSystem sys;
    sys.add_file(kConf, "# the admin's own\n");
    sys.set_mode(kConf, 0640);
    steps::write_managed(sys, {kConf, "blacklist nouveau\n", 0644});
    EXPECT_EQ(sys.mode_of(kConf), 0644u);
    steps::restore_managed(sys, kConf);
    EXPECT_EQ(sys.file(kConf), "# the admin's own\n");
    EXPECT_EQ(sys.mode_of(kConf), 0640u);
}

TEST(ManagedFiles, AMarkerFromBeforeModesWereRecordedRestores0644) {
    FakeSystem sys;
    const std::string backup = std::string("/var/lib/gpuprov/backup") + kConf + ".20261130T000000";
    sys.add_file(backup, "old\n");
    sys.add_file(std::string("/var/lib/gpuprov/backup") + kConf + ".latest", backup + "\n");
    sys.add_file(kConf, "new\n");
    sys.set_mode(kConf, 0600);
    steps::restore_managed(sys, kConf);
    EXPECT_EQ(sys.file(kConf), "old\n");
    EXPECT_EQ(sys.mode_of(kConf), 0644u);
}

// Issue 26 item 7: a link's own mode is 0777; recording it made the rollback write a
// world-writable file under /etc/modprobe.d.
TEST(ManagedFiles, ABackupTakenOverALinkRecordsTheModeOfTheFileItLedTo) {
    FakeSystem sys;
    sys.add_file("/usr/share/site/nouveau.conf", "# the site's own\n");
    sys.set_mode("/usr/share/site/nouveau.conf", 0640);
    sys.add_link(kConf, "/usr/share/site/nouveau.conf");
    steps::write_managed(sys, {kConf, "blacklist nouveau\n", 0644});
    const auto marker =
        sys.file(std::string("/var/lib/gpuprov/backup") + kConf + ".latest").value_or("");
    EXPECT_NE(marker.find("\nmode 0640\n"), std::string::npos) << marker;
    EXPECT_EQ(sys.lstat(kConf)->mode & 0777, 0644u); // the link was replaced by the file
    steps::restore_managed(sys, kConf);
    EXPECT_EQ(sys.file(kConf), "# the site's own\n");
    EXPECT_EQ(sys.mode_of(kConf), 0640u);
}

TEST(ManagedFiles, ARestoreNeverWidensPermissions) {
    FakeSystem sys;
    const std::string backup = std::string("/var/lib/gpuprov/backup") + kConf + ".20261130T000000";
    const std::string marker = std::string("/var/lib/gpuprov/backup") + kConf + ".latest";
    sys.add_file(backup, "old\n");
    // What an older gpuprov recorded over a link, or an odd original: at most 0644 comes back.
    for (const auto& [recorded, restored] : std::vector<std::pair<std::string, unsigned>>{
             {"0777", 0644}, {"4755", 0644}, {"0664", 0644}, {"0600", 0600}, {"0640", 0640}}) {
        sys.add_file(marker, backup + "\nmode " + recorded + "\n");
        sys.add_file(kConf, "new\n");
        steps::restore_managed(sys, kConf);
        EXPECT_EQ(sys.file(kConf), "old\n");
        EXPECT_EQ(sys.mode_of(kConf), restored) << recorded;
    }
    // A group-writable original is backed up as 0644 too.
    sys.add_file(kConf, "admin's\n");
    sys.set_mode(kConf, 0666);
    steps::write_managed(sys, {kConf, "blacklist nouveau\n", 0644});
    EXPECT_NE(sys.file(marker).value_or("").find("\nmode 0644\n"), std::string::npos);
}

TEST(ManagedFiles, RestoreWithoutBackupRemovesTheFile) {
    FakeSystem sys;
    steps::write_managed(sys, {kConf, "blacklist nouveau\n", 0644});
    steps::restore_managed(sys, kConf);
    EXPECT_FALSE(sys.exists(kConf));
}

namespace {
detail::ResumeCommand resume(std::string binary, std::string profile) {
    return {.gpuprov_path = std::move(binary), .profile = std::move(profile)};
}
} // namespace

TEST(ResumeUnit, RunsOnlyTheInstalledBinaryAndTheProfileUnderEtcGpuprovResume) {
    EXPECT_EQ(
        detail::resume_exec_start(resume("/usr/local/bin/gpuprov", "/etc/gpuprov/resume/x.yaml")),
        "/usr/local/bin/gpuprov apply /etc/gpuprov/resume/x.yaml --yes --reboot never");
    EXPECT_EQ(detail::resume_exec_start(resume("/usr/bin/gpuprov", "cv-train")),
              "/usr/bin/gpuprov apply cv-train --yes --reboot never");
    for (const auto& [binary, profile] : std::vector<std::pair<std::string, std::string>>{
             {"/home/dev/build/gpuprov", "/etc/gpuprov/resume/x.yaml"},
             // The operator's own profiles live here; the unit reads only gpuprov's copy.
             {"/usr/local/bin/gpuprov", "/etc/gpuprov/x.yaml"},
             {"/usr/local/bin/gpuprov", "/etc/gpuprov/resume/sub/x.yaml"},
             {"/tmp/gpuprov", "cv-train"},
             {"/usr/local/bin/gpuprov", "/tmp/x.yaml"},
             {"/usr/local/bin/gpuprov", "/etc/gpuprov/sub/x.yaml"},
             {"/usr/local/bin/gpuprov", "/etc/gpuprov/../shadow"}}) {
        EXPECT_THROW((void)detail::resume_exec_start(resume(binary, profile)), HostError)
            << binary << " " << profile;
    }
}

TEST(ResumeUnit, CarriesTheBundleSoAnAirGappedHostResumesFromIt) {
    const std::string key = "0123456789ABCDEF0123456789ABCDEF01234567";
    auto cmd = resume("/usr/local/bin/gpuprov", "cv-train");
    cmd.bundle_dir = "/var/cache/gpuprov/repos/bundles/9f86d081884c7d65";
    cmd.bundle_key = key;
    EXPECT_EQ(detail::resume_exec_start(cmd),
              "/usr/local/bin/gpuprov apply cv-train --yes --reboot never --from-bundle "
              "/var/cache/gpuprov/repos/bundles/9f86d081884c7d65 --bundle-key " +
                  key);
    cmd.upgrade = true;
    EXPECT_TRUE(detail::resume_exec_start(cmd).starts_with("/usr/local/bin/gpuprov upgrade "));
    EXPECT_TRUE(detail::resume_exec_start(cmd).ends_with(" --bundle-key " + key));
    // Anything systemd could split or a relative path (the unit runs from /) is refused, as is
    // half a bundle: the resumed run must check the same bundle against the same key.
    for (const auto& [dir, fpr] : std::vector<std::pair<std::string, std::string>>{
             {"/mnt/usb stick/bundle", key},
             {"bundle", key},
             {"/mnt/../root/bundle", key},
             {"/mnt/bundle", ""},
             {"", key},
             {"/mnt/bundle", "0123456789abcdef0123456789abcdef01234567"},
             {"/mnt/bundle", key + "89"}}) {
        cmd.bundle_dir = dir;
        cmd.bundle_key = fpr;
        EXPECT_THROW((void)detail::resume_exec_start(cmd), HostError) << dir << " " << fpr;
    }
}

TEST(ResumeUnit, IsNotInstalledWhenSomeoneElseCouldChangeItsBinaryOrProfile) {
    FakeSystem sys;
    sys.add_file("/usr/local/bin/gpuprov", "ELF");
    sys.set_mode("/usr/local/bin/gpuprov", 0757);
    sys.add_file("/etc/gpuprov/resume/x.yaml", "name: x\n");
    try {
        detail::install_resume_unit(sys,
                                    resume("/usr/local/bin/gpuprov", "/etc/gpuprov/resume/x.yaml"));
        FAIL() << "installed";
    } catch (const HostError& e) {
        EXPECT_NE(std::string(e.what()).find("binary the resume unit would run"), std::string::npos)
            << e.what();
    }
    sys.set_mode("/usr/local/bin/gpuprov", 0755);
    sys.set_owner("/etc/gpuprov/resume/x.yaml", 1000);
    EXPECT_THROW(detail::install_resume_unit(
                     sys, resume("/usr/local/bin/gpuprov", "/etc/gpuprov/resume/x.yaml")),
                 HostError);
    EXPECT_FALSE(sys.exists(detail::kResumeUnitPath));
}
