// Local trust through the fake System: who could have written a profile or binary root uses.
#include "fake_system.hpp"

#include <gpuprov/error.hpp>
#include <gpuprov/local_trust.hpp>
#include <gtest/gtest.h>
#include <initializer_list>
#include <string_view>

using namespace gpuprov;
using gpuprov::testing::FakeSystem;

namespace {

FakeSystem host_with(const std::string& file) {
    FakeSystem sys;
    sys.add_dir("/tmp");
    sys.set_mode("/tmp", 01777);
    sys.add_file(file, "name: x\n");
    return sys;
}

std::string reason(const FakeSystem& sys, const std::string& path) {
    return untrusted_reason(sys, path).value_or("");
}

void expect_mentions(const std::string& why, std::initializer_list<std::string_view> parts) {
    for (const auto part : parts) {
        EXPECT_NE(why.find(part), std::string::npos) << "no '" << part << "' in: " << why;
    }
}

} // namespace

TEST(LocalTrust, RootOwnedFileIsTrustedInRootDirectoriesAndInTheStickyTmp) {
    auto sys = host_with("/etc/gpuprov/p.yaml");
    EXPECT_EQ(untrusted_reason(sys, "/etc/gpuprov/p.yaml"), std::nullopt);
    // The sticky bit: only the entry's owner (root) can rename or remove it.
    sys.add_file("/tmp/p.yaml", "name: x\n");
    EXPECT_EQ(untrusted_reason(sys, "/tmp/p.yaml"), std::nullopt);
}

TEST(LocalTrust, WorldWritableProfileOwnedByNobodyIsRefusedWithOwnerModeAndFix) {
    // The case: mode 0666, owner nobody, in the 1777 /tmp.
    auto sys = host_with("/tmp/p.yaml");
    sys.set_mode("/tmp/p.yaml", 0666);
    sys.set_owner("/tmp/p.yaml", 65534, 65534);
    expect_mentions(reason(sys, "/tmp/p.yaml"),
                    {"/tmp/p.yaml", "uid 65534", "mode 0666", "chown root:root /tmp/p.yaml"});
}

TEST(LocalTrust, RootOwnedButGroupOrOtherWritableFileIsRefused) {
    for (const unsigned mode : {0664U, 0646U, 0666U}) {
        auto sys = host_with("/etc/gpuprov/p.yaml");
        sys.set_mode("/etc/gpuprov/p.yaml", mode);
        expect_mentions(reason(sys, "/etc/gpuprov/p.yaml"),
                        {"writable by group or others", "chmod go-w /etc/gpuprov/p.yaml"});
    }
}

TEST(LocalTrust, WritableDirectoryWithoutStickyBitAnywhereAboveIsRefused) {
    auto sys = host_with("/srv/shared/deep/p.yaml");
    sys.set_mode("/srv/shared", 0777);
    expect_mentions(
        reason(sys, "/srv/shared/deep/p.yaml"),
        {"directory /srv/shared ", "mode 0777", "on the way to /srv/shared/deep/p.yaml"});
    sys.set_mode("/srv/shared", 0775); // group-writable counts too, as with sshd
    EXPECT_NE(reason(sys, "/srv/shared/deep/p.yaml"), "");
    sys.set_mode("/srv/shared", 0755);
    EXPECT_EQ(reason(sys, "/srv/shared/deep/p.yaml"), "");
}

TEST(LocalTrust, DirectoryOwnedBySomeoneElseIsRefusedEvenWhenSticky) {
    // The owner of a sticky directory may still remove anything in it.
    auto sys = host_with("/home/alice/p.yaml");
    sys.set_owner("/home/alice", 1000, 1000);
    EXPECT_NE(reason(sys, "/home/alice/p.yaml").find("directory /home/alice (owner uid 1000"),
              std::string::npos);
    sys.set_mode("/home/alice", 01777);
    EXPECT_NE(reason(sys, "/home/alice/p.yaml"), "");
}

TEST(LocalTrust, LinksAreFollowedAndTheirTargetsChecked) {
    auto sys = host_with("/etc/gpuprov/p.yaml");
    sys.add_file("/home/alice/evil.yaml", "name: evil\n");
    sys.set_owner("/home/alice", 1000, 1000);
    sys.add_link("/etc/gpuprov/link.yaml", "../../home/alice/evil.yaml");
    EXPECT_NE(reason(sys, "/etc/gpuprov/link.yaml").find("/home/alice"), std::string::npos);
    sys.add_link("/etc/gpuprov/good.yaml", "/etc/gpuprov/p.yaml");
    EXPECT_EQ(reason(sys, "/etc/gpuprov/good.yaml"), "");
    // A directory link (merged /usr: /bin -> usr/bin) is followed the same way.
    sys.add_file("/usr/bin/gpuprov", "ELF");
    sys.set_mode("/usr/bin/gpuprov", 0755);
    sys.add_link("/bin", "usr/bin");
    EXPECT_EQ(reason(sys, "/bin/gpuprov"), "");
    sys.set_mode("/usr/bin", 0777);
    EXPECT_NE(reason(sys, "/bin/gpuprov").find("directory /usr/bin "), std::string::npos);
}

