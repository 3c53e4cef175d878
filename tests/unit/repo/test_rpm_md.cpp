// rpm repository metadata: repomd.xml and primary.xml.gz exactly as createrepo_c 0.20 wrote them
// for the stand-in NVIDIA repository (tests/fixtures/repo/rpm/, see README.md there).
#include "fake_system.hpp"

#include <gpuprov/repo.hpp>
#include <gpuprov/strings.hpp>
#include <gtest/gtest.h>

namespace gpuprov {
namespace {

using testing::read_fixture;

const std::string kPrimary =
    "repo/rpm/7b33d53e4d072310042934c35dea2ac843ae94b09762cac577678bbc3de1f9f4-primary.xml.gz";

TEST(Repomd, PrimaryEntryFromRealRepomd) {
    const auto e = repomd_entry(read_fixture("repo/rpm/repomd.xml"), "primary");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->location,
              "repodata/7b33d53e4d072310042934c35dea2ac843ae94b09762cac577678bbc3de1f9f4-"
              "primary.xml.gz");
    EXPECT_EQ(e->sha256, "7b33d53e4d072310042934c35dea2ac843ae94b09762cac577678bbc3de1f9f4");
    EXPECT_EQ(e->size, 1966u);
    EXPECT_EQ(e->size, read_fixture(kPrimary).size());
    EXPECT_TRUE(repomd_entry(read_fixture("repo/rpm/repomd.xml"), "modules"));
    EXPECT_FALSE(repomd_entry(read_fixture("repo/rpm/repomd.xml"), "updateinfo"));
}

TEST(Repomd, RefusesWeakChecksumsAndLocationsOutsideTheRepo) {
    const std::string sha(64, 'a');
    const auto doc = [&](std::string type, std::string href) {
        return "<repomd><data type=\"primary\"><checksum type=\"" + type + "\">" + sha +
               "</checksum><location href=\"" + href + "\"/><size>10</size></data></repomd>";
    };
    EXPECT_TRUE(repomd_entry(doc("sha256", "repodata/p.xml.gz"), "primary"));
    EXPECT_FALSE(repomd_entry(doc("sha1", "repodata/p.xml.gz"), "primary"));
    EXPECT_FALSE(repomd_entry(doc("sha256", "../../etc/p.xml.gz"), "primary"));
    EXPECT_FALSE(repomd_entry(doc("sha256", "/etc/p.xml.gz"), "primary"));
    EXPECT_FALSE(repomd_entry("<repomd><data type=\"primary\">", "primary"));
}

TEST(Primary, PackagesFromRealCreaterepoOutput) {
    const auto xml = gunzip(read_fixture(kPrimary));
    ASSERT_TRUE(xml);
    EXPECT_EQ(xml->size(), 16142u); // repomd's open-size
    const auto records = parse_primary_xml(*xml);
    ASSERT_EQ(records.size(), 14u); // packages="14"
    const PackageIndex index(records);
    const auto* open = index.newest("nvidia-open");
    ASSERT_NE(open, nullptr);
    EXPECT_EQ(open->version, "3:580.95.05-1.el9");
    EXPECT_EQ(open->size, "5673"); // <size package="5673" ...>: what a bundle checks files by
    EXPECT_EQ(open->architecture, "noarch");
    EXPECT_EQ(open->filename, "nvidia-open-580.95.05-1.el9.noarch.rpm");
    EXPECT_EQ(open->sha256.size(), 64u);
    EXPECT_EQ(open->depends, "kmod-nvidia-open-dkms, nvidia-driver");
    EXPECT_EQ(index.versions("nvidia-open").size(), 2u);
    EXPECT_EQ(index.versions("nvidia-open")[1]->version, "3:570.195.03-1.el9");
    // Epoch 0 is not spelled, as rpm -q and dnf print it.
    EXPECT_EQ(index.newest("cuda-toolkit-12-8")->version, "12.8.1-1");
    const auto* kmod = index.newest("kmod-nvidia-open-dkms");
    ASSERT_NE(kmod, nullptr);
    EXPECT_NE(kmod->provides.find("nvidia-kmod"), std::string::npos) << kmod->provides;
    EXPECT_EQ(index.newest_with_prefix("nvidia-driver", "3:570.")->version, "3:570.195.03-1.el9");
}

TEST(Primary, EscapesSourcesAndCutPackages) {
    const auto r = parse_primary_xml(
        "<metadata><package type=\"rpm\"><name>a&amp;b</name><arch>x86_64</arch>"
        "<version epoch=\"0\" ver=\"1\" rel=\"2\"/><format><rpm:requires>"
        "<rpm:entry name=\"libc.so.6(GLIBC_2.34)(64bit)\"/><rpm:entry name=\"rpmlib(X)\"/>"
        "<rpm:entry name=\"x &lt; y\"/></rpm:requires></format></package>"
        "<package type=\"rpm\"><name>s</name><arch>src</arch>"
        "<version epoch=\"0\" ver=\"1\" rel=\"1\"/></package>"
        "<package type=\"rpm\"><name>cut</name><arch>x86_64</arch>");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].name, "a&b");
    EXPECT_EQ(r[0].version, "1-2");
    EXPECT_EQ(r[0].depends, "libc.so.6(GLIBC_2.34)(64bit), x < y");
}

