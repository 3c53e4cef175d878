#include "fake_system.hpp"

#include <gpuprov/repo.hpp>
#include <gtest/gtest.h>

using namespace gpuprov;
using gpuprov::testing::read_fixture;

TEST(Release, EntryForPackagesFromSignedInRelease) {
    const auto e = release_entry(read_fixture("repo/InRelease"), "Packages");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->size, read_fixture("repo/Packages").size());
    // Not the Packages.gz line above it, and not the MD5Sum section's line for Packages.
    EXPECT_EQ(e->sha256.size(), 64u);
    EXPECT_NE(e->sha256, std::string(64, '0'));
    EXPECT_EQ(e->sha256.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(Release, EntryFromPlainReleaseAndUppercaseHex) {
    const std::string release = "Origin: x\nSHA256:\n ABCDEF0123456789ABCDEF0123456789ABCDEF01234"
                                "56789ABCDEF0123456789 42 Packages\nSHA512:\n ff 1 Packages\n";
    const auto e = release_entry(release, "Packages");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->size, 42u);
    EXPECT_EQ(e->sha256, "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
    EXPECT_FALSE(release_entry(release, "Packages.xz"));
}

TEST(Release, FileListedOnlyInOtherSectionsIsNotFound) {
    const std::string release = "MD5Sum:\n 0123456789abcdef0123456789abcdef 3 Packages\n";
    EXPECT_FALSE(release_entry(release, "Packages"));
}

TEST(ClearSigned, TextIsTheSignedPartWithDashEscapingUndone) {
    const std::string msg = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nOrigin: x\n"
                            "- -dash line\n-----BEGIN PGP SIGNATURE-----\n\niQE=\n"
                            "-----END PGP SIGNATURE-----\n";
    EXPECT_EQ(clearsigned_text(msg), "Origin: x\n-dash line\n");
}

TEST(ClearSigned, FixtureInReleaseStartsWithItsFields) {
    const auto text = clearsigned_text(read_fixture("repo/InRelease"));
    ASSERT_TRUE(text);
    EXPECT_EQ(text->rfind("Origin: gpuprov test\n", 0), 0u);
    EXPECT_EQ(text->find("PGP"), std::string::npos);
}

TEST(ClearSigned, UnsignedDataAroundTheMessageIsRefused) {
    const auto in = read_fixture("repo/InRelease");
    EXPECT_FALSE(clearsigned_text("SHA256:\n " + std::string(64, 'a') + " 1 Packages\n" + in));
    EXPECT_FALSE(clearsigned_text(in + "SHA256:\n " + std::string(64, 'a') + " 1 Packages\n"));
    // And release_entry does not fall back to reading such a file as plain text.
    EXPECT_FALSE(
        release_entry(in + "SHA256:\n " + std::string(64, 'a') + " 1 Packages\n", "Packages"));
}

TEST(ClearSigned, MissingSignatureOrNestedArmorIsRefused) {
    EXPECT_FALSE(
        clearsigned_text("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nOrigin: x\n"));
    EXPECT_FALSE(clearsigned_text("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
                                  "-----BEGIN PGP SIGNED MESSAGE-----\nOrigin: x\n"
                                  "-----BEGIN PGP SIGNATURE-----\n\niQE=\n"
                                  "-----END PGP SIGNATURE-----\n"));
    EXPECT_FALSE(clearsigned_text("Origin: x\n"));
}

TEST(ReleaseDates, ParsedLikeAptWritesThem) {
    using namespace std::chrono;
    const auto t = parse_release_date("Tue, 01 Dec 2026 00:00:00 UTC");
    ASSERT_TRUE(t);
    EXPECT_EQ(*t, sys_days{year{2026} / 12 / 1});
    EXPECT_EQ(parse_release_date("01 Dec 2026 00:00:00 GMT"), t);
    EXPECT_EQ(parse_release_date("Tue, 01 Dec 2026 01:30:00 +0130"), t);
    EXPECT_EQ(parse_release_date("Mon, 30 Nov 2026 22:00:00 -0200"), t);
    for (const char* bad : {"", "yesterday", "Tue, 01 Foo 2026 00:00:00 UTC",
                            "Tue, 01 Dec 2026 25:00:00 UTC", "Tue, 01 Dec 2026 00:00:00 CET",
                            "Tue, 01 Dec 2026 00:00 UTC", "Tue, 01 Dec 2026 00:00:00 +01x0"}) {
        EXPECT_FALSE(parse_release_date(bad)) << bad;
    }
}

TEST(ReleaseDates, ExpiredAndFutureReleasesAreRefusedWithAptsWords) {
    using namespace std::chrono;
    const sys_seconds now = sys_days{year{2026} / 12 / 1};
    const std::string valid = "Date: Tue, 01 Dec 2026 00:00:00 UTC\n"
                              "Valid-Until: Tue, 08 Dec 2026 00:00:00 UTC\nSHA256:\n x 1 P\n";
    EXPECT_EQ(release_date_problem(valid, now), "");
    EXPECT_NE(release_date_problem(valid, now + days(8))
                  .find("is expired (Valid-Until Tue, 08 "
                        "Dec 2026 00:00:00 UTC, 1d 0h ago)"),
              std::string::npos);
    // A Date ahead of the clock: within apt's 10 s it passes, beyond it is "not valid yet".
    EXPECT_EQ(release_date_problem(valid, now - seconds(10)), "");
    EXPECT_NE(release_date_problem(valid, now - seconds(11)).find("is not valid yet"),
              std::string::npos);
    EXPECT_NE(release_date_problem("Date: soon\n", now).find("unreadable Date 'soon'"),
              std::string::npos);
    // Both fields are optional (NVIDIA's repositories carry no Valid-Until); only the first
    // paragraph counts.
    EXPECT_EQ(
        release_date_problem("Origin: x\n\nValid-Until: Thu, 01 Jan 1970 00:00:00 UTC\n", now), "");
}

TEST(ReleaseDates, DateOfAClearSignedInReleaseOrAPlainRelease) {
    using namespace std::chrono;
    const auto want = sys_days{year{2026} / 12 / 1};
    EXPECT_EQ(release_date(gpuprov::testing::read_fixture("repo/InRelease")), want);
    EXPECT_EQ(release_date("Origin: x\nDate: Tue, 01 Dec 2026 00:00:00 UTC\n"), want);
    EXPECT_FALSE(release_date("Origin: x\n"));
    EXPECT_FALSE(release_date("Date: 2026-12-01\n"));
}