TEST(LocalTrust, ALinkOwnedByAnotherUserInTmpIsRefused) {
    // In /tmp the link's owner can remove it and point a new one elsewhere.
    auto sys = host_with("/etc/gpuprov/p.yaml");
    sys.add_link("/tmp/p.yaml", "/etc/gpuprov/p.yaml");
    sys.set_owner("/tmp/p.yaml", 1000, 1000);
    EXPECT_NE(reason(sys, "/tmp/p.yaml").find("link /tmp/p.yaml"), std::string::npos);
}

TEST(LocalTrust, LinkLoopsMissingFilesAndNonRegularFilesAreRefused) {
    FakeSystem sys;
    sys.add_link("/etc/a", "/etc/b");
    sys.add_link("/etc/b", "/etc/a");
    EXPECT_NE(reason(sys, "/etc/a").find("too many levels"), std::string::npos);
    EXPECT_NE(reason(sys, "/etc/missing.yaml").find("cannot stat"), std::string::npos);
    sys.add_dir("/etc/gpuprov");
    EXPECT_NE(reason(sys, "/etc/gpuprov").find("not a regular file"), std::string::npos);
    EXPECT_NE(reason(sys, "relative.yaml").find("not an absolute path"), std::string::npos);
}

TEST(LocalTrust, RequireTrustedThrowsNamingWhatAndTheOverride) {
    auto sys = host_with("/tmp/p.yaml");
    sys.set_mode("/tmp/p.yaml", 0666);
    try {
        require_trusted(sys, "/tmp/p.yaml", "profile");
        FAIL() << "no throw";
    } catch (const HostError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("refusing the profile /tmp/p.yaml"), std::string::npos) << what;
        EXPECT_NE(what.find("--allow-untrusted"), std::string::npos) << what;
    }
    sys.set_mode("/tmp/p.yaml", 0644);
    EXPECT_NO_THROW(require_trusted(sys, "/tmp/p.yaml", "profile"));
}

// Where root is about to put a program (issue 26 item 8), or Python's site-packages (item 1):
// the directory itself must be root's and writable by no one else, sticky or not.
TEST(LocalTrust, ADirectoryIsCheckedAsTheLastComponent) {
    FakeSystem sys;
    sys.add_dir("/usr/local/bin");
    EXPECT_EQ(untrusted_reason(sys, "/usr/local/bin", TrustedKind::directory), std::nullopt);
    EXPECT_EQ(untrusted_reason(sys, "/usr/local/bin/", TrustedKind::directory), std::nullopt);
    EXPECT_EQ(untrusted_reason(sys, "/", TrustedKind::directory), std::nullopt);
    sys.set_mode("/usr/local/bin", 02775); // Debian's old root:staff /usr/local
    expect_mentions(untrusted_reason(sys, "/usr/local/bin/", TrustedKind::directory).value_or(""),
                    {"directory /usr/local/bin (owner uid 0, group gid 0, mode 2775)",
                     "writable by group or others", "chmod go-w /usr/local/bin"});
    sys.set_mode("/usr/local/bin", 01777); // sticky does not help: anyone could add a program
    EXPECT_TRUE(untrusted_reason(sys, "/usr/local/bin", TrustedKind::directory));
    sys.set_mode("/usr/local/bin", 0755);
    sys.set_owner("/usr/local", 1000);
    expect_mentions(untrusted_reason(sys, "/usr/local/bin", TrustedKind::directory).value_or(""),
                    {"directory /usr/local (owner uid 1000", "on the way to /usr/local/bin"});
    sys.add_file("/usr/local/f", "");
    sys.set_owner("/usr/local", 0);
    expect_mentions(untrusted_reason(sys, "/usr/local/f", TrustedKind::directory).value_or(""),
                    {"/usr/local/f", "is not a directory"});
    sys.set_mode("/", 0777);
    EXPECT_TRUE(untrusted_reason(sys, "/", TrustedKind::directory));
}

TEST(LocalTrust, ADirectoryReachedThroughALinkIsCheckedAtItsTarget) {
    FakeSystem sys;
    sys.add_dir("/opt/venv-3.11/lib");
    sys.add_link("/opt/venv/lib", "/opt/venv-3.11/lib");
    EXPECT_EQ(untrusted_reason(sys, "/opt/venv/lib", TrustedKind::directory), std::nullopt);
    sys.set_mode("/opt/venv-3.11/lib", 0777);
    expect_mentions(untrusted_reason(sys, "/opt/venv/lib", TrustedKind::directory).value_or(""),
                    {"directory /opt/venv-3.11/lib", "mode 0777"});
}