TEST(Gunzip, RefusesTruncatedCorruptAndOversized) {
    const auto gz = read_fixture(kPrimary);
    EXPECT_FALSE(gunzip(gz.substr(0, gz.size() - 10)));
    EXPECT_FALSE(gunzip("not gzip at all"));
    EXPECT_FALSE(gunzip(gz, 1000));
    EXPECT_TRUE(gunzip(gz, 16142));
}

// ---- load_rpm_package_index: the pinned key, gpgv over repomd.xml, primary by SHA-256 ----

constexpr const char* kRpmRepo =
    "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/";
constexpr const char* kRpmKey =
    "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/D42D0685.pub";

constexpr std::chrono::seconds kMaxAge{15 * 60};

FetchResult served_ok(std::string body) {
    return {.ok = true, .http_status = 200, .body = std::move(body), .error = {}, .attempts = 1};
}

struct RpmServed {
    testing::FakeSystem sys;
    ResolvedRepo repo{.name = "cuda",
                      .url = kRpmRepo,
                      .key_url = kRpmKey,
                      .key_fingerprint = std::string(trim(read_fixture("repo/test-key.fpr"))),
                      .allow_insecure = false};
    std::vector<std::string> gpgv_argv;
    std::string gpgv_stdin;

    explicit RpmServed(std::string status, std::string primary = read_fixture(kPrimary)) {
        sys.on_url(kRpmKey, served_ok(read_fixture("repo/test-key.asc")));
        sys.on_url(std::string(kRpmRepo) + "repodata/repomd.xml",
                   served_ok(read_fixture("repo/rpm/repomd.xml")));
        sys.on_url(std::string(kRpmRepo) + "repodata/repomd.xml.asc",
                   served_ok("-----BEGIN PGP SIGNATURE-----\n(scripted gpgv)\n"));
        sys.on_url(std::string(kRpmRepo) +
                       "repodata/7b33d53e4d072310042934c35dea2ac843ae94b09762cac577678bbc3de1f9f4-"
                       "primary.xml.gz",
                   served_ok(std::move(primary)));
        sys.on_command_prefix({"gpgv"}, [this, status](const Command& c) {
            gpgv_argv = c.argv;
            gpgv_stdin = c.stdin_data.value_or("");
            return CommandResult{.out = status};
        });
    }
};

std::string valid_status() {
    const auto f = std::string(trim(read_fixture("repo/test-key.fpr")));
    return "[GNUPG:] NEWSIG\n[GNUPG:] VALIDSIG " + f + " 2026-12-02 1796215002 0 4 0 1 10 00 " + f +
           "\n";
}

TEST(RpmIndexLoader, VerifiedRepomdThenPrimaryByChecksum) {
    RpmServed host(valid_status());
    const auto r = load_rpm_package_index(host.sys, host.repo, "/var/cache/gpuprov/repos", kMaxAge);
    ASSERT_TRUE(r.index) << r.error;
    EXPECT_EQ(r.index->size(), 14u);
    EXPECT_EQ(r.index->newest("nvidia-open")->version, "3:580.95.05-1.el9");
    ASSERT_TRUE(r.key);
    // gpgv checks the detached signature over exactly the repomd.xml that was parsed.
    EXPECT_EQ(host.gpgv_argv,
              (std::vector<std::string>{"gpgv", "--keyring",
                                        "/var/cache/gpuprov/repos/cuda/key.gpg", "--status-fd", "1",
                                        "/var/cache/gpuprov/repos/cuda/repomd.xml.asc", "-"}));
    EXPECT_EQ(host.gpgv_stdin, read_fixture("repo/rpm/repomd.xml"));
    EXPECT_EQ(r.inrelease, read_fixture("repo/rpm/repomd.xml"));
}

TEST(RpmIndexLoader, BadSignatureIsRefused) {
    RpmServed host("[GNUPG:] NEWSIG\n[GNUPG:] BADSIG 961FA89CEC068B3B test\n");
    const auto r = load_rpm_package_index(host.sys, host.repo, "/var/cache/gpuprov/repos", kMaxAge);
    EXPECT_FALSE(r.index);
    EXPECT_NE(r.error.find("repomd.xml at"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("BAD signature"), std::string::npos) << r.error;
}

TEST(RpmIndexLoader, TamperedOrTruncatedPrimaryIsRefused) {
    auto primary = read_fixture(kPrimary);
    primary[100] = static_cast<char>(primary[100] ^ 1);
    RpmServed host(valid_status(), primary);
    const auto r = load_rpm_package_index(host.sys, host.repo, "/var/cache/gpuprov/repos", kMaxAge);
    EXPECT_FALSE(r.index);
    EXPECT_NE(r.error.find("does not match the size and SHA-256"), std::string::npos) << r.error;
}

TEST(RpmIndexLoader, TheVerifiedCopyIsReusedWhileFreshAndRecheckedEachTime) {
    RpmServed host(valid_status());
    const std::string cache = "/var/cache/gpuprov/repos";
    ASSERT_TRUE(load_rpm_package_index(host.sys, host.repo, cache, kMaxAge).index);
    EXPECT_EQ(host.sys.file(cache + "/cuda/repomd.xml"), read_fixture("repo/rpm/repomd.xml"));
    EXPECT_EQ(host.sys.file(cache + "/cuda/Packages"), read_fixture(kPrimary));
    EXPECT_EQ(cached_inrelease(host.sys, host.repo, cache), read_fixture("repo/rpm/repomd.xml"));
    const auto fetches = host.sys.urls_fetched.size();
    host.gpgv_argv.clear();

    const auto again = load_rpm_package_index(host.sys, host.repo, cache, kMaxAge);
    ASSERT_TRUE(again.index) << again.error;
    EXPECT_TRUE(again.from_cache);
    EXPECT_EQ(host.sys.urls_fetched.size(), fetches); // nothing downloaded
    EXPECT_FALSE(host.gpgv_argv.empty());             // but the signature checked again
    EXPECT_EQ(again.index->newest("nvidia-open")->version, "3:580.95.05-1.el9");

    // A cached primary that no longer matches repomd.xml is not used: fetched anew.
    auto bad = read_fixture(kPrimary);
    bad[100] = static_cast<char>(bad[100] ^ 1);
    host.sys.add_file(cache + "/cuda/Packages", bad);
    const auto refetched = load_rpm_package_index(host.sys, host.repo, cache, kMaxAge);
    ASSERT_TRUE(refetched.index) << refetched.error;
    EXPECT_FALSE(refetched.from_cache);
    EXPECT_GT(host.sys.urls_fetched.size(), fetches);

    // Past max_age: fetched anew as well.
    const auto before = host.sys.urls_fetched.size();
    host.sys.sleep(kMaxAge);
    EXPECT_FALSE(load_rpm_package_index(host.sys, host.repo, cache, kMaxAge).from_cache);
    EXPECT_GT(host.sys.urls_fetched.size(), before);
}

TEST(RpmIndexLoader, KeyWithAnotherFingerprintIsRefusedBeforeAnythingElse) {
    RpmServed host(valid_status());
    host.repo.key_fingerprint = std::string(trim(read_fixture("repo/other-key.fpr")));
    const auto r = load_rpm_package_index(host.sys, host.repo, "/var/cache/gpuprov/repos", kMaxAge);
    EXPECT_FALSE(r.index);
    EXPECT_NE(r.error.find("profile pins"), std::string::npos) << r.error;
    EXPECT_TRUE(host.gpgv_argv.empty());
}

} // namespace
} // namespace gpuprov
